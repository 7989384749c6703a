"""Fuzzy search over the KB: ids, titles, messages, packages, tags and prose, in both languages.

People search with a fragment of an error message, a package name, or a phrase in Chinese. Each entry is
indexed as a few weighted fields; the hit reports which field matched so the result explains itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz

from .entry import KBEntry

__all__ = ["SearchHit", "search"]

# Field weights: a hit in a title or message counts more than one deep in the prose.
_FIELDS = (("id", 1.0), ("title", 1.0), ("message", 0.97), ("tag", 0.95), ("package", 0.95), ("text", 0.85))
_REGEX_SYNTAX = re.compile(r"\(\?P<\w+>|\(\?[:i]\)?|\\[dswbSWB]|[\\^$*+?{}\[\]()|]")


@dataclass(frozen=True)
class SearchHit:
    """One entry that matches the query, with the field that matched best."""

    entry: KBEntry
    score: float
    """0-100, after field weighting."""
    field: str
    """``id``, ``title``, ``message``, ``tag``, ``package`` or ``text``."""
    snippet: str
    """The matching field's text, shortened."""


def _readable(pattern: str) -> str:
    """A regex turned back into words for fuzzy matching (``mat1 and mat2 must have the same dtype``)."""
    return re.sub(r"\s+", " ", _REGEX_SYNTAX.sub(" ", pattern)).strip()


def _fields(entry: KBEntry) -> Iterable[tuple[str, str]]:
    yield "id", entry.id
    yield "id", entry.slug
    yield "title", entry.title.en
    yield "title", entry.title.zh
    for pattern in entry.errors:
        yield "message", _readable(pattern.pattern)
    for message in entry.messages:
        yield "message", message
    for tag in (*entry.tags, entry.family):
        yield "tag", tag
    for name in {c.name for c in entry.packages} | set(entry.affected) | set(entry.fixed_in):
        yield "package", name
    yield "text", entry.cause.en
    yield "text", entry.cause.zh
    for step in entry.fix:
        yield "text", step.en
        yield "text", step.zh


def _snippet(text: str, query: str) -> str:
    flat = " ".join(text.split())
    at = flat.lower().find(query.lower())
    if at < 0 or len(flat) <= 120:
        return flat[:120]
    start = max(0, at - 40)
    return ("…" if start else "") + flat[start : start + 120] + "…"


def _score(query: str, text: str, field: str) -> float:
    q, t = query.lower(), text.lower()
    if field == "id":
        return 100.0 if q == t or t.endswith("/" + q) else fuzz.ratio(q, t) * 0.6
    if q in t:
        return 100.0
    if len(q) > len(t):
        return float(fuzz.ratio(q, t))  # a short tag must not match a long query by being part of it
    return float(fuzz.partial_ratio(q, t))


def _coverage(query: str, haystack: str) -> float:
    """The share of the query's words found anywhere in the entry: ranks multi-word queries sensibly."""
    words = query.lower().split()
    return sum(1 for w in words if w in haystack) / len(words) if words else 0.0


def search(entries: Iterable[KBEntry], query: str, limit: int = 10, threshold: float = 60.0) -> list[SearchHit]:
    """Entries matching ``query`` best first (retired entries included, marked by their status)."""
    weights = dict(_FIELDS)
    hits: list[SearchHit] = []
    for entry in entries:
        best: SearchHit | None = None
        fields = [(f, t) for f, t in _fields(entry) if t]
        coverage = _coverage(query, " ".join(t for _, t in fields).lower())
        for field, text in fields:
            score = 0.7 * _score(query, text, field) * weights[field] + 30.0 * coverage
            if best is None or score > best.score:
                best = SearchHit(entry, round(score, 1), field, _snippet(text, query))
        if best is not None and best.score >= threshold:
            hits.append(best)
    order = {name: i for i, (name, _) in enumerate(_FIELDS)}
    hits.sort(key=lambda h: (-h.score, order[h.field], h.entry.status != "active", h.entry.id))
    return hits[:limit]
