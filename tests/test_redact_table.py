"""Issue 24, item 3: every row of tests/data/redaction_corpus.tsv, in a traceback's code line and in its message.

Each leak row must not survive ``dtypefix report``; each keep row must survive it unchanged (precision).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from dtypefix.cli.redact import redact

CORPUS = Path(__file__).parent / "data" / "redaction_corpus.tsv"
MESSAGE = "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16"


class Row(NamedTuple):
    expect: str
    shape: str
    example: str
    needle: str


def _rows() -> list[Row]:
    rows = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            expect, shape, example, needle = line.split("\t")
            rows.append(Row(expect, shape, example.encode("ascii").decode("unicode_escape"), needle))
    return rows


ROWS = _rows()
LEAKS = [r for r in ROWS if r.expect == "leak"]
KEEPS = [r for r in ROWS if r.expect == "keep"]


def _log(row: Row, position: str) -> str:
    if position == "code line":
        code, message = f"    run({row.example})", MESSAGE
    else:
        code, message = "    out = model(x)", f"{MESSAGE} ({row.example})"
    return f'Traceback (most recent call last):\n  File "/home/user/train.py", line 9, in <module>\n{code}\n{message}\n'


def test_the_corpus_covers_both_kinds() -> None:
    assert len(LEAKS) >= 30 and len(KEEPS) >= 10
    assert {r.expect for r in ROWS} == {"leak", "keep"}


@pytest.mark.parametrize("row", LEAKS, ids=[r.shape for r in LEAKS])
def test_leak_row_is_removed(row: Row) -> None:
    assert row.needle in row.example
    assert row.needle not in redact(row.example).text


@pytest.mark.parametrize("row", KEEPS, ids=[r.shape for r in KEEPS])
def test_keep_row_survives(row: Row) -> None:
    assert redact(row.example).text == row.example


@pytest.mark.parametrize("position", ["code line", "error message"])
@pytest.mark.parametrize("row", ROWS, ids=[f"{r.expect}: {r.shape}" for r in ROWS])
def test_row_through_report(cli, tmp_path, row: Row, position: str) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "train.log"
    log.write_text(_log(row, position), encoding="utf-8")
    result = cli("report", str(log), "--format", "md")
    assert result.code == 0, result.err
    assert "expected mat1 and mat2" in result.out
    if row.expect == "leak":
        assert row.needle not in result.out, result.out
    else:
        assert row.needle in result.out, result.out
