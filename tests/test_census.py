"""The message census: every row's example fits its template and is recognised by the entries it names."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
import yaml

from dtypefix.kbtools.census import (
    OUT_OF_SCOPE,
    census_dir,
    load_census,
    load_mined,
    mined_recognised,
    recognised_by,
    template_regex,
    triage,
)
from dtypefix.kbtools.miner import main, mine_artifact, speaks_of_dtype_or_device

CENSUS = census_dir(Path(__file__).resolve().parent.parent / "kb")
ROWS = load_census(CENSUS)
_FIELDS = {"template", "type", "kind", "example", "source", "report", "versions", "entries", "note"}


def test_census_covers_the_stack() -> None:
    assert len(ROWS) >= 1
    assert {r.library for r in ROWS} >= {"torch"}


def test_rows_use_only_documented_fields() -> None:
    for path in CENSUS.glob("*.yaml"):
        if path.name == "operands.yaml":  # the operand roles (matcher/location.py), not a census of messages
            continue
        for index, row in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))["rows"]):
            assert set(row) <= _FIELDS, f"{path.stem}[{index}]: unknown fields {set(row) - _FIELDS}"


@pytest.mark.parametrize("row", ROWS, ids=[r.where for r in ROWS])
def test_row_is_well_formed(row) -> None:
    assert row.kind in ("error", "warning")
    assert row.source or row.report, f"{row.where}: needs a source (repo@tag:path:line) or a report URL"
    if row.source:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[\w.+-]+:[\w./+-]+:L?\d+(-L?\d+)?", row.source), row.source
    if row.report:
        assert row.report.startswith("https://"), row.report
    assert row.entries, f"{row.where}: names no entry"
    assert template_regex(row.template).fullmatch(row.example), f"{row.where}: example does not fit the template"


@pytest.mark.parametrize("row", ROWS, ids=[r.where for r in ROWS])
def test_row_is_recognised(row, catalog) -> None:
    top = recognised_by(row, catalog)
    assert top is not None, f"{row.where}: no entry recognises {row.text!r}"
    assert top in row.entries, f"{row.where}: {top} ranks first, the census names {list(row.entries)}"


# --- The mined census (census/mined/, kbtools/miner.py) ---------------------------------------------------------

MINED_DIR = CENSUS / "mined"
MINED = load_mined(MINED_DIR)
_MINED_FIELDS = ["library", "version", "site", "kind", "type", "template"]


def test_mined_data_is_well_formed() -> None:
    sources = yaml.safe_load((MINED_DIR / "sources.yaml").read_text(encoding="utf-8"))["artifacts"]
    released = {(s["library"], str(s["version"])) for s in sources if s.get("artifact")}
    assert {s["library"] for s in sources} >= {"torch", "transformers", "deepspeed", "vllm", "torch-npu"}
    for path in MINED_DIR.glob("*.jsonl"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            assert list(row) == _MINED_FIELDS, f"{path.name}:{number}"
            assert row["library"] == path.stem, f"{path.name}:{number}"
            assert (row["library"], row["version"]) in released, f"{path.name}:{number}: not in sources.yaml"
            assert row["kind"] in ("raise", "assert", "check", "warn", "string"), f"{path.name}:{number}"
            assert speaks_of_dtype_or_device(row["template"]), f"{path.name}:{number}"
    assert {r.scope for r in MINED} <= {"in", *OUT_OF_SCOPE}


_FIXTURE_PY = """\
import torch, warnings

def f(x, w):
    if x.dtype != w.dtype:
        raise ValueError(f"x has dtype {x.dtype} but w has {w.dtype}: they must match")
    assert x.device == w.device, "x and w must be on the same device"
    torch._check(x.is_cuda, lambda: "fused op expects a CUDA tensor, got " + str(x.device))
    warnings.warn("bf16 is not supported here; using fp32")
    raise KeyError("no such key")  # not about dtypes or devices: not mined
"""
_FIXTURE_SO = (
    b"\x00\x01ELF\x00kernel only supports fp16 and bf16 inputs, got %s\x00short\x00gemm: shapes do not agree\x00"
)


def test_miner_reads_a_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "fixture-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("fixture/ops.py", _FIXTURE_PY)
        archive.writestr("fixture/_C.so", _FIXTURE_SO)
        archive.writestr("fixture/tests/test_ops.py", 'raise ValueError("test dtype must be fp16")')
    rows = [(m.site, m.kind, m.type, m.template) for m in mine_artifact(wheel, "fixture", "1.0")]
    assert rows == [
        ("fixture/ops.py:5", "raise", "ValueError", "x has dtype {dtype} but w has {dtype}: they must match"),
        ("fixture/ops.py:6", "assert", "AssertionError", "x and w must be on the same device"),
        ("fixture/ops.py:7", "check", "RuntimeError", "fused op expects a CUDA tensor, got {}"),
        ("fixture/ops.py:8", "warn", "", "bf16 is not supported here; using fp32"),
        ("_C.so", "string", "", "kernel only supports fp16 and bf16 inputs, got {}"),
    ]
    assert main([str(wheel), "--library", "fixture", "--version", "1.0", "--out", str(tmp_path / "out.jsonl")]) == 0
    assert len((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()) == 5


def test_triage_reasons() -> None:
    assert triage("x has dtype {dtype} but w has {dtype}: they must match") == "in"
    assert triage("expected 'other' to be a CPU tensor, but got a CUDA tensor") == "in"
    assert triage("The size of tensor a must match on device {device} at dimension {dim}") == "shape"
    assert triage("Profiler was requested with CUDA on this node") == "not-a-check"
    assert triage("padding should be smaller than half of kernel_size") == "other-sense"
    assert triage("CUDA out of memory on device {device}; cannot allocate") == "memory"


# Issue 21 asks for 100 %; the mined census is not there yet (docs/kb/census.md lists what is missed). The floor is the
# measured figure: a change that loses a recognised message fails here; raise it as entries widen.
MINED_RECOGNISED_FLOOR = 10825


def test_in_scope_mined_messages_are_recognised(catalog) -> None:
    """In-scope mined messages, instantiated, get an answer (a cause, its family, or the safety net)."""
    in_scope = [r for r in MINED if r.scope == "in"]
    recognised = sum(1 for r in in_scope if mined_recognised(r, catalog))
    assert recognised >= MINED_RECOGNISED_FLOOR, f"{recognised} of {len(in_scope)} recognised"
