"""``log``: a line anywhere in the input (a warning printed before the crash, a banner)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..evidence import Evidence, Outcome, Reason
from ..facts import Input
from ..observation import Origin, Place, TextSeen
from ..regex import Pattern
from .base import Kind, item_schema, parse_pattern, parse_required, parse_weight

if TYPE_CHECKING:
    from ..incident import Incident

__all__ = ["KIND", "LogCondition"]


@dataclass(frozen=True)
class LogCondition:
    """A line anywhere in the input (a warning printed before the crash, a banner)."""

    kind: ClassVar[str] = "log"
    decider: ClassVar[str] = Input.LOG
    regex: Pattern = field(compare=False)
    pattern: str
    weight: float = 2.0
    required: bool = False

    @property
    def label(self) -> str:
        return f"/{self.pattern}/"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> LogCondition:
        return cls(
            parse_pattern(item.get("pattern"), where, f"{field}.pattern"),
            item["pattern"],
            parse_weight(item, where, field),
            parse_required(item, where, field),
        )

    def evaluate(self, incident: Incident) -> Evidence:
        found = self.regex.search(incident.text)
        if found:
            return Evidence(self, Outcome.HELD, Reason.MATCHED, TextSeen(found.group(0)[:160]), Place(Origin.LOG))
        return Evidence(self, Outcome.UNKNOWN, Reason.NOT_IN_LOG)


KIND = Kind(
    key="log",
    name="log",
    condition=LogCondition,
    parse=LogCondition.parse,
    schema=item_schema({"pattern": {"type": "string", "minLength": 1}}, ("pattern",)),
    fields=("pattern",),
    doc="A `pattern` regex anywhere in the input (a warning printed before the crash); absent is unknown, since "
    "the input may be only part of the log.",
)
