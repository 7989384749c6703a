"""The message census: every row's example fits its template and is recognised by the entries it names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from dtypefix.matcher import explain, load_catalog

CENSUS = Path(__file__).resolve().parent.parent / "census"
_PLACEHOLDER = re.compile(r"\{[a-z_][a-z0-9_]*\}")
_FIELDS = {"template", "type", "kind", "example", "source", "report", "versions", "entries", "note"}


def _rows() -> list[tuple[str, dict[str, Any]]]:
    rows: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(CENSUS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for index, row in enumerate(data["rows"]):
            rows.append((f"{path.stem}[{index}]", {"library": data["library"], **row}))
    return rows


ROWS = _rows()


def template_regex(template: str) -> re.Pattern[str]:
    """The template as a regex: literal text, each ``{placeholder}`` any non-empty run."""
    parts = _PLACEHOLDER.split(template)
    return re.compile("(?s)" + ".+?".join(re.escape(part) for part in parts))


@pytest.fixture(scope="module")
def catalog():
    return load_catalog([])


def test_census_is_not_empty():
    assert len(ROWS) >= 1


@pytest.mark.parametrize(("where", "row"), ROWS, ids=[w for w, _ in ROWS])
def test_row_is_well_formed(where, row):
    assert set(row) - {"library"} <= _FIELDS, f"{where}: unknown fields {set(row) - _FIELDS - {'library'}}"
    assert row.get("kind", "error") in ("error", "warning")
    assert row.get("source") or row.get("report"), f"{where}: needs a source (repo@tag:path:line) or a report URL"
    if row.get("source"):
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[\w.+-]+:[\w./+-]+:L?\d+(-L?\d+)?", row["source"]), row["source"]
    if row.get("report"):
        assert row["report"].startswith("https://"), row["report"]
    assert row["entries"], f"{where}: names no entry"
    example = row.get("example", row["template"])
    assert template_regex(row["template"]).fullmatch(example), f"{where}: example does not fit the template"


@pytest.mark.parametrize(("where", "row"), ROWS, ids=[w for w, _ in ROWS])
def test_row_is_recognised(where, row, catalog):
    example = row.get("example", row["template"])
    text = f"{row['type']}: {example}" if row.get("type") else example
    report = explain(text, catalog=catalog)
    assert report.matches, f"{where}: no entry recognises {text!r}"
    top = report.matches[0].entry.id
    assert top in row["entries"], f"{where}: {top} ranks first, the census names {row['entries']}"
