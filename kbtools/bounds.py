"""Every version bound an entry states is backed by the change that establishes it (``bound_refs``).

An entry's ``affected`` specs and ``fixed_in`` versions are facts a user acts on ("you already run the fixed
version"), so each one names its source: ``bound_refs`` maps ``<package><clause>`` to the public PR, commit or
release note behind that clause. ``affected: {deepspeed: '>=0.14.1,<0.14.3'}`` needs the keys
``deepspeed>=0.14.1`` and ``deepspeed<0.14.3``; ``fixed_in: {deepspeed: 0.14.3}`` is the clause
``deepspeed<0.14.3`` (one reference serves both). A reference for a clause the entry no longer states is
reported too, so that a bound changed without its source does not keep the old one.

Pure functions over a :class:`KBEntry`; ``dtypefix lint`` reports what :func:`bound_problems` returns.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

from packaging.utils import canonicalize_name

from dtypefix.matcher.entry import KBEntry

__all__ = ["bound_keys", "bound_problems"]

_CLAUSE = re.compile(r"^\s*(===|==|!=|<=|>=|~=|<|>)\s*(\S+)\s*$")
_KEY = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(===|==|!=|<=|>=|~=|<|>)\s*(\S+)\s*$")


def _key(name: str, operator: str, version: str) -> str:
    return f"{canonicalize_name(name)}{operator}{version}"


def _normal(key: str) -> str | None:
    """``key`` in one spelling (package name canonical, no spaces), or ``None`` when it is not ``<name><clause>``."""
    found = _KEY.match(key)
    return _key(*found.groups()) if found else None


def bound_keys(entry: KBEntry) -> list[tuple[str, str]]:
    """(field, key) for each bound the entry states, in the spelling ``bound_refs`` uses (``deepspeed<0.14.3``).

    Clauses that are not ``<operator><version>`` are returned with the key ``""`` so that the caller can report them.
    """
    out: list[tuple[str, str]] = []
    for name, spec in entry.affected.items():
        for clause in str(spec).split(","):
            if not clause.strip():
                continue
            found = _CLAUSE.match(clause)
            out.append((f"affected.{name}", _key(name, *found.groups()) if found else ""))
    for name, version in entry.fixed_in.items():
        out.append((f"fixed_in.{name}", _key(name, "<", str(version).strip())))
    return out


def _url_problem(url: str) -> str | None:
    parsed = urlparse(url)
    if parsed.scheme != "https" or not parsed.netloc:
        return "not an https URL"
    if parsed.netloc == "github.com":
        parts = [p for p in parsed.path.split("/") if p]
        # owner/repo/pull/N, owner/repo/commit/SHA, owner/repo/releases/tag/T, owner/repo/compare/A...B,
        # owner/repo/blob/<ref>/CHANGELOG.md: the change or the release note itself, not an issue or a repo page.
        if len(parts) < 4 or parts[2] not in {"pull", "commit", "releases", "compare", "blob", "tree"}:
            return "a GitHub bound reference must be a pull request, commit, release or file at a ref"
    return None


def bound_problems(entry: KBEntry) -> list[tuple[str, str]]:
    """(field, problem) for each version bound without a reference, and each reference that is unusable or stale."""
    problems: list[tuple[str, str]] = []
    refs: dict[str, str] = {}
    for key, url in entry.bound_refs.items():
        normal = _normal(str(key))
        if normal is None:
            problems.append((f"bound_refs.{key}", "not `<package><operator><version>` (e.g. `deepspeed<0.14.3`)"))
            continue
        refs[normal] = str(url)
        problem = _url_problem(str(url))
        if problem:
            problems.append((f"bound_refs.{key}", problem))
    stated: set[str] = set()
    reported: set[str] = set()
    for field, key in bound_keys(entry):
        if not key:
            problems.append((field, "a clause that is not `<operator><version>`"))
            continue
        stated.add(key)
        if key not in refs and key not in reported:
            reported.add(key)
            problems.append(
                (field, f"bound `{key}` has no `bound_refs` item: cite the PR or commit that establishes it")
            )
    for key in entry.bound_refs:
        normal = _normal(str(key))
        if normal is not None and normal not in stated:
            problems.append((f"bound_refs.{key}", "no `affected` clause or `fixed_in` version states this bound"))
    return problems
