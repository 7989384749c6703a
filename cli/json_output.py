"""The ``--format json`` contract (documented in docs/json-output.md, schema in docs/json-output.schema.json).

Bump :data:`SCHEMA_VERSION` on any incompatible change; adding keys is compatible.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from dtypefix.matcher import Evidence, KBEntry, Match, Report, Text
from dtypefix.matcher.facts import env_fact
from dtypefix.matcher.observation import FrameSeen

from .evidence_words import decider_words, describe, seen_words
from .history_words import history_json, history_schema
from .markdown import fill
from .where_words import location_json, location_schema

if TYPE_CHECKING:
    from dtypefix.matcher.search import SearchHit

__all__ = ["SCHEMA_VERSION", "entry_json", "json_schema", "report_json", "search_json", "to_json"]

SCHEMA_VERSION = "1.2"


def _version() -> str:
    from . import __version__

    return __version__


def _text(value: Text, groups: dict[str, str] | None = None) -> dict[str, str]:
    return {"en": fill(value.en, groups), "zh": fill(value.zh, groups)}


def entry_json(entry: KBEntry, groups: dict[str, str] | None = None) -> dict[str, Any]:
    """An entry's identity and prose (both languages), as in ``matches[]`` and ``dtypefix show --format json``."""
    return {
        "id": entry.id,
        "slug": entry.slug,
        "title": _text(entry.title),
        "kind": entry.kind.value,
        "family": entry.family,
        "tags": list(entry.tags),
        "severity": entry.severity,
        "status": entry.status.value,
        "cause": _text(entry.cause, groups),
        "fix": [_text(step, groups) for step in entry.fix],
        "does_not_help": [_text(item, groups) for item in entry.does_not_help],
        "notes": _text(entry.notes, groups) if entry.notes else None,
        "affected": dict(entry.affected),
        "fixed_in": dict(entry.fixed_in),
        "references": [{"url": url, "title": title} for url, title in entry.references],
    }


def _observed(evidence: Evidence) -> str | None:
    """``observed`` as contract 1.1 writes it: a frame as ``path:line in function`` (`` :: code`` when a code
    pattern matched), anything else as the value or text seen."""
    seen = evidence.observed
    text = seen_words(seen)
    if isinstance(seen, FrameSeen) and seen.code:
        text += f" :: {seen.code}"
    return text or None


def _match(match: Match) -> dict[str, Any]:
    data = entry_json(match.entry, match.groups)
    data.update(
        {
            "confidence": match.confidence.value,
            "score": match.score,
            "groups": dict(match.groups),
            "fixed_note": describe(match.fixed, "en") if match.fixed is not None else None,
            "evidence": [
                {
                    "status": e.outcome.value,
                    "kind": e.kind,
                    "reason": e.reason.value,
                    "label": e.condition.label,
                    "detail": describe(e, "en"),
                    "observed": _observed(e),
                    "source": e.where.key if e.where is not None else None,
                    "weight": e.weight,
                    "decider": e.decider,
                }
                for e in match.evidence
            ],
        }
    )
    return data


MAX_LISTED = 200
"""``extracted.exceptions`` and ``extracted.error_lines`` list at most this many, the first ones: a flood of 100 MB
of error lines (every rank repeating one error) must not become a JSON document of hundreds of megabytes."""


