"""``errors``: the anchor, an exception type and message regex. An entry is a candidate only when one matches."""

from __future__ import annotations

import bisect
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..evidence import Evidence, Outcome, Reason
from ..facts import Input
from ..observation import Origin, Place, TextSeen
from ..prefilter import leading_text
from ..regex import Pattern
from .base import Kind, item_schema, parse_pattern, parse_required, parse_weight

if TYPE_CHECKING:
    from ..incident import Incident

__all__ = ["KIND", "ErrorCondition", "ErrorHit"]


@dataclass(frozen=True)
class ErrorHit:
    """Where an error pattern matched."""

    groups: dict[str, str]
    """Named groups, to fill ``{{name}}`` in the entry's text."""
    seen: TextSeen
    """``Type: first line of the message``, or the matched text when found in the log without a type."""
    where: Place
    """The traceback (an exception or ``Type: message`` line) or the log (the message printed without a type)."""
    cut: bool = False
    """Matched as a message cut after its first clause: weaker than a whole match (:data:`~..score.CUT_WEIGHT`)."""

    def evidence(self, condition: ErrorCondition) -> Evidence:
        """The anchor's evidence: the pattern held, quoting what it matched and where."""
        return Evidence(condition, Outcome.HELD, Reason.MATCHED, self.seen, self.where)


