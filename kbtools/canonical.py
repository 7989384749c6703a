"""The canonical text of an entry: one way to write each entry, so diffs show content, not style.

Keys follow the schema's order, multi-line strings are literal blocks, nothing is wrapped. ``dtypefix fmt``
writes this form and lint fails on any other (as the PyPA advisory database does with its reformatter).
"""

from __future__ import annotations

from typing import Any

import yaml

from dtypefix.matcher.conditions import KINDS

__all__ = ["canonical_text", "condition_fields"]


def condition_fields() -> list[str]:
    """Every condition field in canonical order, merged from the kinds' own orders (:data:`KINDS`): a field new to
    the list goes just before the first field that follows it in its kind (``key`` before ``op``)."""
    order: list[str] = []
    for kind in KINDS:
        for position, name in enumerate(kind.fields):
            if name in order:
                continue
            later = [order.index(f) for f in kind.fields[position + 1 :] if f in order]
            order.insert(min(later) if later else len(order), name)
    return [*order, "weight", "required"]


_ORDER = {
    None: [
        "id",
        "title",
        "kind",
        "family",
        "tags",
        "severity",
        "status",
        "retired_reason",
        "match",
        "explanation",
        "affected",
        "fixed_in",
        "bound_refs",
        "messages",
        "references",
        "examples",
        "counter_examples",
    ],
    "title": ["en", "zh"],
    "match": [*(kind.key for kind in KINDS), "exclude"],
    "exclude": [kind.key for kind in KINDS],
    "explanation": ["cause", "fix", "does_not_help", "notes"],
    "condition": condition_fields(),
    "example": ["input", "configs", "freeze", "source", "step", "note"],
    "reference": ["url", "title"],
    "text": ["en", "zh"],
}


class _Dumper(yaml.SafeDumper):
    """Literal blocks for multi-line text; no aliases; sequences indented under their key."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def _ordered(value: Any, context: str | None) -> Any:
    if isinstance(value, list):
        child = {
            "references": "reference",
            "examples": "example",
            "counter_examples": "example",
            "fix": "text",
            "does_not_help": "text",
        }.get(context or "", "condition")
        if context in ("tags", "messages"):
            return list(value)
        return [_ordered(item, child) if isinstance(item, dict) else item for item in value]
    if not isinstance(value, dict):
        return value
    order = _ORDER.get(context, [])
    keys = sorted(value, key=lambda k: (order.index(k) if k in order else len(order), str(k)))
    out = {}
    for key in keys:
        if context is None and key in ("title",):
            sub: str | None = "title"
        elif context is None and key in ("match", "explanation"):
            sub = key
        elif context in ("match", "exclude"):
            sub = "exclude" if key == "exclude" else key
        elif context == "explanation":
            sub = "text" if key in ("cause", "notes") else key
        elif context == "text" and key == "when":
            sub = "match"  # a fix step's conditions are written as match's are
        elif context is None:
            sub = key if key in ("references", "examples", "counter_examples", "tags", "messages") else "plain"
        else:
            sub = "plain"
        out[key] = _ordered(value[key], sub)
    return out


def canonical_text(data: dict[str, Any]) -> str:
    """The canonical YAML for an entry mapping."""
    ordered = _ordered(data, None)
    text: str = yaml.dump(
        ordered, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=False
    )
    return text
