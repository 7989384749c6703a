"""The message census: every dtype / precision / device message the stack prints, and whether the KB knows it.

The census is KB-editing data kept beside the KB (``census/<library>.yaml``, format in ``census/README.md``), not
part of the runtime pipeline. ``tests/test_census.py`` holds every row to its entries, and ``dtypefix docs``
publishes the table with its coverage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dtypefix.matcher.catalog import Catalog
from dtypefix.matcher.explain import explain

__all__ = ["CensusRow", "census_dir", "load_census", "recognised_by", "template_regex"]

_PLACEHOLDER = re.compile(r"\{[a-z_][a-z0-9_]*\}")


@dataclass(frozen=True)
class CensusRow:
    """One wording of one message, where it is raised, and the entries that must recognise it."""

    library: str
    where: str
    """``<file stem>[<index>]``, for test ids and messages."""
    template: str
    """The message as the source formats it, variable parts written ``{name}``."""
    example: str
    """One instance of the template (real output where it exists)."""
    type: str
    """The exception class as printed; empty for warnings and log lines."""
    kind: str
    source: str
    """``owner/repo@tag:path:line``; empty when only a public report shows the message."""
    report: str
    versions: str
    entries: tuple[str, ...]

    @property
    def text(self) -> str:
        """The input the census test explains: ``Type: example``, or the example alone for a warning."""
        return f"{self.type}: {self.example}" if self.type else self.example

    @property
    def source_url(self) -> str:
        """A link to the raise site at its tag (GitHub), or the report."""
        if not self.source:
            return self.report
        repo, _, rest = self.source.partition("@")
        tag, _, location = rest.partition(":")
        path, _, line = location.rpartition(":")
        return f"https://github.com/{repo}/blob/{tag}/{path}#L{line.lstrip('L').split('-')[0]}"


OPERANDS = "operands.yaml"
"""Beside the rows: which side each two-operand message names is which (``census/operands.yaml``)."""


def census_dir(kb_dir: Path) -> Path:
    """The census beside a KB checkout (``<repo>/census`` next to ``<repo>/kb``)."""
    return kb_dir.resolve().parent / "census"


def template_regex(template: str) -> re.Pattern[str]:
    """The template as a regex: literal text, each ``{placeholder}`` any non-empty run."""
    return re.compile("(?s)" + ".+?".join(re.escape(part) for part in _PLACEHOLDER.split(template)))


def load_census(folder: Path) -> list[CensusRow]:
    """Every row of every ``census/*.yaml``, in file and row order (empty when there is no census)."""
    import yaml

    rows: list[CensusRow] = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        if path.name == OPERANDS:
            continue  # the operand roles of the rows, not rows (matcher/location.py reads it)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for index, row in enumerate(data["rows"]):
            rows.append(
                CensusRow(
                    library=data["library"],
                    where=f"{path.stem}[{index}]",
                    template=row["template"],
                    example=row.get("example", row["template"]),
                    type=row.get("type") or "",
                    kind=row.get("kind", "error"),
                    source=row.get("source") or "",
                    report=row.get("report") or "",
                    versions=str(row.get("versions") or ""),
                    entries=tuple(row["entries"]),
                )
            )
    return rows


def recognised_by(row: CensusRow, catalog: Catalog) -> str | None:
    """The id of the entry that ranks first on the row's example, or None when nothing matches."""
    report = explain(row.text, catalog=catalog)
    return report.matches[0].entry.id if report.matches else None
