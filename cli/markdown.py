"""Markdown rendering: the source of truth for everything a person reads.

The terminal view is this Markdown shown by rich, the HTML view is this Markdown rendered by markdown-it-py,
and the docs pages use the same entry sections, so what is tested here is what every view says.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import TYPE_CHECKING

from dtypefix.matcher import Evidence, KBEntry, Match, Outcome, Report
from dtypefix.matcher.entry import applicable_step
from dtypefix.matcher.incident import Incident
from dtypefix.matcher.observation import Place, TextSeen
from dtypefix.matcher.packages import STACK_PACKAGES
from dtypefix.matcher.result import Decider
from dtypefix.matcher.score import deciding, open_questions
from dtypefix.matcher.traceback import Stack

from . import fence
from .evidence_words import code_span, decider_words, describe, note_words, place_words, readable, seen_words
from .history_words import history_lines
from .i18n import t
from .where_words import where_lines

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
_MARK = MappingProxyType({Outcome.HELD: "✔", Outcome.FAILED: "✘", Outcome.UNKNOWN: "?"})


def fill(text: str, groups: dict[str, str] | None) -> str:
    """Replace ``{{name}}`` with the named group from the matched error; a group it did not capture reads ``…``.

    With no log at all (``show``, docs) the groups come from the entry's own example (:func:`example_groups`), so
    the prose never shows a template placeholder.
    """
    found = groups or {}
    return fence.fill(text, _PLACEHOLDER, lambda m: found.get(m.group(1), "…"))  # values come from the input


def example_groups(entry: KBEntry) -> dict[str, str]:
    """The named groups of the entry's error patterns in its first example that has them: what ``{{left}}`` and
    ``{{right}}`` read in ``show`` and the docs, taken from a real failure rather than left as a template."""
    groups: dict[str, str] = {}
    for example in entry.examples:
        try:
            text = example.input.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for condition in entry.errors:
            found = condition.message.search(text)
            if found is not None:
                for name, value in found.groupdict().items():
                    if value:
                        groups.setdefault(name, value)
        if groups:
            break
    return groups


def _cut(text: str, limit: int) -> str:
    """``text`` shortened to about ``limit`` characters at a space, with "…" where it was cut (never mid-word)."""
    if len(text) <= limit:
        return text
    space = text.rfind(" ", limit // 2, limit)
    return text[: space if space > 0 else limit].rstrip() + " …"


def _error_line(incident: Incident, lang: str) -> str:
    primary = incident.primary
    if primary is None:
        return ""
    cut = incident.cut
    if cut is not None and not isinstance(primary, Stack) and primary.message == cut.message:
        # not read from the paste: the message the function it stops in raises, as the source writes it
        guessed = (
            t("error.cut_callee", lang, function=cut.function, callee=cut.callee)
            if cut.callee
            else t("error.cut_inside", lang, function=cut.function)
        )
        return f"{code_span(f'{cut.exc_type}: {_cut(cut.template, 300)}')} {guessed}"
    if isinstance(primary, Stack):
        first = _cut(primary.message.splitlines()[0], 300) if primary.message else ""
    else:  # a message read outside a traceback: its lines as printed (Incident.primary), side by side
        first = _cut(" ".join(primary.message.split()), 300)
    where = f" ({primary.stream})" if isinstance(primary, Stack) and primary.stream != "main" else ""
    shown = f"{primary.exc_type}: {first}" if primary.exc_type else first  # a type the paste left out
    return f"{code_span(shown)}{where}" if shown else ""


def _packages_shown(incident: Incident, limit: int = 12) -> list[str]:
    """The training stack's packages in the input (an environment's jinja2 or pygments says nothing here)."""
    rank = {name: i for i, name in enumerate(STACK_PACKAGES)}
    stack = sorted((p for p in incident.packages.values() if p.name in rank), key=lambda p: rank[p.name])
    return [fence.plain(f"{p.name} {p.version}") for p in stack[:limit]]


def _what_was_read(incident: Incident, lang: str) -> str:
    frames = sum(len(s.frames) for s in incident.stacks)
    if frames and incident.error_line_missing:
        shape = t("read.traceback", lang, frames=frames, n=len(incident.stacks))
        if incident.cut is not None:
            message = f"{incident.cut.exc_type}: {incident.cut.template}"
            key = "read.cut_callee" if incident.cut.callee else "read.cut_inside"
            said = t(key, lang, function=incident.cut.function, callee=incident.cut.callee, message=message)
            return f"{shape}{t('semicolon', lang)}{said}"
        return f"{shape}{t('semicolon', lang)}{t('read.error_line_missing', lang)}"
    if frames and incident.skipped_tracebacks:
        shape = t("read.traceback", lang, frames=frames, n=len(incident.stacks))
        return f"{shape}{t('semicolon', lang)}{t('read.skipped_tracebacks', lang, n=incident.skipped_tracebacks)}"
    if frames:
        return t("read.traceback", lang, frames=frames, n=len(incident.stacks))
    if incident.stacks or incident.error_lines:
        return t("read.error_only", lang)
    return t("read.lines", lang, lines=incident.text.count("\n") + 1)


def summary_lines(incident: Incident, lang: str, *, error: bool = True) -> list[str]:
    """What dtypefix read from the input, as bullet lines: the error's shape first, then everything attached."""
    parts: list[str] = [_what_was_read(incident, lang)] if error else []
    if incident.packages:
        stack = _packages_shown(incident)
        more = len(incident.packages) - len(stack)
        listed = ", ".join(stack) if stack else t("packages.no_stack", lang)
        parts.append(
            f"{t('packages', lang)}{t('colon.inline', lang)}{listed}"
            + (t("packages.more", lang, n=more) if more > 0 else "")
        )
    if incident.configs:
        parts.append(
            f"{t('configs', lang)}{t('colon.inline', lang)}"
            + ", ".join(f"{place_words(Place.of_config(c.origin), lang)} ({c.kind})" for c in incident.configs)
        )
    if incident.launch.flags:
        shown = " ".join(f"--{k} {v}" for k, v in list(incident.launch.flags.items())[:10])
        parts.append(f"{t('flags', lang)}{t('colon.inline', lang)}{fence.code_span(shown)}")
    if incident.hardware.gpu_names:
        parts.append(
            f"{t('gpus', lang)}{t('colon.inline', lang)}"
            + ", ".join(fence.plain(n) for n in dict.fromkeys(incident.hardware.gpu_names))
        )
    ranks = [s for s in incident.streams if s != "main"]
    if len(ranks) > 1:
        parts.append(f"{t('ranks', lang)}{t('colon.inline', lang)}{len(ranks)}")
    return [f"- {p}" for p in parts]


