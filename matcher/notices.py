"""A deprecation notice that scrolled by in a run's log is not a failure to explain.

``FutureWarning`` / ``DeprecationWarning`` lines (``torch.cuda.amp.autocast(args...)`` is deprecated ...) are printed
by healthy runs every day. Pasted on their own they are a question about the notice, and the entry that explains it
answers; inside a log that shows no exception and goes on printing after them, they are noise, and an answer built
on them alone would be a false alarm. Pure functions over the incident and the scored matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .evidence import Outcome
from .incident import Incident
from .observation import Origin, TextSeen
from .regex import lazy_regex
from .result import Confidence, Match

__all__ = ["notice_matches", "notices_only"]

_NOTICE = lazy_regex(r"\b(?:Future|Deprecation|PendingDeprecation)Warning\b")


def _notice_lines(lines: list[str]) -> tuple[set[int], int]:
    """Indexes of the deprecation-warning lines and of the source line Python prints under each; and how many other
    non-empty lines there are."""
    notices: set[int] = set()
    for index, line in enumerate(lines):
        if _NOTICE.search(line):
            notices.add(index)
            if index + 1 < len(lines) and lines[index + 1].startswith((" ", "\t")):
                notices.add(index + 1)  # `warnings` shows the calling line, indented, under the message
    others = sum(1 for index, line in enumerate(lines) if line.strip() and index not in notices)
    return notices, others


def _anchored_on_a_notice(match: Match, lines: list[str], notices: set[int]) -> bool:
    """Whether the match's anchor is text read in the log (no exception) that lies on a deprecation-warning line."""
    for evidence in match.evidence:
        if evidence.kind != "error" or evidence.outcome is not Outcome.HELD:
            continue
        if evidence.where is None or evidence.where.origin is not Origin.LOG:
            return False
        seen = evidence.observed.text if isinstance(evidence.observed, TextSeen) else ""
        first = seen.splitlines()[0] if seen.strip() else ""
        return bool(first) and any(first in lines[index] for index in notices)
    return False


def _is_warning(exc_type: str) -> bool:
    return exc_type.rsplit(".", 1)[-1].endswith("Warning")


_WARNING_PREFIX = lazy_regex(r"\b\w*Warning: *$")


def _on_a_warning(match: Match, lines: list[str]) -> bool:
    """Whether the match's anchor is a warning's message: typed (``UserWarning: ...``) or read from a line that
    ``warnings`` printed (``grad_scaler.py:118: UserWarning: GradScaler is enabled, but ...``)."""
    for evidence in match.evidence:
        if evidence.kind == "error" and evidence.outcome is Outcome.HELD:
            seen = evidence.observed.text if isinstance(evidence.observed, TextSeen) else ""
            if _is_warning(seen.split(":", 1)[0].strip()):
                return True
            first = seen.splitlines()[0].strip() if seen.strip() else ""
            return bool(first) and any(
                first in line and _WARNING_PREFIX.search(line.split(first, 1)[0]) for line in lines
            )
    return False


def notice_matches(incident: Incident, matches: Sequence[Match]) -> list[Match]:
    """``matches`` as a notice allows them: none when nothing failed (no exception named), the log printed more than
    deprecation notices and every match stands only on such a notice (a healthy run gets no answer); otherwise those
    that stand on a notice at low confidence — pasted on its own a notice is a question about it, and the entry that
    explains it answers, but never as a likely cause (medium or high) of a failure."""
    if not matches:
        return []
    if any(exc_type for exc_type, _ in incident.exceptions):
        # An exception was raised: something failed (a short paste's untyped lines name none). A warning printed on
        # the way is context, not the failure, when the traceback ends in another exception: low at most.
        if not any(s.exc_type and not _is_warning(s.exc_type) for s in incident.stacks):
            return list(matches)
        lines = incident.text.splitlines()
        return [replace(m, confidence=Confidence.LOW) if _on_a_warning(m, lines) else m for m in matches]
    lines = incident.text.splitlines()
    notices, others = _notice_lines(lines)
    if not notices:
        return list(matches)
    on_notice = [_anchored_on_a_notice(match, lines, notices) for match in matches]
    if others and all(on_notice):
        return []
    return [replace(m, confidence=Confidence.LOW) if low else m for m, low in zip(matches, on_notice, strict=True)]


def notices_only(incident: Incident, matches: Sequence[Match]) -> bool:
    """True when the matches stand only on a healthy run's deprecation notices: the run gets no answer."""
    return bool(matches) and not notice_matches(incident, matches)
