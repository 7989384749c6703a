"""Loading the knowledge base: built-in entries plus private KB folders, validated once, cached by content.

Explaining is lenient: a broken entry is skipped with one problem line, so one bad private entry never stops
an explanation. Lint is strict: the same problems fail it. Validation (JSON Schema) and YAML parsing happen
only when the KB changed; otherwise the validated mappings come from a cache file keyed by a hash of every
entry's path and bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from .entry import EntryError, KBEntry, entry_from_mapping

__all__ = ["Catalog", "builtin_kb_dir", "default_cache_dir", "entry_files", "load_catalog", "read_entry_mapping"]

_CACHE_FORMAT = 1


@dataclass(frozen=True)
class Catalog:
    """The usable entries and what was wrong with the rest."""

    entries: tuple[KBEntry, ...]
    problems: tuple[str, ...]
    """``file: field: problem`` lines for entries that were skipped."""

    def get(self, entry_id: str) -> KBEntry | None:
        wanted = entry_id.upper()
        for entry in self.entries:
            if entry.id == wanted or entry.slug == entry_id or entry.slug.split("/")[-1] == entry_id:
                return entry
        return None

    @property
    def active(self) -> tuple[KBEntry, ...]:
        return tuple(e for e in self.entries if e.status == "active")


def builtin_kb_dir() -> Path:
    """The ``kb/`` folder shipped in the package (editable or wheel)."""
    return Path(str(resources.files("dtypefix.kb")))


def default_cache_dir() -> Path | None:
    """``$DTYPEFIX_CACHE_DIR``, else ``$XDG_CACHE_HOME/dtypefix``, else ``~/.cache/dtypefix``; empty disables."""
    explicit = os.environ.get("DTYPEFIX_CACHE_DIR")
    if explicit is not None:
        return Path(explicit) if explicit else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dtypefix"


def entry_files(root: Path) -> Iterator[tuple[Path, str]]:
    """``(file, slug)`` for every entry under ``root``: ``<area>/<slug>.yaml``, example folders skipped."""
    if root.is_file():
        yield root, f"{root.parent.name}/{root.stem}"
        return
    direct = sorted(root.glob("*.yaml"))
    if direct:  # an area folder (kb/deepspeed): its entries; the YAML in example folders are configs
        for path in direct:
            yield path, f"{root.name}/{path.stem}"
        return
    for path in sorted(root.glob("*/*.yaml")):
        yield path, f"{path.parent.name}/{path.stem}"


def _schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((builtin_kb_dir() / "schema.json").read_text(encoding="utf-8"))
    return data


def read_entry_mapping(path: Path) -> dict[str, Any]:
    """Parse one entry file safely and validate it against the schema; raises :class:`EntryError`."""
    import jsonschema  # imported here: only needed when the cache misses, and it is slow to import

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EntryError(f"{path}: cannot read: {exc}") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise EntryError(f"{path}{line}: YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise EntryError(f"{path}: (top): not a mapping")
    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.absolute_path) or "(top)"
        raise EntryError(f"{path}: {where}: {first.message}")
    return data


def _signature(files: list[tuple[Path, str]]) -> str:
    digest = hashlib.sha256(f"{_CACHE_FORMAT}".encode())
    digest.update((builtin_kb_dir() / "schema.json").read_bytes())
    for path, slug in files:
        digest.update(f"\0{path}\0{slug}\0".encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"<unreadable>")
    return digest.hexdigest()


def _read_cache(cache_dir: Path | None, signature: str) -> list[dict[str, Any]] | None:
    if cache_dir is None:
        return None
    try:
        blob = json.loads((cache_dir / f"kb-{signature[:32]}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(blob, dict) or blob.get("signature") != signature:
        return None
    records: list[dict[str, Any]] = blob["records"]
    return records


def _write_cache(cache_dir: Path | None, signature: str, records: list[dict[str, Any]]) -> None:
    if cache_dir is None:
        return
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        target = cache_dir / f"kb-{signature[:32]}.json"
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"signature": signature, "records": records}), encoding="utf-8")
        tmp.replace(target)
    except OSError:
        pass  # a read-only home must not stop an explanation


def load_catalog(
    extra_dirs: Iterable[Path] = (),
    *,
    include_builtin: bool = True,
    cache_dir: Path | None = None,
) -> Catalog:
    """Load the built-in KB and ``extra_dirs``; problems are collected, never raised."""
    roots = ([builtin_kb_dir()] if include_builtin else []) + [Path(d) for d in extra_dirs]
    problems: list[str] = []
    files: list[tuple[Path, str]] = []
    for root in roots:
        if not root.exists():
            problems.append(f"{root}: KB folder not found")
            continue
        files.extend(entry_files(root))
    signature = _signature(files)
    records = _read_cache(cache_dir, signature)
    if records is None:
        records = []
        for path, slug in files:
            try:
                records.append({"path": str(path), "slug": slug, "data": read_entry_mapping(path)})
            except EntryError as exc:
                records.append({"path": str(path), "slug": slug, "problem": str(exc)})
        _write_cache(cache_dir, signature, records)
    entries: list[KBEntry] = []
    seen: dict[str, Path] = {}
    for record in records:
        if "problem" in record:
            problems.append(record["problem"])
            continue
        path = Path(record["path"])
        try:
            entry = entry_from_mapping(record["data"], path, record["slug"])
        except (EntryError, KeyError, TypeError, ValueError) as exc:
            problems.append(str(exc) if isinstance(exc, EntryError) else f"{path}: {exc}")
            continue
        if entry.id in seen:
            problems.append(f"{path}: id: {entry.id} is already used by {seen[entry.id]}")
            continue
        seen[entry.id] = path
        entries.append(entry)
    return Catalog(tuple(entries), tuple(problems))
