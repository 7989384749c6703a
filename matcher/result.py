"""What scoring produces: matches that explain themselves.

A match never travels as a bare number. Each carries the evidence that made it: every condition of the entry,
whether it held, failed or is unknown, what was found, and for unknowns the input that would settle it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .entry import KBEntry
from .incident import Incident

__all__ = ["Decider", "Evidence", "Match", "Report"]


@dataclass(frozen=True)
class Evidence:
    """One condition of an entry, checked against the incident."""

    status: str
    """``held``, ``failed`` or ``unknown``."""
    kind: str
    """``error``, ``frame``, ``log``, ``package``, ``config``, ``env`` or ``fixed``."""
    label: str
    """The condition in words (``deepspeed.bf16.enabled == true``)."""
    detail: str
    """What the input showed (``true in ds_config.json``), or why it is unknown."""
    weight: float
    decider: str = ""
    """For unknowns: the input that would decide it (a key of :data:`dtypefix.matcher.score.DECIDERS`)."""


@dataclass(frozen=True)
class Match:
    """One entry that fits the incident, with its score and reasons."""

    entry: KBEntry
    score: float
    confidence: str
    """``high``, ``medium`` or ``low``."""
    evidence: tuple[Evidence, ...]
    groups: dict[str, str] = field(default_factory=dict)
    """Named groups of the error pattern that matched, used to fill ``{{name}}`` in the entry's text."""
    fixed_note: str = ""
    """Set when the installed version already contains the fix."""


@dataclass(frozen=True)
class Decider:
    """An input the user could add that would tell close candidates apart."""

    key: str
    """``deepspeed-config``, ``freeze``, ``gpu``..."""
    hint: str
    """What to pass, in English (the renderer translates by key)."""
    entries: tuple[str, ...]
    """Ids of the candidates whose unknown conditions it would settle."""


@dataclass(frozen=True)
class Report:
    """The whole answer for one input: what was read, what matched, what would help decide."""

    incident: Incident
    matches: tuple[Match, ...]
    deciders: tuple[Decider, ...] = ()
    kb_problems: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return bool(self.matches)
