"""Evidence: one condition of an entry checked against one incident, as data the renderers put into words.

The matcher never writes sentences: an :class:`Evidence` says *which* condition, *what* came out
(:class:`Outcome`), *why* (:class:`Reason`), what the input showed (a typed :mod:`.observation`) and where
(:class:`~.observation.Place`). ``cli/evidence_words.py`` turns that into English or Chinese; the JSON output
carries it as fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .incident import Incident
    from .observation import Observation, Place

__all__ = ["Condition", "Evidence", "Outcome", "Reason"]


class Outcome(str, Enum):
    """Whether a condition held. Unknown is not a no: the input did not say."""

    HELD = "held"
    FAILED = "failed"
    UNKNOWN = "unknown"


class Reason(str, Enum):
    """Why a condition came out as it did; each has its own wording in the renderers."""

    MATCHED = "matched"
    """An error, frame or log pattern was found (``observed`` quotes what)."""
    ABSENT = "absent"
    """A frame is not in a whole traceback."""
    NO_FRAMES = "no-frames"
    """The input has no traceback frames at all."""
    PARTIAL_TRACEBACK = "partial-traceback"
    """The traceback was cut: a missing frame may have been trimmed away."""
    NOT_IN_LOG = "not-in-log"
    """A log pattern is not in the input (which may be only part of the log)."""
    FOUND = "found"
    """A config value, package version or environment fact was read and compared."""
    DEFAULT = "default"
    """The config of that tool was given without the key; the tool's default was compared."""
    NOT_SET = "not-set"
    """The config of that tool was given without the key, and no default applies."""
    NO_CONFIG = "no-config"
    """No config of that tool is in the input."""
    AUTO_UNRESOLVED = "auto-unresolved"
    """The key is ``"auto"`` and nothing in the input says what the launcher fills in."""
    NOT_GIVEN = "not-given"
    """A package version or environment fact is not in the input."""
    FIXED = "fixed"
    """The installed version already contains the fix."""


class Condition(Protocol):
    """What scoring and rendering ask of any condition, whatever its kind (one module each in :mod:`.conditions`)."""

    @property
    def kind(self) -> str:
        """The evidence kind (``frame``, ``config`` ...): the JSON ``kind`` and the key of its words."""

    @property
    def weight(self) -> float: ...

    @property
    def required(self) -> bool:
        """A required condition that fails removes the entry."""

    @property
    def decider(self) -> str:
        """The input that would settle it when unknown (an :class:`~dtypefix.matcher.facts.Input` key)."""

    @property
    def label(self) -> str:
        """The condition in code form, for machines (JSON); readers get :mod:`dtypefix.cli.evidence_words`."""

    def evaluate(self, incident: Incident) -> Evidence: ...


@dataclass(frozen=True)
class Evidence:
    """One condition of an entry, checked against the incident."""

    condition: Condition
    outcome: Outcome
    reason: Reason
    observed: Observation | None = None
    """What the input showed: a frame, a value or version, or the matched text; None when nothing was seen."""
    where: Place | None = None
    """Where it was read (also for a config that was given without the key); None when nothing says."""

    @property
    def weight(self) -> float:
        return self.condition.weight

    @property
    def kind(self) -> str:
        """``error``, ``frame``, ``log``, ``package``, ``config``, ``env`` or ``fixed``."""
        return self.condition.kind

    @property
    def decider(self) -> str | None:
        """For an unknown: the input that would settle it."""
        return self.condition.decider if self.outcome is Outcome.UNKNOWN else None