def _evidence_line(item: Evidence, lang: str) -> str:
    line = f"- {_MARK[item.outcome]} {describe(item, lang)}"
    if item.decider is not None:
        line += _paren(f"{t('decide.by', lang)}{t('colon.inline', lang)}{decider_words(item.decider, lang)}", lang)
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


def _label(key: str, lang: str) -> str:
    """A bold label followed by the language's colon (full-width in Chinese)."""
    return f"**{t(key, lang)}{t('colon', lang)}**"


def _paren(text: str, lang: str) -> str:
    """A parenthetical after a word: full-width and unspaced in Chinese."""
    return f"（{text}）" if lang == "zh" else f" ({text})"


def _confidence_line(match: Match, lang: str, asked: bool = False) -> str:
    """Confidence in words, with what it means; the raw score is for JSON only.

    The sentence follows the evidence printed with it: it points at "the inputs below" only when ``asked`` (the
    answer lists an input that would settle this cause), and never says "some does not" when everything held.
    """
    key = "conf.family" if match.entry.is_family else f"conf.{match.confidence.value}"
    if key in ("conf.medium", "conf.low"):
        own = [e for e in match.evidence if e.kind != "error"]
        if any(e.outcome is Outcome.UNKNOWN for e in own):
            key += "" if asked else ".unasked"
        elif any(e.outcome is Outcome.FAILED for e in own):
            key += ".complete"
        else:
            key += ".all"  # everything held: there is just not much of it
    return f"**{t(match.confidence.value + '.confidence', lang)}** — {t(key, lang)}"


