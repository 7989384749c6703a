"""Files of the checkout generated from the registries, so they cannot drift from the code: the ``match`` block of
``kb/schema.json`` (from the condition kinds), ``docs/json-output.schema.json`` (from the JSON output's types), and
the generated blocks of ``docs/entry-format.md`` and ``docs/json-output.md``, and ``census/operands.json`` (the
operand roles of ``census/operands.yaml`` as the matcher reads them), and ``census/raises.json`` (which in-scope
messages each library function raises, from ``census/mined/``) with ``census/calls.json`` (the one message a function
reaches through its callees). ``dtypefix docs`` writes them and ``dtypefix docs --check`` fails when one is stale,
naming the command that fixes it.

Pure: :func:`generated_files` reads the current files and returns what each should hold; the command writes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dtypefix.matcher import Origin, Outcome, Reason
from dtypefix.matcher.conditions import KINDS, match_schema
from dtypefix.matcher.result import Confidence
from dtypefix.matcher.scope import OutOfScope

from .json_output import json_schema

__all__ = ["generated_files"]

_BLOCK = re.compile(r"(<!-- BEGIN generated: (?P<name>[\w-]+) .*?-->\n).*?(<!-- END generated -->)", re.S)


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _kinds_table() -> str:
    lines = ["| key | evidence `kind` | fields | what it checks | used by `check` |", "| --- | --- | --- | --- | --- |"]
    for kind in KINDS:
        fields = ", ".join(f"`{name}`" for name in kind.fields)
        role = "decides" if kind.decides else "asks" if kind.asks else "—"
        if kind.decides and kind.asks:
            role = "decides, asks"
        lines.append(f"| `{kind.key}` | `{kind.name}` | {fields} | {kind.doc} | {role} |")
    return "\n".join(lines) + "\n"


def _output_values() -> str:
    def listed(values: list[str]) -> str:
        return ", ".join(f"`{v}`" for v in values)

    return (
        f"- `confidence`: {listed([c.value for c in Confidence])}\n"
        f"- `evidence[].status`: {listed([o.value for o in Outcome])}\n"
        f"- `evidence[].kind`: {listed([*(k.name for k in KINDS), 'fixed'])}\n"
        f"- `evidence[].reason`: {listed([r.value for r in Reason])}\n"
        f"- `evidence[].source`: a config file's name, or {listed([o.value for o in Origin if o is not Origin.CONFIG])}\n"
        f"- `out_of_scope`: {listed([s.value for s in OutOfScope])}, or null\n"
    )


_BLOCKS = {"kinds": _kinds_table, "output-values": _output_values}


def _fill(text: str) -> str:
    return _BLOCK.sub(lambda m: m.group(1) + _BLOCKS[m.group("name")]() + m.group(3), text)


def generated_files(root: Path) -> dict[str, str]:
    """``{path relative to the checkout: the text it should hold}`` for every generated file that exists there."""
    out: dict[str, str] = {}
    schema_path = root / "kb" / "schema.json"
    if schema_path.is_file():
        schema = json.loads(schema_path.read_text(encoding="utf-8"))
        schema["properties"]["match"] = match_schema()
        # A fix step's `when` takes every kind but the error anchor, each written as in `match`.
        step = schema["properties"]["explanation"]["properties"]["fix"]["items"]["properties"]
        if "when" in step:
            step["when"]["properties"] = {
                k.key: {"$ref": f"#/properties/match/properties/{k.key}"} for k in KINDS if k.key != "errors"
            }
        out["kb/schema.json"] = _json(schema)
    operands = root / "census" / "operands.yaml"
    if operands.is_file():
        import yaml

        # What the matcher reads on every explanation: JSON loads in a fraction of the time YAML takes, and the
        # matcher then never imports PyYAML for a log that holds no YAML config.
        out["census/operands.json"] = _json(yaml.safe_load(operands.read_text(encoding="utf-8")))
    mined = root / "census" / "mined"
    if mined.is_dir():
        from dtypefix.kbtools.census import callee_index, load_mined, raise_index

        # What a paste cut inside a library function (or in a caller of it) was probably about to raise
        # (matcher/cut.py reads both).
        rows = load_mined(mined)
        out["census/raises.json"] = json.dumps(raise_index(rows), ensure_ascii=False, sort_keys=True) + "\n"
        out["census/calls.json"] = json.dumps(callee_index(rows), ensure_ascii=False, sort_keys=True) + "\n"
    if (root / "docs").is_dir():
        out["docs/json-output.schema.json"] = _json(json_schema())
        for name in ("docs/entry-format.md", "docs/json-output.md"):
            path = root / name
            if path.is_file():
                out[name] = _fill(path.read_text(encoding="utf-8"))
    return out
