"""Where evidence becomes words: each kind of condition and each reason, in English and Chinese.

The matcher hands over data (:class:`~dtypefix.matcher.Evidence`: condition, outcome, reason, what was observed and
where); this module says it the way a user can check it — "your DeepSpeed config sets
``zero_quantized_weights: true``", "deepspeed 0.14.2 is installed (pip freeze)", "the error passed through
``deepspeed/runtime/zero/stage3.py:123``" — never as a regex. Patterns that must be named (a frame that was not
found) are turned back into readable templates by :func:`readable`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from dtypefix.matcher import Evidence, Outcome, Reason
from dtypefix.matcher.conditions import (
    ConfigCondition,
    EnvCondition,
    ErrorCondition,
    FixedCondition,
    FrameCondition,
    GpuMemoryCondition,
    LogCondition,
    PackageCondition,
    show,
)
from dtypefix.matcher.facts import NAMESPACES
from dtypefix.matcher.observation import FrameSeen, Note, Origin, Place, TextSeen, ValueSeen

from .fence import code_span
from .i18n import has, t

__all__ = ["code_span", "decider_words", "describe", "note_words", "place_words", "readable", "seen_words", "worded"]

_CLASS_ESCAPES = frozenset("dswDSWbB")
_QUANTIFIERS = frozenset("*+?")


def _group_end(pattern: str, start: int) -> int:
    """Index of the ``)`` closing the group opened at ``start``."""
    depth, i = 0, start
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _class_end(pattern, i)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(pattern) - 1


def _class_end(pattern: str, start: int) -> int:
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i


def _split_top(pattern: str) -> list[str]:
    """Top-level alternatives of a pattern."""
    parts, depth, current, i = [], 0, [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            current.append(pattern[i : i + 2])
            i += 2
            continue
        if char == "[":
            end = _class_end(pattern, i)
            current.append(pattern[i : end + 1])
            i = end + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append("".join(current))
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    parts.append("".join(current))
    return parts


def _skip_quantifier(pattern: str, i: int) -> int:
    if i < len(pattern) and pattern[i] in _QUANTIFIERS:
        i += 1
        if i < len(pattern) and pattern[i] == "?":
            i += 1
    elif i < len(pattern) and pattern[i] == "{":
        end = pattern.find("}", i)
        if end != -1 and all(c.isdigit() or c == "," for c in pattern[i + 1 : end]):
            i = end + 1
    return i


def _sequence(pattern: str, most: int = 0) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(" " if nxt == "s" else "…" if nxt in _CLASS_ESCAPES else nxt)
            i = _skip_quantifier(pattern, i + 2)
            if nxt in "bB":
                out.pop()
            continue
        if char == "[":
            i = _skip_quantifier(pattern, _class_end(pattern, i) + 1)
            out.append("…")
            continue
        if char == "(":
            end = _group_end(pattern, i)
            inner = pattern[i + 1 : end]
            name = ""
            if inner.startswith("?P<"):
                name, _, inner = inner[3:].partition(">")
            elif inner.startswith("?"):
                inner = inner.split(":", 1)[1] if ":" in inner.split(")")[0] else ""
            i = end + 1
            optional = i < len(pattern) and pattern[i] in "?*"
            i = _skip_quantifier(pattern, i)
            if name:
                out.append(f"<{name}>")
            elif not optional:
                alternatives = list(dict.fromkeys(_sequence(part, most) for part in _split_top(inner)))
                if "" in alternatives:  # `(?:x|)` or `(?:…|$)`: optional, like `(?:x)?`, so it says nothing to a reader
                    continue
                if most and len(alternatives) > most:
                    alternatives = [*alternatives[:most], "…"]
                out.append(alternatives[0] if len(alternatives) == 1 else "{" + ", ".join(alternatives) + "}")
            continue
        if char in "^$":
            i += 1
            continue
        if char == ".":
            i = _skip_quantifier(pattern, i + 1)
            out.append("…")
            continue
        i = _skip_quantifier(pattern, i + 1)
        out.append(char)
    text = "".join(out)
    text = re.sub(r"\s+", " ", text)
    while "……" in text:
        text = text.replace("……", "…")
    return text.strip()


def readable(pattern: str, lang: str = "en", most: int = 0) -> str:
    """A regex as a template a person reads (``(?P<left>\\w+) != \\S+`` -> ``<left> != …``); alternatives joined.

    ``most`` > 0 keeps that many alternatives of a group and an ellipsis for the rest: an answer's evidence line wants
    the gist (``torch.{tensor, Tensor, as_tensor, …}``), the reference page the whole list.
    """
    if pattern.startswith("(?i)"):
        pattern = pattern[4:]
    alternatives = [_sequence(part, most) for part in _split_top(pattern)]
    return t("or.join", lang).join(dict.fromkeys(a for a in alternatives if a))


_code = code_span


def place_words(where: Place | None, lang: str) -> str:
    """Where something was read, in words: a config file by its name, every other origin in ``lang``."""
    if where is None:
        return ""
    if where.origin is Origin.CONFIG:
        return where.file
    return t(f"origin.{where.origin.name.lower()}", lang)


def note_words(note: Note, lang: str) -> str:
    """A config that could not be read, framed in ``lang``; the reason is the reader's own (English) words."""
    where = f"{note.subject}:{note.line}" if note.line else note.subject
    return t("note.unreadable", lang, subject=where, problem=note.problem)


