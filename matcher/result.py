"""What scoring produces: matches that explain themselves.

A match never travels as a bare number. Each carries the evidence that made it: every condition of the entry,
whether it held, failed or is unknown, what was found, and for unknowns the input that would settle it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from .entry import KBEntry
from .evidence import Evidence, Reason
from .incident import Incident
from .location import Location
from .scope import OutOfScope

if TYPE_CHECKING:
    from .history import FrameHistory  # a field's type only: the index reader is imported when it is used

__all__ = ["Confidence", "Decider", "Match", "Report"]


class Confidence(str, Enum):
    """How sure a match is (the thresholds are :mod:`.score`'s rules); the renderers word each one."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    def __str__(self) -> str:
        return self.value  # f-strings and reports print "high", not "Confidence.HIGH", on every Python


@dataclass(frozen=True)
class Match:
    """One entry that fits the incident, with its score and reasons."""

    entry: KBEntry
    score: float
    confidence: Confidence
    evidence: tuple[Evidence, ...]
    groups: dict[str, str] = field(default_factory=dict)
    """Named groups of the error pattern that matched, used to fill ``{{name}}`` in the entry's text."""

    @property
    def fixed(self) -> Evidence | None:
        """The evidence that the installed version already contains the fix, if it does."""
        return next((e for e in self.evidence if e.reason is Reason.FIXED), None)


@dataclass(frozen=True)
class Decider:
    """An input the user could add that would tell close candidates apart."""

    key: str
    """What to pass (``freeze``, ``gpu``, ``deepspeed-config`` ...; see :class:`~dtypefix.matcher.facts.Input`);
    the renderers word it."""
    entries: tuple[str, ...]
    """Ids of the candidates whose unknown conditions it would settle."""


@dataclass(frozen=True)
class Report:
    """The whole answer for one input: what was read, what matched, what would help decide."""

    incident: Incident
    matches: tuple[Match, ...]
    deciders: tuple[Decider, ...] = ()
    kb_problems: tuple[str, ...] = ()
    out_of_scope: OutOfScope | None = None
    """When nothing matched: the kind of non-dtype failure the error is (out of memory, NCCL...), if known."""
    conditional: tuple[Match, ...] = ()
    """``check`` only: entries that would apply if an input not given (a version, the GPU) said so."""
    history: tuple[FrameHistory, ...] = ()
    """Library frames of the failing stack (innermost first) whose function a later release changed (its
    dtype/device lines): see :mod:`.history`."""
    location: Location | None = None
    """Where it broke: the failing line, whose code it is, and the operands (``None`` when the input shows none)."""

    @property
    def found(self) -> bool:
        return bool(self.matches)
