"""Launch flags and hardware hints."""

from __future__ import annotations

from dtypefix.matcher.flags import parse_flags
from dtypefix.matcher.hardware import Gpu, compute_capability, gpus, parse_hardware, required_capability, sm


def test_launch_lines() -> None:
    text = """+ CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 src/train.py --bf16 True --deepspeed ds_z3.json \\
--optim=paged_adamw_8bit --gradient_checkpointing
accelerate launch --mixed_precision fp8 --config_file fsdp.yaml train.py"""
    launch = parse_flags(text)
    assert launch.flags["bf16"] is True
    assert launch.flags["deepspeed"] == "ds_z3.json"
    assert launch.flags["optim"] == "paged_adamw_8bit"
    assert launch.flags["gradient_checkpointing"] is True
    assert launch.flags["mixed_precision"] == "fp8"
    assert launch.env == {"CUDA_VISIBLE_DEVICES": "0,1"}
    assert launch.files == ("ds_z3.json", "fsdp.yaml")


def test_prose_with_dashes_is_not_a_launch_line() -> None:
    assert parse_flags("I tried --bf16 and it broke").flags == {}


def test_gpu_names_and_capabilities() -> None:
    text = """GPU models and configuration:
GPU 0: NVIDIA TITAN RTX
GPU 1: NVIDIA GeForce GTX 1080 Ti
|   0  Tesla V100-SXM2-16GB           On   | 00000000:00:1E.0 Off |                    0 |
UserWarning: Found GPU0 Tesla K80 which is of cuda capability 3.7.
export CUDA_DEVICE_ORDER=PCI_BUS_ID
CUDA_VISIBLE_DEVICES=1 python train.py
"""
    hw = parse_hardware(text)
    assert hw.gpu_names == ("NVIDIA TITAN RTX", "NVIDIA GeForce GTX 1080 Ti", "Tesla V100-SXM2-16GB", "Tesla K80")
    assert min(hw.capabilities) == 3.7 and 7.5 in hw.capabilities
    assert hw.cuda_device_order == "PCI_BUS_ID" and hw.cuda_visible_devices == "1"


def test_capability_table() -> None:
    assert compute_capability("NVIDIA A100-SXM4-80GB") == 8.0
    assert compute_capability("NVIDIA GeForce RTX 4090") == 8.9
    assert compute_capability("Tesla T4") == 7.5
    assert compute_capability("NVIDIA H100 80GB HBM3") == 9.0
    assert compute_capability("Some Future Card") is None


def test_windows_and_mps() -> None:
    assert parse_hardware('File "C:\\Users\\me\\train.py"').os == "windows"
    assert parse_hardware("tensor on device mps:0").mps


def test_windows_is_read_from_backslash_paths_and_platform_tags() -> None:
    """A paste that starts below the drive letter, a lower-case drive, a wheel tag or the interpreter banner."""
    for text in (
        'File ".conda\\Lib\\site-packages\\orb_models\\gns.py", line 260',
        'File "e:\\pytorch-imagecaptioning\\captioning\\loss_wrapper.py", line 47',
        "torch-2.1.0-cp310-cp310-win_amd64.whl",
        "[MSC v.1929 64 bit (AMD64)] on win32",
        "Platform: Windows-10-10.0.19045-SP0",
        'File ".\\02_dqn_pong.py", line 189, in <module>',
    ):
        assert parse_hardware(text).os == "windows", text
    # An escape sequence printed in a code line is no drive path.
    assert parse_hardware('File "/home/u/a.py", line 3\n    print("a:\\tb\\n")').os == "linux"
    # Debian's and Ubuntu's Python install packages under dist-packages.
    assert parse_hardware('File "/usr/local/lib/python3.10/dist-packages/torch/x.py"').os == "linux"


