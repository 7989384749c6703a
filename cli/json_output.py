"""The ``--format json`` contract (documented in docs/json-output.md, schema in docs/json-output.schema.json).

Bump :data:`SCHEMA_VERSION` on any incompatible change; adding keys is compatible.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from dtypefix.matcher import KBEntry, Match, Report, Text
from dtypefix.matcher.facts import env_fact
from dtypefix.matcher.traceback import Stack

from .evidence_words import decider_words, describe
from .markdown import fill

if TYPE_CHECKING:
    from dtypefix.matcher.search import SearchHit

__all__ = ["SCHEMA_VERSION", "entry_json", "report_json", "search_json", "to_json"]

SCHEMA_VERSION = "1.1"


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


def _match(match: Match) -> dict[str, Any]:
    data = entry_json(match.entry, match.groups)
    data.update(
        {
            "confidence": match.confidence,
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
                    "observed": e.observed or None,
                    "source": e.source or None,
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
        "conditional": [_match(m) for m in report.conditional],
        "out_of_scope": report.out_of_scope.value if report.out_of_scope is not None else None,
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
                for s in [s for s in incident.stacks if isinstance(s, Stack)][:MAX_LISTED]
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
        },
        "notes": list(incident.notes),
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