def report_json(report: Report, command: str = "explain") -> dict[str, Any]:
    """The JSON document for one report."""
    incident = report.incident
    primary = incident.primary
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "dtypefix", "version": _version()},
        "command": command,
        "found": report.found,
        "error": None
        if primary is None
        else {"type": primary.exc_type, "message": primary.message, "stream": primary.stream},
        "matches": [_match(m) for m in report.matches],
        "history": history_json(report),
        "conditional": [_match(m) for m in report.conditional],
        "out_of_scope": report.out_of_scope.value if report.out_of_scope is not None else None,
        "location": location_json(report.location),
        "deciders": [
            {"key": d.key, "hint": decider_words(d.key, "en"), "entries": list(d.entries)} for d in report.deciders
        ],
        "extracted": {
            "exceptions": [
                {
                    "type": s.exc_type,
                    "message": s.message,
                    "stream": s.stream,
                    "frames": [{"file": f.file, "line": f.line, "function": f.function} for f in s.frames],
                }
                for s in incident.stacks[:MAX_LISTED]
            ],
            "error_lines": [
                {"type": e.exc_type, "message": e.message, "stream": e.stream}
                for e in incident.error_lines[:MAX_LISTED]
            ],
            "packages": {name: p.version for name, p in incident.packages.items()},
            "configs": [{"kind": c.kind, "origin": c.origin} for c in incident.configs],
            "flags": {k: v if isinstance(v, bool | int | float) else str(v) for k, v in incident.launch.flags.items()},
            "hardware": {
                "gpu_names": list(incident.hardware.gpu_names),
                "compute_capabilities": list(incident.hardware.capabilities),
                "cuda_visible_devices": env_fact(incident, "cuda_visible_devices").value,
                "cuda_device_order": env_fact(incident, "cuda_device_order").value,
                "os": incident.hardware.os,
            },
            "streams": list(incident.streams),
            "error_line_missing": incident.error_line_missing,
            "cut_inside": None
            if incident.cut is None
            else {
                "function": incident.cut.function,
                "file": incident.cut.file,
                "type": incident.cut.exc_type,
                "template": incident.cut.template,
                "callee": incident.cut.callee,
            },
        },
        "notes": [str(note) for note in incident.notes],
        "kb_problems": list(report.kb_problems),
    }


def search_json(hits: list[SearchHit], query: str) -> dict[str, Any]:
    """``dtypefix search --format json``."""
    results = [
        {
            "id": h.entry.id,
            "slug": h.entry.slug,
            "title": {"en": h.entry.title.en, "zh": h.entry.title.zh},
            "score": h.score,
            "field": h.field,
            "snippet": h.snippet,
            "status": h.entry.status.value,
        }
        for h in hits
    ]
    return {"query": query, "results": results}


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _bilingual() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["en", "zh"],
        "properties": {"en": {"type": "string"}, "zh": {"type": "string"}},
    }


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": [schema, {"type": "null"}]}


def _exception() -> dict[str, Any]:
    frame = {
        "type": "object",
        "required": ["file", "line", "function"],
        "properties": {"file": {"type": "string"}, "line": {"type": "integer"}, "function": {"type": "string"}},
    }
    return {
        "type": "object",
        "required": ["type", "message", "stream"],
        "properties": {
            "type": {"type": "string"},
            "message": {"type": "string"},
            "stream": {"type": "string"},
            "frames": {"type": "array", "items": frame},
        },
    }


