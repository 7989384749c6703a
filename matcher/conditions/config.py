"""``configs``: a predicate over a parsed config, a launch flag or a derived fact (``precision.bf16``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..evidence import Evidence, Outcome, Reason
from ..facts import NAMESPACES, Fact, Input, config_fact, namespace_of
from ..observation import ValueSeen
from .base import EntryError, Kind, item_schema, parse_plain, parse_required, parse_weight
from .values import OPS, check_op, check_typed, compare, show

if TYPE_CHECKING:
    from ..incident import Incident

__all__ = ["KIND", "ConfigCondition"]


def _reason(fact: Fact) -> Reason:
    if fact.unresolved:
        return Reason.AUTO_UNRESOLVED
    return Reason.NOT_SET if fact.kind_present else Reason.NO_CONFIG


@dataclass(frozen=True)
class ConfigCondition:
    """A predicate over a parsed config, a launch flag or a derived fact (``precision.bf16``)."""

    kind: ClassVar[str] = "config"
    path: str
    op: str = "=="
    value: Any = None
    default: Any = None
    has_default: bool = False
    weight: float = 2.0
    required: bool = False

    @property
    def decider(self) -> str:
        namespace = namespace_of(self.path)
        return namespace.decider if namespace is not None else Input.LAUNCH

    @property
    def label(self) -> str:
        return self.path if self.op == "exists" else f"{self.path} {self.op} {show(self.value)}"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> ConfigCondition:
        path = item.get("path")
        if not isinstance(path, str):
            raise EntryError(where, f"{field}.path", "must be a dotted config path")
        prefix, _, key = path.partition(".")
        namespace = namespace_of(path)
        if namespace is None or not key:
            raise EntryError(where, f"{field}.path", f"unknown namespace {prefix!r} (one of {', '.join(NAMESPACES)})")
        if namespace.keys and key not in namespace.keys:
            raise EntryError(
                where, f"{field}.path", f"unknown key {key!r} of {prefix} (one of {', '.join(namespace.keys)})"
            )
        op = item.get("op", "==")
        value = parse_plain(item.get("value"), where, f"{field}.value")
        check_op(op, value, "value" in item, where, field)
        check_typed(namespace.type, op, value, where, field, path)
        return cls(
            path=path,
            op=op,
            value=value,
            default=parse_plain(item.get("default"), where, f"{field}.default"),
            has_default="default" in item,
            weight=parse_weight(item, where, field),
            required=parse_required(item, where, field),
        )

    def evaluate(self, incident: Incident) -> Evidence:
        fact = config_fact(incident, self.path)
        if fact.known:
            held = compare(self.op, fact.value, self.value)
            outcome = Outcome.HELD if held else Outcome.FAILED
            return Evidence(self, outcome, Reason.FOUND, ValueSeen(fact.value, fact.auto), fact.where)
        if fact.kind_present and not fact.unresolved:
            if self.has_default:
                held = compare(self.op, self.default, self.value)
                outcome = Outcome.HELD if held else Outcome.FAILED
                return Evidence(self, outcome, Reason.DEFAULT, ValueSeen(self.default), fact.where)
            if self.op == "exists":
                return Evidence(self, Outcome.FAILED, Reason.NOT_SET, where=fact.where)
        return Evidence(self, Outcome.UNKNOWN, _reason(fact), where=fact.where)


KIND = Kind(
    key="configs",
    name="config",
    condition=ConfigCondition,
    parse=ConfigCondition.parse,
    schema=item_schema(
        {
            "path": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z0-9_-]+)+$"},
            "op": {"enum": list(OPS)},
            "value": {},
            "default": {},
        },
        ("path",),
    ),
    fields=("path", "op", "value", "default"),
    doc="`path` `<namespace>.<key>` compared with `op` (default `==`) to `value`; `default` is the tool's own "
    "default, used when its config is given without the key.",
    checked=True,
    decides=True,
)