def seen_words(observed: object) -> str:
    """What the input showed, as text to quote (a value as JSON / YAML writes it)."""
    if isinstance(observed, ValueSeen):
        return show(observed.value)
    if isinstance(observed, TextSeen):
        return observed.text
    if isinstance(observed, FrameSeen):
        return f"{observed.short_path}:{observed.line} in {observed.function}"
    return ""


def _frame_target(condition: FrameCondition, lang: str) -> str:
    parts = []
    if condition.file_pattern:
        parts.append(_code(readable(condition.file_pattern, lang)))
    if condition.function_pattern:
        parts.append(t("frame.function", lang, function=_code(readable(condition.function_pattern, lang))))
    if condition.code_pattern:
        parts.append(t("frame.code", lang, code=_code(readable(condition.code_pattern, lang, most=4))))
    return " ".join(parts)


def _expected(condition: ConfigCondition | EnvCondition, key: str, lang: str) -> str:
    if condition.op == "exists":
        return _code(key)
    if condition.op == "matches":
        return t("op.matches", lang, name=_code(key), pattern=_code(readable(str(condition.value), lang)))
    return _code(f"{key} {condition.op} {show(condition.value)}")


def _config(evidence: Evidence, condition: ConfigCondition, lang: str) -> str:
    namespace, _, key = condition.path.partition(".")
    source = place_words(evidence.where, lang)
    if namespace == "precision":
        verb = {Outcome.HELD: "precision.yes", Outcome.FAILED: "precision.no"}.get(
            evidence.outcome, "precision.unknown"
        )
        return t(verb, lang, precision=key, source=source)
    spec = NAMESPACES[namespace]
    where = t(f"ns.{namespace}", lang) if has(f"ns.{namespace}") else t("ns.config", lang, title=spec.title)
    expected = _expected(condition, key, lang)
    reason = evidence.reason
    observed = evidence.observed
    if reason is Reason.FOUND:
        sets = t("config.sets", lang, where=where, setting=_code(f"{key}: {seen_words(observed)}"), source=source)
        if isinstance(observed, ValueSeen) and observed.auto is not None:
            sets += t("config.auto", lang, auto=place_words(observed.auto, lang))
        return sets if evidence.outcome is Outcome.HELD else sets + t("needs", lang, expected=expected)
    if reason is Reason.DEFAULT:
        line = t("config.default", lang, where=where, setting=_code(key), value=_code(seen_words(observed)))
        return line if evidence.outcome is Outcome.HELD else line + t("needs", lang, expected=expected)
    if reason is Reason.NOT_SET:
        return t("config.not_set", lang, where=where, setting=_code(key), source=source)
    if reason is Reason.AUTO_UNRESOLVED:
        return t("config.auto_unresolved", lang, where=where, setting=_code(key), source=source)
    return t("config.absent", lang, where=where, expected=expected)


