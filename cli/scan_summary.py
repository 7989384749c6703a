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

from dtypefix.matcher.packages import STACK_PACKAGES

from .i18n import t
from .scan_rows import STATUSES

__all__ = ["WATCHED_PACKAGES", "CauseCount", "Summary", "format_summary", "summarise", "summary_json"]

WATCHED_PACKAGES = STACK_PACKAGES
"""The packages whose versions are counted per cause: the training stack the KB's entries are about."""


@dataclass
class CauseCount:
    """One cause (or family) across the fleet; filled row by row, then read."""

    key: str
    title: str = ""
    title_zh: str = ""
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
            entry = summary.causes.get(cause) or summary.causes.setdefault(
                cause, CauseCount(cause, str(row.get("title") or ""), _title_zh(row), family)
            )
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


def _title_zh(row: Mapping[str, Any]) -> str:
    """The entry's Chinese title, from the row's report (the row's own ``title`` is the English one)."""
    matches = (row.get("report") or {}).get("matches") or [{}]
    return str((matches[0].get("title") or {}).get("zh") or row.get("title") or "")


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def _versions(cause: CauseCount, lang: str, most: int = 3) -> str:
    parts = []
    for name in WATCHED_PACKAGES:
        counts = cause.versions.get(name)
        if counts:
            shown = ", ".join(f"{v} ({n})" for v, n in sorted(counts.items(), key=lambda vn: (-vn[1], vn[0]))[:most])
            more = len(counts) - most
            parts.append(f"{name} {shown}" + (" " + t("scan.more", lang, n=more) if more > 0 else ""))
    return "; ".join(parts) or t("scan.not_printed", lang)


def _cell(text: str) -> str:
    """Table-safe: a pipe or a newline in a path or a title would break the Markdown table."""
    return text.replace("|", "\\|").replace("\n", " ")


def format_summary(summary: Summary, lang: str = "en") -> str:
    """The summary as Markdown: statuses, causes, families, package versions per cause, what was not read.
    ``lang`` is ``en``, ``zh`` or ``both`` (English, then Chinese)."""
    if lang == "both":
        return format_summary(summary, "en") + "\n" + format_summary(summary, "zh")
    failed = summary.jobs - summary.statuses["no error"] - summary.statuses["unreadable"]

    def row(*cells: object) -> str:
        return "| " + " | ".join(str(c) for c in cells) + " |"

    lines = [f"# {t('scan.title', lang)}", ""]
    lines.append(
        t(
            "scan.intro",
            lang,
            jobs=summary.jobs,
            mb=f"{summary.bytes / 1e6:.1f}",
            failed=failed,
            explained=summary.statuses["explained"],
        )
    )
    lines += ["", row(t("scan.status", lang), t("scan.jobs", lang), t("scan.share", lang)), "| --- | ---: | ---: |"]
    for status in STATUSES:
        lines.append(
            row(t(f"scan.{status}", lang), summary.statuses[status], _share(summary.statuses[status], summary.jobs))
        )
    ranked = summary.ranked(summary.causes)
    if ranked:
        lines += ["", f"## {t('scan.by_cause', lang)}", ""]
        keys = ("scan.cause", "scan.jobs", "scan.share_failed", "scan.first_seen", "scan.last_seen", "scan.example")
        lines += [
            row(*(t(k, lang) for k in (*keys, "scan.title_column"))),
            "| --- | ---: | ---: | --- | --- | --- | --- |",
        ]
        for cause in ranked:
            title = cause.title_zh if lang == "zh" else cause.title
            lines.append(
                row(
                    cause.key,
                    cause.jobs,
                    _share(cause.jobs, failed),
                    cause.first_seen[:10],
                    cause.last_seen[:10],
                    f"`{_cell(cause.example)}`",
                    _cell(title),
                )
            )
        lines += ["", f"## {t('scan.by_family', lang)}", ""]
        lines += [
            row(t("scan.family", lang), t("scan.jobs", lang), t("scan.share_failed", lang), t("scan.causes", lang)),
            "| --- | ---: | ---: | ---: |",
        ]
        for family in summary.ranked(summary.families):
            distinct = sum(1 for c in summary.causes.values() if c.family == family.key)
            lines.append(row(family.key, family.jobs, _share(family.jobs, failed), distinct))
        lines += ["", f"## {t('scan.versions_heading', lang)}", ""]
        lines += [row(t("scan.cause", lang), t("scan.versions", lang)), "| --- | --- |"]
        lines += [row(cause.key, _cell(_versions(cause, lang))) for cause in ranked]
    if summary.out_of_scope:
        lines += ["", f"## {t('scan.out_of_scope_heading', lang)}", ""]
        lines += [row(t("scan.kind", lang), t("scan.jobs", lang)), "| --- | ---: |"]
        lines += [row(kind, n) for kind, n in sorted(summary.out_of_scope.items(), key=lambda kn: (-kn[1], kn[0]))]
    if summary.unreadable:
        lines += ["", f"## {t('scan.not_read', lang)}", ""]
        lines += [f"- `{_cell(path)}`: {_cell(reason)}" for path, reason in summary.unreadable]
        more = summary.statuses["unreadable"] - len(summary.unreadable)
        if more > 0:
            lines.append("- " + t("scan.not_read_more", lang, n=more))
    return "\n".join(lines) + "\n"


def summary_json(summary: Summary) -> dict[str, Any]:
    """The summary as data (``--format json``)."""

    def cause(c: CauseCount) -> dict[str, Any]:
        return {
            "key": c.key,
            "title": {"en": c.title, "zh": c.title_zh} if c.title else None,
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
