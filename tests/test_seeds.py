"""The five founding cases: with the input the write-up describes, the seed's cause comes first, with its fix, in
both languages; with the error line alone, the message-family explanation comes first and asks for the deciding
input."""

from __future__ import annotations

from pathlib import Path

import pytest

from dtypefix.cli.markdown import format_report
from dtypefix.matcher import explain
from dtypefix.matcher.catalog import builtin_kb_dir

KB = builtin_kb_dir()
SEEDS = Path(__file__).parent / "data" / "seeds"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


CASES = {
    "000-zeropp-bf16": (
        "DTF200",
        [KB / "deepspeed/zeropp-quantized-weights-under-bf16/liger-640.log"],
        [KB / "deepspeed/zeropp-quantized-weights-under-bf16/liger-640.ds.json"],
        [],
    ),
    "001-liger-flce-bf16": (
        "DTF400",
        [SEEDS / "001-liger-train.log"],
        [],
        [SEEDS / "001-liger.freeze.txt"],
    ),
    "002-accelerate-fp8-deepspeed": (
        "DTF250",
        [KB / "accelerate/deepspeed-fp8-not-applied/34027-report.log"],
        [KB / "accelerate/deepspeed-fp8-not-applied/34027-acc_cfg.yaml"],
        [],
    ),
    "003-llama-recipes-mixed-gpus": (
        "DTF450",
        [KB / "devices/int8-lora-on-pre-turing-gpu-in-mixed-box/llama-cookbook-715.log", SEEDS / "003-env.txt"],
        [],
        [],
    ),
    "004-axolotl-zero3-offload": (
        "DTF201",
        [KB / "deepspeed/zero3-offload-clip-scale-on-gpu/axolotl-1698.log"],
        [SEEDS / "004-zero3_bf16_cpuoffload_all.json", SEEDS / "004-axolotl.yml"],
        [SEEDS / "004-freeze.txt"],
    ),
    "004-follow-up-bnb-8bit-optimizer": (
        "DTF205",
        [KB / "deepspeed/bnb-optimizer-step-on-cpu-offloaded-state/bnb-89-fsdp-cpu-offload.log"],
        [SEEDS / "004-zero3_bf16_cpuoffload_all.json", SEEDS / "004-axolotl.yml"],
        [SEEDS / "004-freeze.txt"],
    ),
}


def _explain(logs: list[Path], configs: list[Path], freeze: list[Path]):
    return explain(
        "\n".join(_read(p) for p in logs),
        configs=[(p.name, _read(p)) for p in configs],
        freeze=[_read(p) for p in freeze],
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_seed_cause_comes_first_with_its_fix_in_both_languages(case: str) -> None:
    expected, logs, configs, freeze = CASES[case]
    report = _explain(logs, configs, freeze)
    assert report.matches, case
    best = report.matches[0]
    assert best.entry.id == expected, [(m.entry.id, m.score) for m in report.matches[:3]]
    assert best.confidence in ("high", "medium")
    for lang in ("en", "zh"):
        text = format_report(report, lang, top=1)
        assert best.entry.title.get(lang) in text
        assert best.entry.fix[0].get(lang).splitlines()[0][:40] in text


@pytest.mark.parametrize(
    ("line", "family"),
    [
        ("RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16", "DTF001"),
        ("RuntimeError: mat1 and mat2 must have the same dtype, but got BFloat16 and Float", "DTF001"),
        ("RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != float", "DTF001"),
        (
            "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cpu!",
            "DTF003",
        ),
    ],
)
def test_error_line_alone_gives_the_family_and_asks_for_the_deciding_input(line: str, family: str) -> None:
    report = explain(line)
    assert report.matches[0].entry.id == family
    assert report.deciders, "the output must say which input would decide"
    keys = {d.key for d in report.deciders}
    assert keys & {"deepspeed-config", "freeze", "gpu", "traceback", "log", "launch"}
