"""``gpu_memory``: the smallest GPU has less memory than a bound (``below_gib: 24``).

Some causes only bite on small cards (a fallback that materialises a full-precision copy, an offload default that
differs by card size). The size is read from what a user pastes anyway: ``nvidia-smi``'s table
(``2079MiB / 6144MiB``) or torch's out-of-memory message (``GPU 0 has a total capacity of 79.18 GiB``); see
:attr:`~dtypefix.matcher.hardware.Hardware.memory_gib`. A card sold as "24 GB" reports 23.99 GiB, so a bound is
written in GiB, strictly below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..evidence import Evidence, Outcome, Reason
from ..facts import Input
from ..observation import Origin, Place, ValueSeen
from .base import EntryError, Kind, item_schema, parse_required, parse_weight

if TYPE_CHECKING:
    from ..incident import Incident

__all__ = ["KIND", "GpuMemoryCondition"]


@dataclass(frozen=True)
class GpuMemoryCondition:
    """The smallest GPU the input shows has less than :attr:`below_gib` GiB of memory."""

    kind: ClassVar[str] = "gpu_memory"
    decider: ClassVar[str] = Input.GPU
    below_gib: float
    weight: float = 2.0
    required: bool = False

    @property
    def label(self) -> str:
        return f"gpu.memory_gib < {self.below_gib:g}"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> GpuMemoryCondition:
        bound = item.get("below_gib")
        if not isinstance(bound, int | float) or isinstance(bound, bool) or not 0 < bound <= 4096:
            raise EntryError(where, f"{field}.below_gib", f"must be a number of GiB above 0, not {bound!r}")
        return cls(float(bound), parse_weight(item, where, field), parse_required(item, where, field))

    def evaluate(self, incident: Incident) -> Evidence:
        sizes = incident.hardware.memory_gib
        if not sizes:
            return Evidence(self, Outcome.UNKNOWN, Reason.NOT_GIVEN)
        smallest = min(sizes)
        outcome = Outcome.HELD if smallest < self.below_gib else Outcome.FAILED
        return Evidence(self, outcome, Reason.FOUND, ValueSeen(smallest), Place(Origin.LOG))


KIND = Kind(
    key="gpu_memory",
    name="gpu_memory",
    condition=GpuMemoryCondition,
    parse=GpuMemoryCondition.parse,
    schema=item_schema({"below_gib": {"type": "number", "exclusiveMinimum": 0, "maximum": 4096}}, ("below_gib",)),
    fields=("below_gib",),
    doc="The smallest GPU has less than `below_gib` GiB of memory, read from `nvidia-smi`'s table or torch's "
    "out-of-memory message (a card sold as 24 GB reports 23.99 GiB).",
    checked=True,
    decides=True,
    asks=True,
)
