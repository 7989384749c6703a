"""``env``: a hardware / environment fact (``gpu.min_compute_capability < 8.0``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..evidence import Evidence, Outcome, Reason
from ..facts import ENV_KEYS, Input, env_fact
from ..observation import ValueSeen
from .base import EntryError, Kind, item_schema, parse_plain, parse_required, parse_weight
from .values import OPS, check_op, check_typed, compare, show

if TYPE_CHECKING:
    from ..incident import Incident

__all__ = ["KIND", "EnvCondition"]


@dataclass(frozen=True)
class EnvCondition:
    """A hardware / environment fact (``gpu.min_compute_capability < 8.0``)."""

    kind: ClassVar[str] = "env"
    decider: ClassVar[str] = Input.GPU
    key: str
    op: str = "=="
    value: Any = None
    weight: float = 2.0
    required: bool = False

    @property
    def label(self) -> str:
        return f"{self.key} {self.op} {show(self.value)}"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> EnvCondition:
        key = item.get("key")
        spec = ENV_KEYS.get(key) if isinstance(key, str) else None
        if spec is None:
            raise EntryError(where, f"{field}.key", f"unknown environment key {key!r} (one of {', '.join(ENV_KEYS)})")
        op = item.get("op", "==")
        value = parse_plain(item.get("value"), where, f"{field}.value")
        check_op(op, value, "value" in item, where, field)
        check_typed(spec.type, op, value, where, field, spec.name, spec.words)
        return cls(spec.name, op, value, parse_weight(item, where, field), parse_required(item, where, field))

    def evaluate(self, incident: Incident) -> Evidence:
        fact = env_fact(incident, self.key)
        if not fact.known:
            return Evidence(self, Outcome.UNKNOWN, Reason.NOT_GIVEN)
        outcome = Outcome.HELD if compare(self.op, fact.value, self.value) else Outcome.FAILED
        return Evidence(self, outcome, Reason.FOUND, ValueSeen(fact.value), fact.where)


KIND = Kind(
    key="env",
    name="env",
    condition=EnvCondition,
    parse=EnvCondition.parse,
    schema=item_schema(
        {"key": {"type": "string", "pattern": "^[a-z_]+(\\.[a-z_]+)*$"}, "op": {"enum": list(OPS)}, "value": {}},
        ("key",),
    ),
    fields=("key", "op", "value"),
    doc="A hardware or environment `key` compared with `op` (default `==`) to `value`; read from `nvidia-smi`, "
    "`collect_env` or the log.",
    checked=True,
    decides=True,
    asks=True,
)