def test_workstation_cards_are_not_read_as_the_gaming_card_with_the_same_digits() -> None:
    """Quadro RTX 5000 is Turing and RTX 5000 Ada is Ada: neither is an RTX 5090-class Blackwell card."""
    assert compute_capability("Quadro RTX 5000") == 7.5
    assert compute_capability("NVIDIA RTX 5000 Ada Generation") == 8.9
    assert compute_capability("Quadro RTX 4000") == 7.5
    assert compute_capability("NVIDIA GeForce RTX 5090") == 12.0
    assert compute_capability("NVIDIA GeForce RTX 3080Ti") == 8.6
    assert compute_capability("Tesla V100S-PCIE-32GB") == 7.0


def test_a_requirement_line_gives_only_the_machines_own_capability() -> None:
    """vLLM states the requirement and the machine in one line: only "Current" / "Your ... has" is the machine."""
    awq = "The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70."
    bf16 = "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5."
    assert parse_hardware(awq).capabilities == (7.0,)
    assert set(parse_hardware(bf16).capabilities) == {7.5}  # printed, and the table's for the card it names
    assert parse_hardware(bf16).stated == (7.5,)
    assert parse_hardware("FP8 needs compute capability 8.9 or higher").capabilities == ()


def test_names_the_table_tells_apart() -> None:
    """NVIDIA's list gives one capability per name; names shared by two cards are told apart or left unknown."""
    assert compute_capability("GeForce GTX TITAN X") == 5.2  # Maxwell
    assert compute_capability("NVIDIA TITAN X (Pascal)") == 6.1
    assert compute_capability("NVIDIA TITAN Xp") == 6.1
    assert compute_capability("GeForce GTX 960M") == 5.0
    assert compute_capability("GeForce GTX 960") == 5.2
    assert compute_capability("GeForce GTX 970M") == 5.2
    assert compute_capability("Jetson T4000") == 11.0  # no T4
    assert compute_capability("NVIDIA B300") == 10.3
    assert compute_capability("NVIDIA RTX PRO 6000 Blackwell Workstation Edition") == 12.0
    assert compute_capability("NVIDIA RTX 4000 SFF Ada Generation") == 8.9
    assert compute_capability("NVIDIA A10G") == 8.6
    assert compute_capability("NVIDIA GeForce GTX TITAN Black") is None  # not in the table: unknown, not a guess


def test_lines_that_name_the_gpu() -> None:
    """Real output that names the machine's GPU: vLLM's refusal, sglang's check_env, Triton's check in
    torch.compile, torch's warning for a build without the GPU's kernels, nvidia-smi's query, unsloth's and
    YOLOv5's banners, a script's own print."""
    lines = {
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla "
        "V100-PCIE-32GB GPU has compute capability 7.0.": ("Tesla V100-PCIE-32GB", 7.0),
        "GPU 0,1: NVIDIA A10\nGPU 0,1 Compute Capability: 8.6": ("NVIDIA A10", 8.6),
        "RuntimeError: Found NVIDIA GeForce GTX 1070 which is too old to be supported by the triton GPU compiler, "
        "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is "
        "of CUDA capability 6.1": ("NVIDIA GeForce GTX 1070", 6.1),
        "NVIDIA H800 with CUDA capability sm_90 is not compatible with the current PyTorch installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.": (
            "NVIDIA H800",
            9.0,
        ),
        "/usr/lib/python3.10/site-packages/torch/cuda/__init__.py:145: UserWarning: NVIDIA GeForce RTX A5000 with CUDA "
        "capability sm_86 is not compatible with the current PyTorch installation. The current PyTorch install "
        "supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.": ("NVIDIA GeForce RTX A5000", 8.6),
        "name, compute_cap\nNVIDIA A800 80GB PCIe, 8.0\nNVIDIA A800 80GB PCIe, 8.0": ("NVIDIA A800 80GB PCIe", 8.0),
        "   \\\\   /|    GPU: NVIDIA A100-SXM4-40GB. Max memory: 39.564 GB. Platform = Linux.": (
            "NVIDIA A100-SXM4-40GB",
            8.0,
        ),
        "YOLOv5 🚀 v6.1-177-gd059d1d torch 1.13.0 CUDA:0 (NVIDIA A100-PCIE-40GB, 40354MiB)": (
            "NVIDIA A100-PCIE-40GB",
            8.0,
        ),
        "Using device: NVIDIA GeForce RTX 3090": ("NVIDIA GeForce RTX 3090", 8.6),
        "torch.cuda.get_device_name(0) = Tesla T4": ("Tesla T4", 7.5),
        "Running on NVIDIA L4": ("NVIDIA L4", 8.9),
    }
    for text, (name, capability) in lines.items():
        assert gpus(parse_hardware(text)) == (Gpu(name, capability),), text
    # The code line of Triton's check, in a traceback, names no GPU; an example in a requirement is no GPU of the
    # machine.
    assert (
        parse_hardware('    f"Found {device_props.name} which is too old to be supported by the triton GPU').gpu_names
        == ()
    )
    example = (
        "FP8 models require a GPU with Compute Capability 8.9 or higher (e.g., RTX 4090). Your GPU's capability is 8.6."
    )
    assert gpus(parse_hardware(example)) == (Gpu("", 8.6),)


