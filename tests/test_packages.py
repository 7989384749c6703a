"""Package versions from every listing format people paste."""

from __future__ import annotations

import pytest

from dtypefix.matcher.packages import parse_versions

PIP_FREEZE = """accelerate==0.34.2
bitsandbytes==0.43.1
deepspeed==0.14.2
liger_kernel==0.5.2
torch==2.4.0+cu121
transformers @ git+https://github.com/huggingface/transformers@abc123
"""

PIP_LIST = """Package                  Version
------------------------ ------------
accelerate               0.34.2
flash-attn               2.6.3
peft                     0.12.0
"""

CONDA_LIST = """# packages in environment at /home/user/miniconda3/envs/train:
#
# Name                    Version                   Build  Channel
pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch
transformers              4.36.2                   pypi_0    pypi
"""

COLLECT_ENV = """PyTorch version: 2.3.1+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
OS: Ubuntu 22.04.4 LTS (x86_64)
Python version: 3.10.14 (main, Mar 21 2024, 16:24:04) [GCC 11.2.0] (64-bit runtime)
GPU models and configuration:
GPU 0: NVIDIA A100-SXM4-80GB
Versions of relevant libraries:
[pip3] numpy==1.26.4
[pip3] torch==2.3.1
[conda] torch                     2.3.1                    pypi_0    pypi
"""

ACCELERATE_ENV = """- `Accelerate` version: 0.30.1
- Platform: Linux-5.15.0-105-generic-x86_64-with-glibc2.35
- Python version: 3.10.14
- Numpy version: 1.26.4
- PyTorch version (GPU?): 2.3.0+cu121 (True)
- GPU type: NVIDIA H100 80GB HBM3
"""

TRANSFORMERS_ENV = """- `transformers` version: 4.41.2
- Platform: Linux-5.4.0-x86_64-with-glibc2.31
- Python version: 3.10.12
- Huggingface_hub version: 0.23.4
- Safetensors version: 0.4.3
- Accelerate version: 0.31.0
- PyTorch version (GPU?): 2.3.1+cu121 (True)
"""

DS_REPORT = """DeepSpeed general environment info:
torch install path ............... ['/home/user/.venv/lib/python3.10/site-packages/torch']
torch version .................... 2.1.2+cu121
deepspeed install path ........... ['/home/user/.venv/lib/python3.10/site-packages/deepspeed']
deepspeed info ................... 0.12.6, unknown, unknown
torch cuda version ............... 12.1
nvcc version ..................... 12.1
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PIP_FREEZE, {"accelerate": "0.34.2", "deepspeed": "0.14.2", "liger-kernel": "0.5.2", "torch": "2.4.0+cu121"}),
        (PIP_LIST, {"accelerate": "0.34.2", "flash-attn": "2.6.3", "peft": "0.12.0"}),
        (CONDA_LIST, {"torch": "2.1.0", "transformers": "4.36.2"}),
        (COLLECT_ENV, {"torch": "2.3.1+cu121", "numpy": "1.26.4"}),
        (ACCELERATE_ENV, {"accelerate": "0.30.1", "torch": "2.3.0+cu121", "numpy": "1.26.4"}),
        (
            TRANSFORMERS_ENV,
            {"transformers": "4.41.2", "accelerate": "0.31.0", "torch": "2.3.1+cu121", "safetensors": "0.4.3"},
        ),
        (DS_REPORT, {"torch": "2.1.2+cu121", "deepspeed": "0.12.6"}),
    ],
    ids=["pip-freeze", "pip-list", "conda-list", "collect-env", "accelerate-env", "transformers-env", "ds-report"],
)
def test_listing_formats(text: str, expected: dict[str, str]) -> None:
    found = {name: v.version for name, v in parse_versions(text).items()}
    for name, version in expected.items():
        assert found.get(name) == version, (name, found)


def test_programs_are_not_packages() -> None:
    found = parse_versions(COLLECT_ENV + DS_REPORT + TRANSFORMERS_ENV)
    assert "python" not in found and "cuda" not in found and "nvcc" not in found


def test_versions_inside_prose() -> None:
    found = parse_versions("I run `deepspeed==0.14.0` with transformers==4.40.1, and torch 2.1 (cu121).")
    assert found["deepspeed"].version == "0.14.0" and found["transformers"].version == "4.40.1"


def test_the_deepspeed_banner_gives_its_version() -> None:
    """Every DeepSpeed run logs its version at start-up; a log without a freeze still says which release ran."""
    line = (
        "[2022-12-01 12:00:00,000] [INFO] [logging.py:68:log_dist] [Rank 0] "
        "DeepSpeed info: version=0.7.6, git-hash=unknown, git-branch=unknown"
    )
    found = parse_versions(line)["deepspeed"]
    assert (found.version, found.origin) == ("0.7.6", "banner")


# The banner Unsloth printed when loading a model (unslothai/unsloth#1856, a user's log, trimmed to the banner).
_UNSLOTH_BANNER = r"""==((====))==  Unsloth 2025.3.19: Fast Qwen2 patching. Transformers: 4.50.3. vLLM: 0.8.3.dev162+g8af5a5c4.d20250401.cu128.
   \\   /|    NVIDIA GeForce RTX 5090. Num GPUs = 1. Max memory: 31.367 GB. Platform: Linux.
