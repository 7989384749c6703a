"""A fleet's rows counted: by status, by cause and by family, over time, with the package versions each cause ran.

Computed from the written JSON Lines (whichever engine wrote them), one row at a time: memory grows with the
number of causes, days and package versions, never with the number of jobs. Markdown is the source of the terminal
table and of the HTML report (:mod:`.scan_html` adds its charts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .scan_rows import STATUSES

__all__ = ["WATCHED_PACKAGES", "CauseCount", "Summary", "format_summary", "summarise", "summary_json"]

WATCHED_PACKAGES = (
    "torch",
    "transformers",
    "accelerate",
    "deepspeed",
    "peft",
    "bitsandbytes",
    "flash-attn",
    "trl",
    "vllm",
    "transformer-engine",
)
"""The packages whose versions are counted per cause (the stack the KB's entries are about)."""


@dataclass
class CauseCount:
    """One cause (or family) across the fleet; filled row by row, then read."""

    key: str
    title: str = ""
    family: str = ""
    jobs: int = 0
    first_seen: str = ""
    last_seen: str = ""
    example: str = ""
    """The first job with this cause in path order (whatever order an engine wrote the rows in)."""
    confidence: Counter[str] = field(default_factory=Counter)
    versions: dict[str, Counter[str]] = field(default_factory=dict)
    """Package -> version -> jobs, for :data:`WATCHED_PACKAGES` the jobs printed."""
    days: Counter[str] = field(default_factory=Counter)
    """``YYYY-MM-DD`` (of the job's last modification) -> jobs."""

    def add(self, row: Mapping[str, Any]) -> None:
        self.jobs += 1
        seen = row.get("mtime") or ""
        if seen:
            self.first_seen = min(self.first_seen or seen, seen)
            self.last_seen = max(self.last_seen, seen)
            self.days[seen[:10]] += 1
        self.example = min(self.example, str(row["path"])) if self.example else str(row["path"])
        if row.get("confidence"):
            self.confidence[str(row["confidence"])] += 1
        packages = row.get("packages") or {}
        for name in WATCHED_PACKAGES:
            if name in packages:
                self.versions.setdefault(name, Counter())[str(packages[name])] += 1


@dataclass
class Summary:
    """Everything the summary shows; :func:`summarise` fills it."""

    jobs: int = 0
    bytes: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    causes: dict[str, CauseCount] = field(default_factory=dict)
    families: dict[str, CauseCount] = field(default_factory=dict)
    out_of_scope: Counter[str] = field(default_factory=Counter)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    """(path, reason) of the first unreadable jobs in path order (up to :data:`_UNREADABLE_SHOWN`)."""

    def ranked(self, table: Mapping[str, CauseCount]) -> list[CauseCount]:
        return sorted(table.values(), key=lambda c: (-c.jobs, c.key))


_UNREADABLE_SHOWN = 20


def summarise(rows: Iterable[Mapping[str, Any]]) -> Summary:
    """Count ``rows`` (scan rows, as written) into a :class:`Summary`."""
    summary = Summary()
    for row in rows:
        summary.jobs += 1
        summary.bytes += int(row.get("size") or 0)
        status = str(row.get("status"))
        summary.statuses[status] += 1
        if status == "explained" and row.get("cause"):
            cause = str(row["cause"])
            family = str(row.get("family") or "other")
            entry = summary.causes.setdefault(cause, CauseCount(cause, str(row.get("title") or ""), family))
            entry.add(row)
            summary.families.setdefault(family, CauseCount(family)).add(row)
        elif status == "out of scope":
            summary.out_of_scope[str(row.get("out_of_scope") or "other")] += 1
        elif status == "unreadable":
            summary.unreadable.append((str(row["path"]), str(row.get("reason") or "")))
            if len(summary.unreadable) > 2 * _UNREADABLE_SHOWN:
                summary.unreadable = sorted(summary.unreadable)[:_UNREADABLE_SHOWN]
    summary.unreadable = sorted(summary.unreadable)[:_UNREADABLE_SHOWN]
    return summary


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def _versions(cause: CauseCount, most: int = 3) -> str:
    parts = []
    for name in WATCHED_PACKAGES:
        counts = cause.versions.get(name)
        if counts:
            shown = ", ".join(f"{v} ({n})" for v, n in sorted(counts.items(), key=lambda vn: (-vn[1], vn[0]))[:most])
            more = len(counts) - most
            parts.append(f"{name} {shown}" + (f" +{more} more" if more > 0 else ""))
    return "; ".join(parts) or "not printed"


def _cell(text: str) -> str:
    """Table-safe: a pipe or a newline in a path or a title would break the Markdown table."""
    return text.replace("|", "\\|").replace("\n", " ")


def format_summary(summary: Summary, title: str = "dtypefix scan") -> str:
    """The summary as Markdown: statuses, causes, families, package versions per cause, what was not read."""
    failed = summary.jobs - summary.statuses["no error"] - summary.statuses["unreadable"]
    lines = [f"# {title}", ""]
    lines.append(
        f"{summary.jobs} jobs ({summary.bytes / 1e6:.1f} MB); {failed} with an error, "
        f"{summary.statuses['explained']} of them explained by a known cause."
    )
    lines += ["", "| status | jobs | share |", "| --- | ---: | ---: |"]
    for status in STATUSES:
        lines.append(f"| {status} | {summary.statuses[status]} | {_share(summary.statuses[status], summary.jobs)} |")
    if summary.causes:
        lines += ["", "## By cause", ""]
        lines += [
            "| cause | jobs | share of failed | first seen | last seen | example | title |",
            "| --- | ---: | ---: | --- | --- | --- | --- |",
        ]
        for cause in summary.ranked(summary.causes):
            lines.append(
                f"| {cause.key} | {cause.jobs} | {_share(cause.jobs, failed)} | {cause.first_seen[:10]} | "
                f"{cause.last_seen[:10]} | `{_cell(cause.example)}` | {_cell(cause.title)} |"
            )
        lines += [
            "",
            "## By family",
            "",
            "| family | jobs | share of failed | causes |",
            "| --- | ---: | ---: | ---: |",
        ]
        for family in summary.ranked(summary.families):
            distinct = sum(1 for c in summary.causes.values() if c.family == family.key)
            lines.append(f"| {family.key} | {family.jobs} | {_share(family.jobs, failed)} | {distinct} |")
        lines += ["", "## Package versions per cause", "", "| cause | versions (jobs) |", "| --- | --- |"]
        for cause in summary.ranked(summary.causes):
            lines.append(f"| {cause.key} | {_cell(_versions(cause))} |")
    if summary.out_of_scope:
        lines += ["", "## Out of scope", "", "| kind | jobs |", "| --- | ---: |"]
        lines += [f"| {kind} | {n} |" for kind, n in sorted(summary.out_of_scope.items(), key=lambda kn: -kn[1])]
    if summary.unreadable:
        lines += ["", "## Not read", ""]
        lines += [f"- `{_cell(path)}`: {_cell(reason)}" for path, reason in summary.unreadable]
        more = summary.statuses["unreadable"] - len(summary.unreadable)
        if more > 0:
            lines.append(f'- and {more} more (rows with status "unreadable")')
    return "\n".join(lines) + "\n"


def summary_json(summary: Summary) -> dict[str, Any]:
    """The summary as data (``--format json``)."""

    def cause(c: CauseCount) -> dict[str, Any]:
        return {
            "key": c.key,
            "title": c.title or None,
            "family": c.family or None,
            "jobs": c.jobs,
            "first_seen": c.first_seen or None,
            "last_seen": c.last_seen or None,
            "example": c.example,
            "confidence": dict(c.confidence),
            "versions": {name: dict(counts) for name, counts in c.versions.items()},
            "days": dict(sorted(c.days.items())),
        }

    return {
        "jobs": summary.jobs,
        "bytes": summary.bytes,
        "statuses": {status: summary.statuses[status] for status in STATUSES},
        "causes": [cause(c) for c in summary.ranked(summary.causes)],
        "families": [cause(c) for c in summary.ranked(summary.families)],
        "out_of_scope": dict(summary.out_of_scope),
        "unreadable": [{"path": p, "reason": r} for p, r in summary.unreadable],
    }