@dataclass(frozen=True)
class ErrorCondition:
    """The anchor: an exception type and message regex. An entry is a candidate only when one of these matches."""

    kind: ClassVar[str] = "error"
    decider: ClassVar[str] = Input.TRACEBACK
    message: Pattern = field(compare=False)
    pattern: str
    """The regex as written (for JSON and lint; never shown to readers)."""
    type: Pattern | None = field(default=None, compare=False)
    type_pattern: str = ""
    weight: float = 2.0
    required: bool = False
    keyword: str = ""
    """A whole word every match of ``message`` contains (lower case), as the catalog's keyword index chose it;
    empty when none is known. No message without it can match, so :meth:`find` skips the messages then."""
    scan: Pattern | None = field(default=None, compare=False)
    """The pattern for a scan over the joined messages (``Incident.message_index``): with ``^`` and ``$`` at every
    line, so its first match lies in or before the first message that matches on its own (a match across a
    separator only makes the per-message search start earlier); None for ``\\A`` / ``\\z``, which cannot be."""

    @functools.cached_property
    def lead(self) -> tuple[str, bool]:
        """The literal text every match starts with (lower case when the pattern ignores case; see
        :func:`~..prefilter.leading_text`), and whether it ignores case: a bare message that is a long enough prefix
        of it was cut after its first clause, and still matches. Worked out on first use: Python's regex parser
        takes about 0.15 ms a pattern, and a start-up builds some 250 patterns of which a cut paste needs a few."""
        text, ignores_case = leading_text(self.pattern)
        return (text.lower() if ignores_case else text), ignores_case

    @property
    def label(self) -> str:
        return f"{self.type_pattern}: /{self.pattern}/" if self.type_pattern else f"/{self.pattern}/"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> ErrorCondition:
        typed = item.get("type")
        message = parse_pattern(item.get("message"), where, f"{field}.message")
        written = item["message"]
        scan: Pattern | None = message
        if any(mark in written for mark in ("\\A", "\\z", "\\Z")):
            scan = None
        elif "^" in written or "$" in written:
            scan = parse_pattern(f"(?m){written}", where, f"{field}.message")
        return cls(
            message=message,
            scan=scan,
            pattern=written,
            type=parse_pattern(typed, where, f"{field}.type") if typed else None,
            type_pattern=typed or "",
            weight=parse_weight(item, where, field),
            required=parse_required(item, where, field),
        )

    def find(self, incident: Incident) -> ErrorHit | None:
        """The first exception (typed), or failing that the first place in the text (untyped only), that matches.

        A pattern without ``type`` may be printed without an exception type ("Inference failed: <message>", a
        warning turned fatal, prose around a pasted message), so it also searches the whole text — but only when the
        input holds no exception of its own, or the match starts on an exception's own line (a multi-line message
        read whole): a harmless warning must not claim a log that failed with a KeyError.
        """
        exceptions = incident.exceptions
        skip = 0
        if self.keyword and self.keyword not in incident.message_words:
            skip = len(exceptions)  # no message holds the word every match needs: nothing to compile or search
        elif self.scan is not None:
            # One scan skips the exceptions before the first place the pattern matches at all (a flood of 100k
            # distinct tracebacks then costs one search, not one per exception).
            joined, starts = incident.message_index
            anywhere = self.scan.search(joined)
            skip = bisect.bisect_right(starts, anywhere.start()) - 1 if anywhere else len(exceptions)
        for exc_type, message in exceptions[skip:]:
            short = exc_type.rsplit(".", 1)[-1]
            # An empty type is unknown (a message pasted without it): the message alone has to match.
            if self.type is not None and exc_type and not (self.type.search(short) or self.type.search(exc_type)):
                continue
            found = self.message.search(message)
            if found:
                first = message.splitlines()[0][:200] if message.strip() else ""
                seen = TextSeen(f"{short}: {first}" if short else first)
                return ErrorHit(_groups(found), seen, Place(Origin.TRACEBACK))
        if self.type is None and (not self.keyword or self.keyword in incident.lowered_text):
            found = self.message.search(incident.text)
            if found and (not incident.has_own_exception or _continues_an_exception(found.group(0), incident)):
                return ErrorHit(_groups(found), TextSeen(found.group(0)[:200]), Place(Origin.LOG))
        return self._cut(incident)

    def _cut(self, incident: Incident) -> ErrorHit | None:
        """A message pasted without its type and cut after its first clause ("mat1 and mat2 must have the same
        dtype"): the start of the pattern's literal text, long enough (a few words) to say which message it is.
        Only an input without an exception of its own is read so (a short paste; a log's typed error is the error)."""
        if incident.has_own_exception or all(exc_type for exc_type, _ in incident.exceptions):
            return None
        lead, ignores_case = self.lead
        if len(lead) <= _MIN_CUT:
            return None
        for exc_type, message in incident.exceptions:
            if exc_type:
                continue  # a typed line is the whole message as printed
            cut = message.strip().rstrip(".,;:")
            if "\n" in cut or len(cut) < _MIN_CUT or len(cut.split()) < 3 or len(cut) >= len(lead):
                continue
            if lead.startswith(cut.lower() if ignores_case else cut):
                return ErrorHit({}, TextSeen(cut[:200]), Place(Origin.TRACEBACK), cut=True)
        return None

    def evaluate(self, incident: Incident) -> Evidence:
        hit = self.find(incident)
        return Evidence(self, Outcome.FAILED, Reason.ABSENT) if hit is None else hit.evidence(self)


_MIN_CUT = 20
"""The shortest first clause read as a cut message (shorter ones, "Expected a tensor", name no message)."""


def _continues_an_exception(matched: str, incident: Incident) -> bool:
    first = matched.lstrip().splitlines()[0].strip() if matched.strip() else ""
    return bool(first) and any(
        first in message or message.splitlines()[0].strip() in first
        for _, message in incident.exceptions
        if message.strip()
    )


def _groups(found: Any) -> dict[str, str]:
    return {k: v for k, v in found.groupdict().items() if v is not None}


KIND = Kind(
    key="errors",
    name="error",
    condition=ErrorCondition,
    parse=ErrorCondition.parse,
    schema=item_schema(
        {"type": {"type": "string", "minLength": 1}, "message": {"type": "string", "minLength": 1}}, ("message",)
    ),
    fields=("type", "message"),
    doc="The anchor: an exception `type` (regex, optional) and `message` regex; an entry is a candidate only when "
    "one matches, and the heaviest that matches counts.",
    anchor=True,
)