def _verdict(
    match: Match,
    incident: Incident,
    lang: str,
    level: int = 1,
    deciders: tuple[Decider, ...] = (),
    where: list[str] | None = None,
) -> list[str]:
    """The answer on one screen: cause and id, confidence, the error, where it broke, the deciding evidence, the
    first fix. ``deciders`` are the inputs listed below the answer; ``where`` the location's lines."""
    entry = match.entry
    h = "#" * level
    asked = any(entry.id in d.entries for d in deciders)
    lines = [f"{h} {entry.id}: {entry.title.get(lang)}", "", _confidence_line(match, lang, asked), ""]
    error = _error_line(incident, lang) or next(
        (code_span(seen_words(e.observed)) for e in match.evidence if isinstance(e.observed, TextSeen)), ""
    )
    if error:
        lines += [f"{_label('error', lang)} {error}", ""]
    lines += where or []
    if match.fixed is not None:
        lines += [f"> {t('fixed.note', lang, detail=describe(match.fixed, lang))}", ""]
    shown = deciding(match)
    if shown:
        lines += [_label("because", lang), "", *(_evidence_line(item, lang) for item in shown), ""]
    if entry.fix:
        step = entry.fix[applicable_step(entry, incident)]  # the first step whose `when` holds for this input
        lines += [f"{_label('fix', lang)} {fill(step.get(lang), match.groups)}", ""]
    return lines


def _match_details(match: Match, lang: str) -> list[str]:
    """Everything behind ``--details``: every piece of evidence, then the entry's cause, steps and references."""
    lines = [f"## {t('why', lang)}", "", *(_evidence_line(item, lang) for item in match.evidence), ""]
    return lines + entry_sections(match.entry, lang, match.groups, level=2)


def _read_line(incident: Incident, lang: str, *, error: bool = True) -> str:
    parts = [p.removeprefix("- ") for p in summary_lines(incident, lang, error=error)]
    return f"{_label('read', lang)} " + t("semicolon", lang).join(parts or [t("read.nothing", lang)])


_OTHERS_SHOWN = 4
"""Alternatives listed on the first screen without ``--details``; the rest are counted. A bare error line can fit
a dozen located causes (each keyed on a place the line does not show), and listing them all pushed the answer's
own lines off a terminal's first screen."""


def _candidates(matches: tuple[Match, ...], lang: str, details: bool) -> list[str]:
    if not matches:
        return []
    shown = matches if details else matches[:_OTHERS_SHOWN]
    lines = [_label("others", lang), ""]
    for m in shown:
        lines.append(
            f"- `{m.entry.id}` {m.entry.title.get(lang)}{_paren(t(m.confidence.value + '.confidence', lang), lang)}"
        )
    if len(shown) < len(matches):
        lines.append(f"- {t('others.more', lang, n=len(matches) - len(shown))}")
    return [*lines, ""]


def _deciders(report: Report, lang: str) -> list[str]:
    if not report.deciders:
        return []
    lines = [_label("decide", lang), ""]
    lines += [f"- {decider_words(d.key, lang)}{_paren(', '.join(d.entries), lang)}" for d in report.deciders]
    return [*lines, ""]


def _none(report: Report, lang: str) -> list[str]:
    incident = report.incident
    lines = [f"# {t('heading.none', lang)}", ""]
    error = _error_line(incident, lang)
    if report.out_of_scope is not None:
        lines += [f"{_label('error', lang)} {error}", "", t("scope." + report.out_of_scope.value, lang), ""]
        return lines
    if error:
        lines += [f"{_label('error', lang)} {error}", ""]
        lines += where_lines(report.location, lang)
        lines += [t("none.body", lang), ""]
    else:
        lines += [t("none.noerror", lang, lines=incident.text.count("\n") + 1), ""]
        # A traceback cut before its error line still shows the last line it reached and whose code that is.
        lines += where_lines(report.location, lang, family=False, cut=incident.error_line_missing)
    lines += [_read_line(incident, lang), "", t("none.next", lang), ""]
    return lines


