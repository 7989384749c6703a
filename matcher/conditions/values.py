"""Comparing what an entry expects with what the input holds: the operators, lenient across the types configs
really hold (``"true"``, ``"3"``, lists), and the check at load time that an operator fits its value."""

from __future__ import annotations

import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..facts import ValueType
from ..regex import compile_pattern
from .base import EntryError, compile_now, parse_pattern

__all__ = ["OPS", "ORDERED", "check_op", "check_typed", "compare", "is_number", "show"]

_ORDERED: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
ORDERED = tuple(_ORDERED)
"""The operators that compare numbers."""
OPS = ("==", "!=", *ORDERED, "in", "not-in", "exists", "matches")


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_op(op: Any, value: Any, has_value: bool, where: Path, field: str) -> None:
    """Refuse an operator that cannot be evaluated against its value."""
    if op not in OPS:
        raise EntryError(where, f"{field}.op", f"unknown operator {op!r} (one of {', '.join(OPS)})")
    if op in _ORDERED and not is_number(value):
        raise EntryError(where, f"{field}.value", f"{op} compares numbers; {value!r} is not a number")
    if op in ("in", "not-in") and not isinstance(value, list):
        raise EntryError(where, f"{field}.value", f"{op} needs a list of values")
    if op == "matches":
        compile_now(parse_pattern(value, where, f"{field}.value"), where)
    if op == "exists" and has_value:
        raise EntryError(where, f"{field}.value", "exists takes no value")
    if op in ("==", "!=") and (not has_value or isinstance(value, list)):
        raise EntryError(where, f"{field}.value", f"{op} needs one value (use in / not-in for a list)")


def _fits(kind: ValueType, words: tuple[str, ...], value: Any) -> bool:
    if kind is ValueType.BOOL:
        return isinstance(value, bool)
    if kind is ValueType.NUMBER:
        return is_number(value)
    if kind is ValueType.WORD:
        return isinstance(value, str) and value.lower() in words
    if kind in (ValueType.TEXT, ValueType.LIST):
        return isinstance(value, str | int | float) and not isinstance(value, bool)
    return True


def check_typed(
    kind: ValueType, op: str, value: Any, where: Path, field: str, name: str, words: tuple[str, ...] = ()
) -> None:
    """Refuse a comparison with ``name`` (of type ``kind``) that can never hold: an order on what is not a number,
    a value of the wrong type (``precision.fp16 == "yes"``), a word outside the closed set (``os == mac``)."""
    if kind is ValueType.ANY or op == "exists":
        return
    if op in _ORDERED and kind is not ValueType.NUMBER:
        raise EntryError(where, f"{field}.op", f"{name} is not a number: {op} does not apply")
    if op == "matches":
        if kind in (ValueType.BOOL, ValueType.NUMBER):
            raise EntryError(where, f"{field}.op", f"{name} is {kind.value}: matches (a regex) does not apply")
        return
    for one in value if isinstance(value, list) else [value]:
        if not _fits(kind, words, one):
            hint = f"one of {', '.join(words)}" if kind is ValueType.WORD else f"a {kind.value}"
            raise EntryError(where, f"{field}.value", f"{name} holds {hint}, so {one!r} can never match")


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        norm = {"true": True, "false": False}
        a = norm.get(str(actual).lower(), actual) if isinstance(actual, str) else actual
        e = norm.get(str(expected).lower(), expected) if isinstance(expected, str) else expected
        return a is e if isinstance(a, bool) and isinstance(e, bool) else False
    if isinstance(actual, int | float) or isinstance(expected, int | float):
        try:
            return float(actual) == float(expected)
        except (TypeError, ValueError):
            return False
    return str(actual).lower() == str(expected).lower()


def compare(op: str, actual: Any, expected: Any) -> bool:
    """``actual <op> expected``, lenient across the types configs really hold (``"true"``, ``"3"``, lists)."""
    if op == "exists":
        return True
    if op == "==":
        return any(_same(a, expected) for a in actual) if isinstance(actual, list) else _same(actual, expected)
    if op == "!=":
        return not compare("==", actual, expected)
    if op in ("in", "not-in"):
        inside = any(_same(actual, option) for option in expected)
        return inside if op == "in" else not inside
    if op == "matches":
        pattern = compile_pattern(str(expected))
        items = actual if isinstance(actual, list) else [actual]
        return any(pattern.search(str(item)) for item in items)
    try:
        return _ORDERED[op](float(actual), float(expected))
    except (TypeError, ValueError):
        return False  # a config value that is not a number ("auto", "sm89") cannot be ordered: it does not hold


def show(value: Any) -> str:
    """A value as the user wrote it in JSON / YAML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)