def test_the_capability_a_machine_prints_in_a_requirement() -> None:
    """accelerate, transformers and axolotl print the machine's capability after the one they require."""
    for text, capability in (
        ("The current device has compute capability of (8, 0) which is insufficient for FP8 mixed precision training "
         "(requires a GPU Hopper/Ada Lovelace or higher, compute capability of 8.9 or higher).", 8.0),
        ("FP8 quantized models is only supported on GPUs with compute capability >= 8.9 (e.g 4090/H100), actual = `8.0`", 8.0),
        ("attn_implementation=fp8 requires compute capability sm_90 or higher (Hopper+). Detected 'sm_89'.", 8.9),
    ):  # fmt: skip
        assert parse_hardware(text).stated == (capability,), text


def test_a_mixed_machine_names_every_model() -> None:
    """Several models: each with the table's capability, never one picked; one model named twice is one."""
    mixed = parse_hardware(
        "GPU 0: NVIDIA TITAN RTX\nGPU 1: NVIDIA GeForce GTX 1080 Ti\nHighest compute capability: 7.5"
    )
    assert gpus(mixed) == (Gpu("NVIDIA TITAN RTX", 7.5), Gpu("NVIDIA GeForce GTX 1080 Ti", 6.1))
    same = parse_hardware("- GPU type: Tesla V100\nYour Tesla V100-SXM2-32GB GPU has compute capability 7.0.")
    assert gpus(same) == (Gpu("Tesla V100-SXM2-32GB", 7.0),)
    # an A10 is no A100, an RTX 3090 no RTX 3090 Ti
    for a, b in (("NVIDIA A10", "NVIDIA A100-SXM4-80GB"), ("NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090 Ti")):
        assert len(gpus(parse_hardware(f"GPU 0: {a}\nGPU 1: {b}"))) == 2
    # a printed capability the table contradicts for the one model named: neither is shown
    assert gpus(parse_hardware("GPU 0: NVIDIA GeForce RTX 4090\nCurrent capability: 80")) == (
        Gpu("NVIDIA GeForce RTX 4090", None),
    )
    # two capabilities printed and no name: nothing to show as the machine's
    assert gpus(parse_hardware("compute capability 7.5\ncompute capability 8.6")) == ()


def test_required_capability() -> None:
    """What a check requires, in each way the census rows write it: the lowest it accepts."""
    for text, capability in (("8.0", 8.0), ("9.x", 9.0), (">= 9.0 or 8.9", 8.9), ("≥8.9", 8.9), ("(8, 0)", 8.0),
                             ("sm_90", 9.0), ("89", 8.9), ("Ampere", 8.0), ("sm_120", 12.0), ("unstated", None)):  # fmt: skip
        assert required_capability(text) == capability, text
    assert (sm(7.5), sm(12.0), sm(10.3)) == ("sm_75", "sm_120", "sm_103")