O^O/ \_/ \    Torch: 2.8.0.dev20250331+cu128. CUDA: 12.0. CUDA Toolkit: 12.8. Triton: 3.3.0
\        /    Bfloat16 = TRUE. FA [Xformers = None. FA2 = False]
 "-____-"     Free license: http://github.com/unslothai/unsloth
"""


def test_the_unsloth_banner_gives_its_versions() -> None:
    found = parse_versions(_UNSLOTH_BANNER)
    assert {name: (p.version, p.origin) for name, p in found.items()} == {
        "unsloth": ("2025.3.19", "banner"),
        "transformers": ("4.50.3", "banner"),
        "vllm": ("0.8.3.dev162+g8af5a5c4.d20250401.cu128", "banner"),
        "torch": ("2.8.0.dev20250331+cu128", "banner"),
    }


# `diffusers-cli env` as pasted in huggingface/diffusers#11417 (trimmed): an emoji stands before the first name.
DIFFUSERS_ENV = """- 🤗 Diffusers version: 0.33.0
- Platform: Linux-5.15.0-78-generic-x86_64-with-glibc2.35
- Python version: 3.10.12
- PyTorch version (GPU?): 2.4.0+cu121 (True)
- Transformers version: 4.44.1
- Accelerate version: 0.32.1
"""

# A "name: version" list as a Hugging Face model card's "Framework Versions" prints it (the shape people also type
# into a bug template's System Info), then a markdown table row.
BARE_LIST = """### Framework Versions
- Python: 3.11.5
- Sentence Transformers: 3.3.0
- Transformers: 4.46.2
- PyTorch: 2.5.1+cpu
- Accelerate: 1.1.1
| peft | 0.13.2 |
"""


def test_the_diffusers_env_emoji_label() -> None:
    found = {name: v.version for name, v in parse_versions(DIFFUSERS_ENV).items()}
    assert found["diffusers"] == "0.33.0" and found["transformers"] == "4.44.1" and found["torch"] == "2.4.0+cu121"


def test_a_bare_name_version_list_is_read_for_the_training_stack() -> None:
    found = {name: v.version for name, v in parse_versions(BARE_LIST).items()}
    assert found == {"transformers": "4.46.2", "torch": "2.5.1+cpu", "accelerate": "1.1.1", "peft": "0.13.2"}


def test_a_bare_list_of_config_keys_or_a_sentence_is_not_a_version() -> None:
    text = "- num_processes: 8\n- gradient_clipping: 1.0\nstep 100 loss 2.34\nfixed in torch 2.4.0 I think\n"
    assert parse_versions(text) == {}
