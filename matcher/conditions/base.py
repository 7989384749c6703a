"""What every condition kind shares: the error for an unusable entry, the kind record the registry holds, and the
checks its YAML fields go through (the shape of a condition itself is :class:`~..evidence.Condition`).

A kind is one module of this package; it builds a :class:`Kind` (its YAML key, how to parse one item, the JSON
Schema of one item, whether ``check`` can use it) and the registry (:mod:`.`) lists it. Everything that depends on
the set of kinds (the ``match`` block of ``kb/schema.json``, the canonical key order, the docs) is generated from
the registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..evidence import Condition
from ..regex import LazyPattern, PatternError

__all__ = [
    "WEIGHT_SCHEMA",
    "Condition",
    "EntryError",
    "Kind",
    "check_written",
    "compile_now",
    "item_schema",
    "parse_pattern",
    "parse_plain",
    "parse_required",
    "parse_weight",
]


class EntryError(ValueError):
    """An entry that cannot be used: which file, which field, what is wrong (and the line, once lint knows it)."""

    def __init__(self, path: Path | str, field: str, problem: str, line: int = 0) -> None:
        self.path = Path(path)
        self.field = field
        self.problem = problem
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.field}: {self.problem}" if self.field else f"{where}: {self.problem}"

    @property
    def keys(self) -> list[str | int]:
        """The field as a YAML path (``match.errors[0].message`` -> ``["match", "errors", 0, "message"]``)."""
        return [int(part) if part.isdigit() else part for part in re.split(r"[.\[\]]+", self.field) if part]


@dataclass(frozen=True)
class Kind:
    """One kind of condition, as the registry knows it."""

    key: str
    """Its key under ``match:`` in an entry (``frames``)."""
    name: str
    """The evidence kind it produces (``frame``)."""
    condition: type[Any]
    """The condition class (the renderers word evidence by it)."""
    parse: Callable[[Mapping[str, Any], Path, str], Condition]
    """Build one condition from its YAML mapping, raising :class:`EntryError` (with the field) on anything unusable."""
    schema: Mapping[str, Any] = field(repr=False)
    """The JSON Schema of one item (generated into ``kb/schema.json``)."""
    fields: tuple[str, ...]
    """Its YAML fields in canonical order (``dtypefix fmt``)."""
    doc: str
    """One line for ``docs/entry-format.md``."""
    checked: bool = False
    """``dtypefix check`` (no traceback) evaluates it."""
    decides: bool = False
    """In ``check``: one that holds can make an entry apply (a config, environment or hardware fact); an entry with
    none is not checkable."""
    asks: bool = False
    """In ``check``: one that is unknown makes a finding conditional ("would apply if ...")."""
    anchor: bool = False
    """The error patterns: an entry is a candidate only when one holds; not counted as evidence."""
    verify: Callable[[Any, Path, str], None] | None = None
    """What parsing leaves to first use besides the patterns (a version range), checked by :func:`check_written`."""


WEIGHT_SCHEMA: Mapping[str, Any] = {
    "weight": {"type": "number", "minimum": 0, "maximum": 10},
    "required": {"type": "boolean"},
}


def item_schema(properties: Mapping[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    """The JSON Schema of one condition: its own properties plus ``weight`` and ``required``, nothing else."""
    schema: dict[str, Any] = {"type": "object"}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    schema.update(extra)
    schema["properties"] = {**WEIGHT_SCHEMA, **properties}
    return schema


def parse_pattern(value: Any, where: Path, field: str) -> LazyPattern:
    """The written pattern, compiled later: by :func:`check_written` (which checks it), or at its first search."""
    if not isinstance(value, str) or not value:
        raise EntryError(where, field, "must be a non-empty regex string")
    return LazyPattern(value, field)


def compile_now(pattern: LazyPattern, where: Path) -> None:
    """Compile ``pattern`` now; a refusal becomes an :class:`EntryError` at the field it was written in."""
    try:
        pattern.compile()
    except PatternError as exc:
        raise EntryError(where, pattern.field, str(exc)) from None


def check_written(kind: Kind, condition: Condition, where: Path, field: str) -> None:
    """Compile every pattern ``condition`` holds and run its kind's :attr:`Kind.verify`: what parsing leaves to
    first use, so that an entry read from the validated KB cache skips it (see ``parse_group(checked=...)``)."""
    from dataclasses import fields

    for item in fields(condition):  # type: ignore[arg-type]  # every kind is a dataclass
        value = getattr(condition, item.name)
        if isinstance(value, LazyPattern):
            compile_now(value, where)
    if kind.verify is not None:
        kind.verify(condition, where, field)


def parse_weight(item: Mapping[str, Any], where: Path, field: str, default: float = 2.0) -> float:
    value = item.get("weight", default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 10:
        raise EntryError(where, f"{field}.weight", f"must be a number from 0 to 10, not {value!r}")
    return float(value)


def parse_required(item: Mapping[str, Any], where: Path, field: str) -> bool:
    value = item.get("required", False)
    if not isinstance(value, bool):
        raise EntryError(where, f"{field}.required", f"must be true or false, not {value!r}")
    return value


_SCALARS = (str, int, float, bool)


def parse_plain(value: Any, where: Path, field: str) -> Any:
    """A value as YAML and JSON both write it: a scalar or a list of scalars (not a date, set, bytes or mapping)."""
    if value is None or isinstance(value, _SCALARS):
        return value
    if isinstance(value, list) and all(isinstance(v, _SCALARS) for v in value):
        return list(value)
    raise EntryError(where, field, f"must be a string, number, boolean or a list of them, not {type(value).__name__}")
