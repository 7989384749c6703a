"""Launch flags and hardware hints."""

from __future__ import annotations

from dtypefix.matcher.flags import parse_flags
from dtypefix.matcher.hardware import compute_capability, parse_hardware


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
    assert parse_hardware(bf16).capabilities == (7.5,)
    assert parse_hardware("FP8 needs compute capability 8.9 or higher").capabilities == ()