def json_schema() -> dict[str, Any]:
    """The JSON Schema of contract 1.x, generated from the types it serialises (``docs/json-output.schema.json``,
    kept current by ``dtypefix docs``): every enum is the code's own."""
    from dtypefix.matcher import Outcome, Reason
    from dtypefix.matcher.conditions import KINDS
    from dtypefix.matcher.result import Confidence
    from dtypefix.matcher.scope import OutOfScope

    evidence = {
        "type": "object",
        "required": ["status", "kind", "reason", "label", "detail", "observed", "source", "weight", "decider"],
        "properties": {
            "status": {"enum": [o.value for o in Outcome]},
            "kind": {"enum": [*(k.name for k in KINDS), "fixed"]},
            "reason": {"enum": [r.value for r in Reason]},
            "label": {"type": "string"},
            "detail": {"type": "string"},
            "observed": {"type": ["string", "null"]},
            "source": {"type": ["string", "null"]},
            "weight": {"type": "number"},
            "decider": {"type": ["string", "null"]},
        },
    }
    match = {
        "type": "object",
        "required": ["id", "slug", "title", "kind", "family", "confidence", "score", "evidence", "cause", "fix"],
        "properties": {
            "id": {"type": "string", "pattern": "^DTF[0-9]{3,4}$"},
            "slug": {"type": "string"},
            "title": _bilingual(),
            "kind": {"enum": ["cause", "family"]},
            "family": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "severity": {"enum": ["error", "warning"]},
            "status": {"enum": ["active", "retired"]},
            "confidence": {"enum": [c.value for c in Confidence]},
            "score": {"type": "number"},
            "groups": {"type": "object", "additionalProperties": {"type": "string"}},
            "fixed_note": {"type": ["string", "null"]},
            "evidence": {"type": "array", "items": evidence},
            "cause": _bilingual(),
            "fix": {"type": "array", "items": _bilingual()},
            "does_not_help": {"type": "array", "items": _bilingual()},
            "notes": _nullable(_bilingual()),
            "affected": {"type": "object", "additionalProperties": {"type": "string"}},
            "fixed_in": {"type": "object", "additionalProperties": {"type": "string"}},
            "references": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["url", "title"],
                    "properties": {"url": {"type": "string"}, "title": {"type": "string"}},
                },
            },
        },
    }
    extracted = {
        "type": "object",
        "required": ["exceptions", "error_lines", "packages", "configs", "flags", "hardware", "streams"],
        "properties": {
            "exceptions": {"type": "array", "items": _exception()},
            "error_lines": {"type": "array", "items": _exception()},
            "packages": {"type": "object", "additionalProperties": {"type": "string"}},
            "configs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["kind", "origin"],
                    "properties": {"kind": {"type": "string"}, "origin": {"type": "string"}},
                },
            },
            "flags": {"type": "object"},
            "hardware": {
                "type": "object",
                "required": ["gpu_names", "compute_capabilities", "os"],
                "properties": {
                    "gpu_names": {"type": "array", "items": {"type": "string"}},
                    "compute_capabilities": {"type": "array", "items": {"type": "number"}},
                    "cuda_visible_devices": {"type": ["string", "null"]},
                    "cuda_device_order": {"type": ["string", "null"]},
                    "os": {"type": ["string", "null"]},
                },
            },
            "streams": {"type": "array", "items": {"type": "string"}},
            "error_line_missing": {
                "type": "boolean",
                "description": "The paste ends inside a traceback, before its exception line: matches come from "
                "the frames alone (low confidence).",
            },
            "cut_inside": {
                "type": ["object", "null"],
                "description": "When the error line is missing and the last frame's library function raises one "
                "known message (census/raises.json), or calls one function that does (census/calls.json): the "
                "function, its file, and that message's type and template; the entries that recognise it are "
                "proposed at low confidence.",
                "properties": {
                    "function": {"type": "string"},
                    "file": {"type": "string"},
                    "type": {"type": "string"},
                    "template": {"type": "string"},
                    "callee": {
                        "type": "string",
                        "description": "The function `function` calls that raises the message (the paste stops "
                        "in its caller, one call before it); empty when `function` raises it itself.",
                    },
                },
            },
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://dtypefix.dev/schema/output-1.json",
        "title": "dtypefix --format json output, schema_version 1.x",
        "description": "Generated from cli/json_output.py by `dtypefix docs`; do not edit.",
        "type": "object",
        "required": [
            "schema_version",
            "tool",
            "command",
            "found",
            "error",
            "matches",
            "conditional",
            "out_of_scope",
            "deciders",
            "extracted",
            "notes",
            "kb_problems",
        ],
        "properties": {
            "schema_version": {"type": "string", "pattern": "^1\\.[0-9]+$"},
            "tool": {
                "type": "object",
                "required": ["name", "version"],
                "properties": {"name": {"const": "dtypefix"}, "version": {"type": "string"}},
            },
            "command": {"enum": ["explain", "check", "run"]},
            "found": {"type": "boolean"},
            "error": _nullable(_exception()),
            "matches": {"type": "array", "items": match},
            "conditional": {"type": "array", "items": match},
            "history": history_schema(),
            "location": location_schema(),
            "out_of_scope": {"enum": [*(s.value for s in OutOfScope), None]},
            "deciders": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "hint", "entries"],
                    "properties": {
                        "key": {"type": "string"},
                        "hint": {"type": "string"},
                        "entries": {"type": "array", "items": {"type": "string"}},
                    },
                },
            },
            "extracted": extracted,
            "notes": {"type": "array", "items": {"type": "string"}},
            "kb_problems": {"type": "array", "items": {"type": "string"}},
        },
    }
