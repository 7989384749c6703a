"""Markdown rendering: the source of truth for everything a person reads.

The terminal view is this Markdown shown by rich, the HTML view is this Markdown rendered by markdown-it-py,
and the docs pages use the same entry sections, so what is tested here is what every view says.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dtypefix.matcher import Evidence, KBEntry, Match, Report
from dtypefix.matcher.incident import Incident
from dtypefix.matcher.traceback import Stack

from .evidence import describe, readable
from .i18n import t

if TYPE_CHECKING:
    from dtypefix.matcher.search import SearchHit

__all__ = [
    "entry_sections",
    "fill",
    "format_check",
    "format_entry",
    "format_report",
    "format_search",
    "summary_lines",
]

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_MARK = {"held": "✔", "failed": "✘", "unknown": "?"}


def fill(text: str, groups: dict[str, str] | None) -> str:
    """Replace ``{{name}}`` with the named group from the matched error.

    With no match at all (``show``, docs) the placeholder reads ``<name>``; a group the matched pattern did not
    capture reads ``…``.
    """
    if groups is None:
        return _PLACEHOLDER.sub(lambda m: f"<{m.group(1)}>", text)
    return _PLACEHOLDER.sub(lambda m: groups.get(m.group(1), "…"), text)


def _error_line(incident: Incident) -> str:
    primary = incident.primary
    if primary is None:
        return ""
    first = primary.message.splitlines()[0] if primary.message else ""
    where = f" ({primary.stream})" if isinstance(primary, Stack) and primary.stream != "main" else ""
    return f"`{primary.exc_type}: {first[:300]}`{where}"


def summary_lines(incident: Incident, lang: str) -> list[str]:
    """What dtypefix read from the input, as bullet lines."""
    parts: list[str] = []
    if incident.packages:
        shown = ", ".join(f"{p.name} {p.version}" for p in list(incident.packages.values())[:12])
        more = len(incident.packages) - 12
        parts.append(f"{t('packages', lang)}: {shown}" + (f" (+{more})" if more > 0 else ""))
    if incident.configs:
        parts.append(f"{t('configs', lang)}: " + ", ".join(f"{c.origin} ({c.kind})" for c in incident.configs))
    if incident.launch.flags:
        shown = " ".join(f"--{k} {v}" for k, v in list(incident.launch.flags.items())[:10])
        parts.append(f"{t('flags', lang)}: `{shown}`")
    if incident.hardware.gpu_names:
        parts.append(f"{t('gpus', lang)}: " + ", ".join(dict.fromkeys(incident.hardware.gpu_names)))
    ranks = [s for s in incident.streams if s != "main"]
    if len(ranks) > 1:
        parts.append(f"{t('ranks', lang)}: {len(ranks)}")
    return [f"- {p}" for p in parts] or [f"- {t('nothing.read', lang)}"]


def _evidence_line(item: Evidence, lang: str) -> str:
    line = f"- {_MARK[item.outcome.value]} {describe(item, lang)}"
    if item.decider is not None:
        line += f" ({t('decide.by', lang)}: {t('decider.' + item.decider.value, lang)})"
    return line


def entry_sections(entry: KBEntry, lang: str, groups: dict[str, str] | None = None, level: int = 3) -> list[str]:
    """Cause, fix, does-not-help, notes and references of an entry, as Markdown lines (``groups=None``: no match)."""
    h = "#" * level
    lines = [f"{h} {t('cause', lang)}", "", fill(entry.cause.get(lang), groups), "", f"{h} {t('fix', lang)}", ""]
    for number, step in enumerate(entry.fix, 1):
        body = fill(step.get(lang), groups).replace("\n", "\n   ")
        lines.append(f"{number}. {body}")
    lines.append("")
    if entry.does_not_help:
        lines += [f"{h} {t('does_not_help', lang)}", ""]
        lines += ["- " + fill(item.get(lang), groups).replace("\n", "\n  ") for item in entry.does_not_help]
        lines.append("")
    if entry.notes is not None:
        lines += [f"{h} {t('notes', lang)}", "", fill(entry.notes.get(lang), groups), ""]
    lines += [f"{h} {t('references', lang)}", ""]
    lines += [f"- [{title}]({url})" for url, title in entry.references]
    lines.append("")
    return lines


def _match_block(number: int, match: Match, lang: str) -> list[str]:
    entry = match.entry
    conf = t(match.confidence, lang)
    lines = [
        f"## {number}. {entry.title.get(lang)}",
        "",
        f"`{entry.id}` · {t('confidence', lang)}: **{conf}** · {t('score', lang)} {match.score:g}",
        "",
    ]
    if match.fixed is not None:
        lines += [f"> {t('fixed.note', lang, detail=describe(match.fixed, lang))}", ""]
    lines += [f"### {t('why', lang)}", ""]
    lines += [_evidence_line(item, lang) for item in match.evidence]
    lines.append("")
    lines += entry_sections(entry, lang, match.groups)
    return lines


def _format_one(report: Report, lang: str, top: int) -> str:
    incident = report.incident
    lines: list[str] = []
    if report.matches:
        lines += [f"# {t('heading.found', lang, n=len(report.matches))}", ""]
    else:
        lines += [f"# {t('heading.none', lang)}", ""]
    error = _error_line(incident)
    if error:
        lines += [f"**{t('error', lang)}:** {error}", ""]
    lines += [f"**{t('read', lang)}:**", "", *summary_lines(incident, lang), ""]
    if incident.notes:
        lines += [f"**{t('input.notes', lang)}:**", "", *(f"- {n}" for n in incident.notes), ""]
    if not report.matches:
        body = (
            t("none.body", lang, what=t("none.error", lang, error=error.strip("`")))
            if error
            else t("none.noerror", lang)
        )
        lines += [body, "", t("none.next", lang), ""]
    shown = report.matches[:top]
    for number, match in enumerate(shown, 1):
        lines += _match_block(number, match, lang)
    rest = report.matches[top:]
    if rest:
        lines += [f"## {t('others', lang)}", ""]
        lines += [
            f"| {t('column.id', lang)} | {t('column.title', lang)} | {t('confidence', lang)} | {t('score', lang)} |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| `{m.entry.id}` | {m.entry.title.get(lang)} | {t(m.confidence, lang)} | {m.score:g} |" for m in rest
        ]
        lines.append("")
    if report.deciders:
        lines += [f"## {t('decide', lang)}", ""]
        lines += [f"- {t('decider.' + d.key.value, lang)} — {', '.join(d.entries)}" for d in report.deciders]
        lines.append("")
    if report.kb_problems:
        lines += [f"<!-- {t('kb.problems', lang)}: {len(report.kb_problems)} -->", ""]
    return "\n".join(lines).rstrip() + "\n"


def _langs(lang: str) -> list[str]:
    return ["en", "zh"] if lang == "both" else [lang]


def format_report(report: Report, lang: str = "en", top: int = 3) -> str:
    """The whole explanation; ``lang`` is ``en``, ``zh`` or ``both`` (English, then Chinese)."""
    return "\n---\n\n".join(_format_one(report, one, top) for one in _langs(lang))


def format_entry(entry: KBEntry, lang: str = "en") -> str:
    """One entry on its own (``dtypefix show`` and the docs pages)."""
    blocks = []
    for one in _langs(lang):
        lines = [f"# {entry.id}: {entry.title.get(one)}", ""]
        meta = [f"`{entry.slug}`", entry.kind.value, entry.family, *(f"#{tag}" for tag in entry.tags)]
        if not entry.is_active:
            meta.append(f"**{entry.status.value}**")
        lines += [" · ".join(meta), ""]
        lines += ["```text", *(readable(e.pattern, one) for e in entry.errors), "```", ""]
        if entry.affected:
            lines += ["affected: " + ", ".join(f"{k} `{v}`" for k, v in entry.affected.items()), ""]
        if entry.fixed_in:
            lines += ["fixed in: " + ", ".join(f"{k} {v}" for k, v in entry.fixed_in.items()), ""]
        if entry.messages:
            lines += [f"**{t('wording', one)}**", "", *(f"- {m}" for m in entry.messages), ""]
        lines += entry_sections(entry, one, level=2)
        blocks.append("\n".join(lines).rstrip() + "\n")
    return "\n---\n\n".join(blocks)


def format_check(report: Report, lang: str = "en") -> str:
    """Pre-flight warnings from ``dtypefix check``."""
    blocks = []
    for one in _langs(lang):
        lines: list[str] = []
        if report.matches:
            lines += [f"# {t('heading.check', one, n=len(report.matches))}", "", t("check.intro", one), ""]
        else:
            lines += [f"# {t('heading.check.clean', one)}", ""]
        lines += [f"**{t('read', one)}:**", "", *summary_lines(report.incident, one), ""]
        if report.incident.notes:
            lines += [f"**{t('input.notes', one)}:**", "", *(f"- {n}" for n in report.incident.notes), ""]
        for number, match in enumerate(report.matches, 1):
            lines += _match_block(number, match, one)
        blocks.append("\n".join(lines).rstrip() + "\n")
    return "\n---\n\n".join(blocks)


def format_search(hits: list[SearchHit], query: str, lang: str) -> str:
    """``dtypefix search`` results as a table (the first language when ``both``)."""
    one = "en" if lang == "both" else lang
    if not hits:
        return t("search.none", one, query=query) + "\n"
    header = (t("column.id", one), t("column.title", one), t("column.field", one), t("score", one))
    lines = ["| " + " | ".join(header) + " |", "| --- | --- | --- | --- |"]
    lines += [
        f"| `{h.entry.id}` | {h.entry.title.get(one)} | {h.field}: {h.snippet[:60]} | {h.score:g} |" for h in hits
    ]
    return "\n".join(lines) + "\n"
