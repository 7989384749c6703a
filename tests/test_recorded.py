"""Replays real recorded output (tests/data/recorded/, made by tests/cuda/record.py) through the matcher.

Each recording is the whole merged output of one reproducer run on a named device with named versions; its
metadata names the entry (or family) that must rank first, or ``none`` for a look-alike that must get no dtype
diagnosis. No torch or GPU is needed to replay. ``cpu-*`` come from tests/cuda/record.py; ``h100-*`` are real H100
runs imported with their manifest's true causes by tests/cuda/import_manifest.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from dtypefix.matcher import explain

RECORDED = Path(__file__).parent / "data" / "recorded"
LOGS = sorted(RECORDED.glob("*.log"))
KEYS = {"name", "expected", "wording", "device", "versions", "command", "exit_code"}


def _meta(log: Path) -> dict[str, object]:
    meta = yaml.safe_load(log.with_suffix(".yaml").read_text(encoding="utf-8"))
    assert isinstance(meta, dict)
    return meta


def test_every_recording_has_its_metadata() -> None:
    assert LOGS, "no recordings"
    for log in LOGS:
        meta = _meta(log)
        assert set(meta) >= KEYS, f"{log.name}: metadata lacks {sorted(KEYS - set(meta))}"
        assert meta["name"] == log.stem
        assert meta["device"] in {"cpu", "cuda"}
        if meta["device"] == "cuda":
            assert {"gpu", "cuda"} <= set(meta), f"{log.name}: a GPU recording names its GPU and CUDA version"
    assert not set(RECORDED.glob("*.yaml")) - {log.with_suffix(".yaml") for log in LOGS}, "metadata without a log"


def _case(log: Path) -> object:
    """A recording whose right answer is not reached yet is a strict xfail that names why, never a skip."""
    reason = _meta(log).get("xfail")
    marks = [pytest.mark.xfail(strict=True, reason=str(reason))] if reason else []
    return pytest.param(log, id=log.stem, marks=marks)


@pytest.mark.parametrize("log", [_case(log) for log in LOGS])
def test_recording_gets_the_expected_answer(log: Path, catalog) -> None:
    meta = _meta(log)
    text = log.read_text(encoding="utf-8")
    assert re.search(str(meta["wording"]), text), f"{log.name}: the recorded wording is not in the log"
    matches = explain(text, catalog=catalog).matches
    expected = str(meta["expected"])
    if expected == "none":
        assert not matches, f"{log.name}: look-alike diagnosed as {matches[0].entry.id}"
        return
    assert matches, f"{log.name}: nothing matched, expected {expected}"
    best = matches[0].entry
    assert best.id in expected.split("|") or best.family in expected.split("|"), (
        f"{log.name}: {best.id} ({best.family}) ranked first, expected {expected}"
    )