def _env(evidence: Evidence, condition: EnvCondition, lang: str) -> str:
    what = t(f"env.{condition.key}", lang)
    expected = _expected(condition, condition.key, lang)
    if evidence.reason is Reason.NOT_GIVEN:
        return t("env.absent", lang, what=what, expected=expected)
    line = t("env.is", lang, what=what, value=_code(seen_words(evidence.observed)))
    return line if evidence.outcome is Outcome.HELD else line + t("needs", lang, expected=expected)


def _package(evidence: Evidence, condition: PackageCondition, lang: str) -> str:
    if evidence.reason is Reason.NOT_GIVEN:
        return t("package.absent", lang, name=condition.name, spec=_code(condition.spec))
    key = "package.inside" if evidence.outcome is Outcome.HELD else "package.outside"
    version, source = seen_words(evidence.observed), place_words(evidence.where, lang)
    return t(key, lang, name=condition.name, version=version, source=source, spec=_code(condition.spec))


def _gpu_memory(evidence: Evidence, condition: GpuMemoryCondition, lang: str) -> str:
    bound = _code(f"< {condition.below_gib:g} GiB")
    if evidence.reason is Reason.NOT_GIVEN:
        return t("gpu_memory.absent", lang, expected=bound)
    line = t("gpu_memory.is", lang, value=_code(f"{seen_words(evidence.observed)} GiB"))
    return line if evidence.outcome is Outcome.HELD else line + t("needs", lang, expected=bound)


def _error(evidence: Evidence, condition: ErrorCondition, lang: str) -> str:
    from_log = evidence.where is not None and evidence.where.origin is Origin.LOG
    return t("error.log" if from_log else "error.held", lang, seen=_code(seen_words(evidence.observed)))


def _frame(evidence: Evidence, condition: FrameCondition, lang: str) -> str:
    frame = evidence.observed
    if evidence.outcome is Outcome.HELD and isinstance(frame, FrameSeen):
        where = _code(f"{frame.short_path}:{frame.line}")
        held = t("frame.held", lang, where=where, function=_code(frame.function))
        return held + t("frame.code_held", lang, code=_code(frame.code)) if frame.code else held
    reason = {Reason.NO_FRAMES: "frame.no_frames", Reason.PARTIAL_TRACEBACK: "frame.partial"}
    return t(reason.get(evidence.reason, "frame.absent"), lang, what=_frame_target(condition, lang))


def _log(evidence: Evidence, condition: LogCondition, lang: str) -> str:
    if evidence.outcome is Outcome.HELD:
        return t("log.held", lang, seen=_code(seen_words(evidence.observed)))
    return t("log.absent", lang, what=_code(readable(condition.pattern, lang)))


def _fixed(evidence: Evidence, condition: FixedCondition, lang: str) -> str:
    key = "fixed.held" if evidence.reason is Reason.FIXED else "fixed.before"
    return t(key, lang, name=condition.package, version=seen_words(evidence.observed), fixed=condition.version)


_WORDS: Mapping[type[Any], Callable[[Evidence, Any, str], str]] = MappingProxyType(
    {
        ErrorCondition: _error,
        FrameCondition: _frame,
        LogCondition: _log,
        PackageCondition: _package,
        ConfigCondition: _config,
        EnvCondition: _env,
        GpuMemoryCondition: _gpu_memory,
        FixedCondition: _fixed,
    }
)
"""How each kind of condition is said, by its class (a test requires an entry for every kind)."""


def worded(condition_type: type[Any]) -> bool:
    """Whether this module can say evidence of that condition class."""
    return condition_type in _WORDS


def describe(evidence: Evidence, lang: str) -> str:
    """One piece of evidence as a sentence a user can check against their own input."""
    return _WORDS[type(evidence.condition)](evidence, evidence.condition, lang)


def decider_words(key: str, lang: str) -> str:
    """The input that would settle an unknown, as a hint; a tool's config falls back to its namespace's title."""
    if has(f"decider.{key}"):
        return t(f"decider.{key}", lang)
    namespace = next((ns for ns in NAMESPACES.values() if ns.decider == key), None)
    return t("decider.config", lang, title=namespace.title if namespace is not None else key)
