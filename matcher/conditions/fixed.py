"""From ``fixed_in`` (not a ``match`` key): the cause is unlikely when the installed version already contains the
fix. Built by :mod:`..entry`, one per package; it only ever counts against an entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..evidence import Evidence, Outcome, Reason
from ..facts import Input
from .package import installed

if TYPE_CHECKING:
    from ..incident import Incident

__all__ = ["FixedCondition"]


@dataclass(frozen=True)
class FixedCondition:
    """From ``fixed_in``: the cause is unlikely when the installed version already contains the fix."""

    kind: ClassVar[str] = "fixed"
    decider: ClassVar[str] = Input.FREEZE
    package: str
    version: str
    weight: float = 2.0
    required: bool = False

    @property
    def label(self) -> str:
        return f"{self.package}<{self.version}"

    def evaluate(self, incident: Incident) -> Evidence:
        from packaging.version import InvalidVersion, Version

        version, printed, origin = installed(incident, self.package)
        if version is None:
            return Evidence(self, Outcome.UNKNOWN, Reason.NOT_GIVEN)
        try:
            fixed = Version(self.version)
        except InvalidVersion:
            return Evidence(self, Outcome.UNKNOWN, Reason.NOT_GIVEN)
        if version >= fixed:
            return Evidence(self, Outcome.FAILED, Reason.FIXED, printed, origin)
        return Evidence(self, Outcome.HELD, Reason.FOUND, printed, origin)
