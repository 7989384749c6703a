"""Reproducers run for real: the library prints the wording and the intended entry ranks first.

``cpu`` cases need only torch (marked ``torch``); ``cuda`` cases need one GPU (marked ``cuda``) and skip with their
reason on CPU-only machines and in CI. Recordings of both are replayed by tests/test_recorded.py.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cases import CASES, Case
from harness import missing, run

from dtypefix.matcher import explain


@functools.cache
def _cuda_available() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a torch without numpy warns at import; not our concern here
        import torch

        return bool(torch.cuda.is_available())


def _params() -> list[object]:
    out = []
    for case in CASES:
        mark = pytest.mark.cuda if case.device == "cuda" else pytest.mark.torch
        out.append(pytest.param(case, id=case.name, marks=mark))
    return out


def accepts(expected: str, report: object) -> tuple[bool, str]:
    """Whether the report answers as ``expected`` says (ids / families separated by |, or ``none``)."""
    matches = report.matches  # type: ignore[attr-defined]
    if expected == "none":
        return not matches, matches[0].entry.id if matches else "nothing"
    if not matches:
        return False, "nothing"
    best = matches[0].entry
    wanted = set(expected.split("|"))
    return best.id in wanted or best.family in wanted, f"{best.id} ({best.family})"


@pytest.mark.parametrize("case", _params())
def test_reproducer(case: Case, tmp_path: Path, catalog) -> None:
    if absent := missing(case):
        pytest.skip(f"needs {', '.join(absent)}")
    if case.device == "cuda" and not _cuda_available():
        pytest.skip("needs a CUDA GPU (torch.cuda.is_available() is False)")
    if case.name == "cpu-cuda-on-cpu-only-build" and _cuda_available():
        pytest.skip("needs a CPU-only torch build")
    result = run(case, tmp_path)
    assert re.search(case.wording, result.output), (
        f"/{case.wording}/ not printed (exit {result.returncode}):\n{result.output[-3000:]}"
    )
    ok, got = accepts(case.expected, explain(result.output, catalog=catalog))
    assert ok, f"{case.name}: {got} ranked first, expected {case.expected}"