def _format_one(report: Report, lang: str, top: int, details: bool) -> str:
    incident = report.incident
    if not report.matches:
        lines = _none(report, lang)
    else:
        best = report.matches[0]
        where = where_lines(report.location, lang, family=best.entry.is_family)
        lines = _verdict(best, incident, lang, deciders=report.deciders, where=where)
        lines += _candidates(report.matches[1:], lang, details)
        lines += _deciders(report, lang)
        lines += [_read_line(incident, lang), ""]
        if incident.notes:
            lines += [_label("input.notes", lang), "", *(f"- {note_words(n, lang)}" for n in incident.notes), ""]
        if details:
            lines += _match_details(best, lang)
            for match in report.matches[1:top]:
                verdict = _verdict(match, incident, lang, level=2, deciders=report.deciders)
                lines += ["---", "", *verdict, *_match_details(match, lang)]
        else:
            lines += [t("more", lang, id=best.entry.id), ""]
    specific = bool(report.matches) and not report.matches[0].entry.is_family
    lines += history_lines(report, lang, brief=specific and not details)
    if report.kb_problems:
        lines += [f"<!-- {t('kb.problems', lang)}: {len(report.kb_problems)} -->", ""]
    return "\n".join(lines).rstrip() + "\n"


def _langs(lang: str) -> list[str]:
    return ["en", "zh"] if lang == "both" else [lang]


def format_report(report: Report, lang: str = "en", top: int = 3, details: bool = False) -> str:
    """The explanation, verdict first; ``details`` adds every piece of evidence, the cause, every fix step,
    what does not help and the references. ``lang`` is ``en``, ``zh`` or ``both`` (English, then Chinese)."""
    return "\n---\n\n".join(_format_one(report, one, top, details) for one in _langs(lang))


def _template(pattern: str, lang: str) -> str:
    """A message pattern as its wording, each variable part (a named group) shown as "…", as in search."""
    text = readable(pattern, lang)
    for name in re.findall(r"\(\?P<(\w+)>", pattern):
        text = text.replace(f"<{name}>", "…")
    return text


def format_entry(entry: KBEntry, lang: str = "en") -> str:
    """One entry on its own (``dtypefix show`` and the docs pages)."""
    blocks = []
    for one in _langs(lang):
        lines = [f"# {entry.id}: {entry.title.get(one)}", ""]
        meta = [f"`{entry.slug}`", entry.kind.value, entry.family, *(f"#{tag}" for tag in entry.tags)]
        if not entry.is_active:
            meta.append(f"**{entry.status.value}**")
        lines += [" · ".join(meta), ""]
        lines += ["```text", *dict.fromkeys(_template(e.pattern, one) for e in entry.errors), "```", ""]
        if entry.affected:
            shown = ", ".join(f"{k} `{v}`" for k, v in entry.affected.items())
            lines += [f"{t('affected', one)}{t('colon.inline', one)}{shown}", ""]
        if entry.fixed_in:
            shown = ", ".join(f"{k} {v}" for k, v in entry.fixed_in.items())
            lines += [f"{t('fixed_in', one)}{t('colon.inline', one)}{shown}", ""]
        if entry.messages:
            lines += [f"**{t('wording', one)}**", "", *(f"- {m}" for m in entry.messages), ""]
        lines += entry_sections(entry, one, example_groups(entry), level=2)
        blocks.append("\n".join(lines).rstrip() + "\n")
    return "\n---\n\n".join(blocks)


def format_check(report: Report, lang: str = "en", details: bool = False) -> str:
    """Pre-flight findings from ``dtypefix check``, each as a verdict; then what would apply with more input."""
    blocks = []
    for one in _langs(lang):
        lines: list[str] = []
        if report.matches:
            lines += [f"# {t('heading.check', one, n=len(report.matches))}", "", t("check.intro", one), ""]
        else:
            lines += [f"# {t('heading.check.clean', one)}", ""]
        if report.incident.notes:
            lines += [_label("input.notes", one), "", *(f"- {note_words(n, one)}" for n in report.incident.notes), ""]
        for match in report.matches:
            lines += _verdict(match, report.incident, one, level=2)
            if details:
                lines += _match_details(match, one)
        if report.conditional:
            lines += [f"## {t('check.conditional', one)}", ""]
            for match in report.conditional:
                unknown = [describe(e, one) for e in open_questions(match)]
                lines.append(f"- `{match.entry.id}` {match.entry.title.get(one)}: {'; '.join(unknown)}")
            lines.append("")
            lines += _deciders(report, one)
        lines += [_read_line(report.incident, one, error=False), ""]
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
        f"| `{h.entry.id}` | {h.entry.title.get(one)} | {t('field.' + h.field, one)}: {h.snippet} | {h.score:g} |"
        for h in hits
    ]
    return "\n".join(lines) + "\n"
