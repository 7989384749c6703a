"""`dtypefix check`: known-bad configurations are flagged before anything runs; a clean one is quiet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KB = ROOT / "kb"
SEEDS = ROOT / "tests" / "data" / "seeds"


def _ids(cli, *args: str) -> tuple[int, list[str]]:
    result = cli("check", *args, "--format", "json")
    return result.code, [m["id"] for m in json.loads(result.out)["matches"]]


def test_zeropp_quantized_weights_under_bf16(cli) -> None:
    code, ids = _ids(
        cli,
        "--config",
        str(KB / "deepspeed/zeropp-quantized-weights-under-bf16/liger-640.ds.json"),
        "--flags",
        "--bf16 True",
    )
    assert code == 1 and ids[0] == "DTF200"


def test_accelerate_fp8_with_deepspeed(cli, tmp_path) -> None:
    config = str(KB / "accelerate/deepspeed-fp8-not-applied/34027-acc_cfg.yaml")
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("accelerate==1.0.1\n", encoding="utf-8")
    code, ids = _ids(cli, "--config", config, "--freeze", str(freeze))
    assert code == 1 and "DTF250" in ids


def test_a_version_not_given_is_not_a_finding(cli) -> None:
    """The bug lives in some accelerate releases: without the version, check says it would apply, and exits 0."""
    result = cli(
        "check", "--config", str(KB / "accelerate/deepspeed-fp8-not-applied/34027-acc_cfg.yaml"), "--format", "json"
    )
    data = json.loads(result.out)
    assert result.code == 0 and data["matches"] == []
    assert "DTF250" in [m["id"] for m in data["conditional"]]
    assert any(d["key"] == "freeze" for d in data["deciders"])


def test_zero3_cpu_offload_with_paged_8bit_optimizer_on_affected_versions(cli) -> None:
    code, ids = _ids(
        cli,
        "--config",
        str(SEEDS / "004-zero3_bf16_cpuoffload_all.json"),
        "--config",
        str(SEEDS / "004-axolotl.yml"),
        "--freeze",
        str(SEEDS / "004-freeze.txt"),
    )
    assert code == 1 and {"DTF201", "DTF205"} <= set(ids)


def test_clean_bf16_zero3_config_is_quiet(cli) -> None:
    result = cli(
        "check", "--config", str(ROOT / "tests/data/clean-zero3-bf16.json"), "--flags", "--bf16 True", "--format", "md"
    )
    assert result.code == 0, result.out
    assert "no known-bad settings" in result.out


def test_check_needs_something_to_check(cli) -> None:
    result = cli("check")
    assert result.code == 2 and "nothing to check" in result.err


def test_broken_config_files_are_reported_with_file_line_and_problem(cli, tmp_path) -> None:
    broken_json = tmp_path / "ds.json"
    broken_json.write_text('{"zero_optimization": {"stage": 3,}\n  "bf16": {"enabled": true}\n}\n', encoding="utf-8")
    broken_yaml = tmp_path / "axolotl.yml"
    broken_yaml.write_text("bf16: true\nbase_model: x\n  adapter: lora\n", encoding="utf-8")
    for path, line in ((broken_json, 1), (broken_yaml, 3)):
        result = cli("check", "--config", str(path))
        assert result.code == 2, result.out
        assert f"{path}:{line}: " in result.err and len(result.err.strip().splitlines()) == 1


@pytest.mark.parametrize("bf16_key", ["bf16", "bfloat16"])
def test_fp16_and_bf16_both_enabled_is_caught(cli, tmp_path, bf16_key) -> None:
    """DeepSpeed refuses this at start-up ("bfloat16 and fp16 modes cannot be simultaneously enabled"); check
    catches it before, with either spelling DeepSpeed reads."""
    ds = tmp_path / "ds.json"
    ds.write_text(
        json.dumps({"fp16": {"enabled": True}, bf16_key: {"enabled": True}, "zero_optimization": {"stage": 2}}),
        encoding="utf-8",
    )
    code, ids = _ids(cli, "--config", str(ds))
    assert code == 1 and ids[0] == "DTF216"
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps({"fp16": {"enabled": False}, bf16_key: {"enabled": True}}), encoding="utf-8")
    assert _ids(cli, "--config", str(clean)) == (0, [])


def test_the_bf16_fp16_assert_is_explained() -> None:
    from dtypefix.matcher import explain

    report = explain("AssertionError: bfloat16 and fp16 modes cannot be simultaneously enabled\n")
    assert report.matches[0].entry.id == "DTF216"
