"""The message census: every row's example fits its template and is recognised by the entries it names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from dtypefix.kbtools.census import census_dir, load_census, recognised_by, template_regex

CENSUS = census_dir(Path(__file__).resolve().parent.parent / "kb")
ROWS = load_census(CENSUS)
_FIELDS = {"template", "type", "kind", "example", "source", "report", "versions", "entries", "note"}


def test_census_covers_the_stack() -> None:
    assert len(ROWS) >= 1
    assert {r.library for r in ROWS} >= {"torch"}


def test_rows_use_only_documented_fields() -> None:
    for path in CENSUS.glob("*.yaml"):
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
