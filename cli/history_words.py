"""Fix history in words: "diffusers 0.38.0 changed this line: `...` (#13364) — you have 0.37.1: upgrade".

:mod:`dtypefix.matcher.history` finds the later releases that changed the dtype/device handling of the library
code the traceback failed in; this module says so on the first screen (both languages), as JSON, and states the
releases the shipped index covers (``dtypefix --version``). A change found this way is a change to that code's
dtype handling in a later release — likely the fix, never asserted as certain: the confidence says how close it
is to the failing line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dtypefix.matcher.result import Report

if TYPE_CHECKING:  # types only: the index reader (sqlite) is imported when an answer has library frames
    from dtypefix.matcher.history import Change, FrameHistory

from .evidence_words import code_span

__all__ = ["coverage_line", "history_json", "history_lines", "history_schema"]

_SHOWN = 2
"""Frames listed on the first screen (those whose change is closest to the failing line)."""
_WIDTH = 110

_WORDS: dict[str, tuple[str, str]] = {
    "label": ("**Changed in a later release:**", "**后续版本改过这段代码：**"),
    "line": (
        "{lib} {release} changed this line: {code}{pr} — {have}: upgrade.",
        "{lib} {release} 改了出错的这一行：{code}{pr}——{have}：建议升级。",
    ),
    "near": (
        "{lib} {release} changed the dtype handling next to this line in `{function}`: {code}{pr} — {have}: upgrade.",
        "{lib} {release} 改了 `{function}` 中紧挨出错行的 dtype 处理：{code}{pr}——{have}：建议升级。",
    ),
    "function": (
        "{lib} {release} changed the dtype handling of `{function}`, where this failed: {code}{pr} — {have}; "
        "check whether that release fixes it.",
        "{lib} {release} 改了出错函数 `{function}` 的 dtype 处理：{code}{pr}——{have}；请确认该版本是否修复了这个问题。",
    ),
    "file": (
        "{lib} {release} changed the dtype handling of `{function}`, next to `{failed}` in the same file: {code}{pr} "
        "— {have}; a weaker lead: `{failed}` itself has no later dtype change, a function beside it has.",
        "{lib} {release} 改了同一文件中紧挨 `{failed}` 的 `{function}` 的 dtype 处理：{code}{pr}——{have}；"
        "出错的函数本身之后没再改过 dtype 处理，改的是它旁边的函数，线索较弱。",
    ),
    "removed": ("removed {code}", "删除了 {code}"),
    "moved": (" (the code has since moved to `{path}`)", "（这段代码之后移到了 `{path}`）"),
    "what": (
        "A change to this code's dtype/device handling in a later release, likely the fix (confidence: {conf}).",
        "这是后续版本对这段代码 dtype/设备处理的改动，很可能就是修复（置信度：{conf}）。",
    ),
    "what.file": (
        "A later release's change to the code beside the failing function, not to it: a lead to check, not a likely "
        "fix (confidence: {conf}).",
        "这是后续版本对出错函数旁边的代码（而不是出错函数本身）的改动：值得一查的线索，未必就是修复（置信度：{conf}）。",
    ),
    "have.versions": ("you have {version}", "你装的是 {version}"),
    "have.minor": (
        "you have {version}, and the index keeps only the last patch of each minor release: {version} may already "
        "have this change",
        "你装的是 {version}；索引只收每个小版本的最后一个补丁版本，这处改动可能 {version} 里已经有了",
    ),
    "have.lines": (
        "no version given, and the lines in this traceback match {lib} {range}",
        "输入里没有版本号，traceback 中的代码行与 {lib} {range} 一致",
    ),
    "have.text": (
        "no version given; the failing lines' text (not their line numbers: a source checkout or an edited copy) is "
        "that of {lib} {range}",
        "输入里没有版本号；出错行的内容与 {lib} {range} 一致，但行号对不上（源码安装或改过的副本）",
    ),
    "high": ("high", "高"),
    "medium": ("medium", "中"),
    "low": ("low", "低"),
    "coverage": (
        "fix-history index: built {built}, {n} libraries ({libs})",
        "修复历史索引：{built} 生成，覆盖 {n} 个库（{libs}）",
    ),
}


def _w(key: str, lang: str, **values: object) -> str:
    en, zh = _WORDS[key]
    return (zh if lang == "zh" else en).format(**values)


def _short(text: str) -> str:
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"


def _code(change: Change, failed: str, lang: str) -> str:
    """The added line to quote: for a change to the failing line, the one most like it (a change can touch several
    places of a function); otherwise the first."""
    added = [line for line in change.new if line]
    if added and change.closeness == "line" and failed:
        from difflib import SequenceMatcher  # only when there is an answer: start-up does not pay for it

        return code_span(_short(max(added, key=lambda line: SequenceMatcher(None, line, failed).ratio())))
    if added:
        return code_span(_short(added[0]))
    removed = [line for line in change.old if line]
    return _w("removed", lang, code=code_span(_short(removed[0]))) if removed else ""


def _pr(change: Change, lang: str) -> str:
    if not change.pr:
        return ""
    return f"（#{change.pr}）" if lang == "zh" else f" (#{change.pr})"


def _range(frame: FrameHistory) -> str:
    if not frame.matching:
        return str(frame.installed)
    first, last = frame.matching[0], frame.matching[-1]
    return first if first == last else f"{first}–{last}"


def _sentence(frame: FrameHistory, change: Change, lang: str) -> str:
    if frame.installed_from in ("lines", "text"):
        have = _w(f"have.{frame.installed_from}", lang, lib=frame.library, range=_range(frame))
    else:
        have = _w("have.versions" if change.sure else "have.minor", lang, version=frame.installed)
    moved = _w("moved", lang, path=change.moved_to) if change.moved_to else ""
    return _w(
        change.closeness,
        lang,
        lib=frame.library,
        release=change.release,
        code=_code(change, frame.code, lang),
        pr=_pr(change, lang) + moved,
        have=have,
        function=change.function,
        failed=frame.function,
    )


def history_lines(report: Report, lang: str, *, brief: bool = False) -> list[str]:
    """The first-screen lines for the report's fix history; nothing when no later release changed the code.

    ``brief`` (a specific cause's first screen, whose own fix is already shown): a low-confidence lead (a change
    beside the failing function, not in it) is left to ``--details``."""
    if not report.history:
        return []
    from dtypefix.matcher.history import best_change, shown

    first = shown(report.history, _SHOWN)
    if brief and best_change(first[0]).confidence == "low":
        return []
    lines = [_w("label", lang), ""]
    for frame in first:
        lines.append(f"- {_sentence(frame, best_change(frame), lang)}")
    top = best_change(first[0])
    what = "what.file" if top.closeness == "file" else "what"
    lines += ["", _w(what, lang, conf=_w(top.confidence, lang)), ""]
    return lines


def history_json(report: Report) -> list[dict[str, Any]]:
    """The ``history`` list of the JSON output (documented in docs/json-output.md)."""
    return [
        {
            "library": f.library,
            "file": f.path,
            "line": f.line,
            "function": f.function,
            "installed": f.installed,
            "installed_from": f.installed_from,
            "matching_releases": [f.matching[0], f.matching[-1]] if f.matching else [],
            "changes": [
                {
                    "release": c.release,
                    "function": c.function,
                    "old": list(c.old),
                    "new": list(c.new),
                    "pr": c.pr or None,
                    "subject": c.subject or None,
                    "closeness": c.closeness,
                    "confidence": c.confidence,
                    "moved_to": c.moved_to or None,
                }
                for c in f.changes
            ],
        }
        for f in report.history
    ]


def history_schema() -> dict[str, Any]:
    """The JSON Schema of the ``history`` list (part of ``docs/json-output.schema.json``)."""
    strings = {"type": "array", "items": {"type": "string"}}
    change = {
        "type": "object",
        "required": ["release", "function", "old", "new", "pr", "subject", "closeness", "confidence"],
        "properties": {
            "release": {"type": "string"},
            "function": {"type": "string"},
            "old": strings,
            "new": strings,
            "pr": {"type": ["integer", "null"]},
            "subject": {"type": ["string", "null"]},
            "closeness": {"enum": ["line", "near", "function", "file"]},
            "confidence": {"enum": ["high", "medium", "low"]},
            "moved_to": {"type": ["string", "null"]},
        },
    }
    frame = {
        "type": "object",
        "required": [
            "library",
            "file",
            "line",
            "function",
            "installed",
            "installed_from",
            "matching_releases",
            "changes",
        ],
        "properties": {
            "library": {"type": "string"},
            "file": {"type": "string"},
            "line": {"type": "integer"},
            "function": {"type": "string"},
            "installed": {"type": "string"},
            "installed_from": {"enum": ["versions", "lines", "text"]},
            "matching_releases": {**strings, "maxItems": 2},
            "changes": {"type": "array", "items": change},
        },
    }
    return {"type": "array", "items": frame}


def coverage_line(lang: str = "en") -> str:
    """What the shipped fix-history index covers, for ``dtypefix --version``."""
    from dtypefix.matcher.history import coverage

    cover = coverage()
    if not cover.libraries:
        return ""
    libs = ", ".join(f"{name} {first}–{last}" for name, first, last, _ in cover.libraries)
    return _w("coverage", lang, built=cover.built, n=len(cover.libraries), libs=libs)
