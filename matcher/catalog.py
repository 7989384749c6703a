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
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .entry import EntryError, EntryKind, KBEntry, entry_from_mapping
from .prefilter import choose_keywords, required_words

__all__ = ["Catalog", "builtin_kb_dir", "default_cache_dir", "entry_files", "load_catalog", "read_entry_mapping"]

_CACHE_FORMAT = 2


class Catalog:
    """The usable entries, built from their validated mappings only when asked for.

    ``explain`` asks only for :meth:`candidates` — the entries whose error-pattern keywords occur in the input —
    so its cost does not grow with the size of the KB; ``entries`` builds everything (lint, docs, search).
    """

    def __init__(
        self,
        records: list[dict[str, Any]],
        problems: list[str],
        load: Callable[[dict[str, Any]], dict[str, Any]],
        index: dict[str, list[int]] | None = None,
    ) -> None:
        self._records = records
        self._load = load
        self._built: dict[str, KBEntry] = {}
        self._index = index if index is not None else keyword_index(records)
        self.problems: tuple[str, ...] = tuple(problems)
        """``file: field: problem`` lines for entries that were skipped."""

    def _build(self, position: int) -> KBEntry:
        record = self._records[position]
        entry = self._built.get(record["id"])
        if entry is None:
            entry = entry_from_mapping(self._load(record), Path(record["path"]), record["slug"])
            self._built[record["id"]] = entry
        return entry

    @property
    def entries(self) -> tuple[KBEntry, ...]:
        return tuple(self._build(i) for i in range(len(self._records)))

    @property
    def active(self) -> tuple[KBEntry, ...]:
        return tuple(self._build(i) for i, r in enumerate(self._records) if r["status"] == "active")

    def __len__(self) -> int:
        return len(self._records)

    def get(self, entry_id: str) -> KBEntry | None:
        wanted = entry_id.upper()
        for i, record in enumerate(self._records):
            slug = record["slug"]
            if record["id"] == wanted or slug == entry_id or slug.split("/")[-1] == entry_id:
                return self._build(i)
        return None

    def candidates(self, words: set[str]) -> tuple[KBEntry, ...]:
        """Active entries that could match an input containing ``words`` (see :mod:`.prefilter`)."""
        positions = set(self._index.get("", ()))
        for word in words & self._index.keys():
            positions.update(self._index[word])
        return tuple(self._build(i) for i in sorted(positions))

    def checkable(self) -> tuple[KBEntry, ...]:
        """Active cause entries with config or environment conditions (what ``dtypefix check`` can test)."""
        return tuple(self._build(i) for i, r in enumerate(self._records) if r["status"] == "active" and r["checkable"])


def keyword_index(records: list[dict[str, Any]]) -> dict[str, list[int]]:
    """``{keyword: [record positions]}`` over the active records; ``""`` lists those every input must try."""
    index: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        if record["status"] == "active":
            for word in record["keywords"]:
                index.setdefault(word, []).append(i)
    return index


def builtin_kb_dir() -> Path:
    """The ``kb/`` folder shipped in the package (editable or wheel)."""
    import dtypefix.kb  # a package (kb/__init__.py) so that editable installs and wheels both resolve it

    return Path(dtypefix.kb.__file__).parent


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
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EntryError(path, "", f"cannot read: {exc}") from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        raise EntryError(path, "", f"YAML: {getattr(exc, 'problem', None) or exc}", line) from None
    if not isinstance(data, dict):
        raise EntryError(path, "(top)", "not a mapping")
    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        first = errors[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path).lstrip(".") or "(top)"
        raise EntryError(path, where, first.message)
    return data


def _signature(files: list[tuple[Path, str]]) -> str:
    """A hash of every entry file's path, size and modification time (as pip and mypy key their caches)."""
    digest = hashlib.sha256(f"{_CACHE_FORMAT}".encode())
    schema = builtin_kb_dir() / "schema.json"
    for path, slug in [(schema, ""), *files]:
        try:
            stat = path.stat()
            digest.update(f"\0{path}\0{slug}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
        except OSError:
            digest.update(f"\0{path}\0<missing>".encode())
    return digest.hexdigest()


def _index_record(path: Path, slug: str, entry: KBEntry) -> dict[str, Any]:
    return {
        "path": str(path),
        "slug": slug,
        "id": entry.id,
        "status": entry.status.value,
        "words": [required_words(p.pattern) for p in entry.errors],
        "checkable": entry.kind is EntryKind.CAUSE and bool(entry.configs or entry.env),
    }


def _choose_keywords(records: list[dict[str, Any]]) -> None:
    """Give every record one keyword per error pattern, the rarest across the KB (see :mod:`.prefilter`)."""
    chosen = iter(choose_keywords([words for record in records for words in record["words"]]))
    for record in records:
        record["keywords"] = sorted({next(chosen) for _ in record.pop("words")})


def _read_files(files: list[tuple[Path, str]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Parse, validate and build every entry once: index records, their mappings, and the problems."""
    records: list[dict[str, Any]] = []
    mappings: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: dict[str, Path] = {}
    for path, slug in files:
        try:
            data = read_entry_mapping(path)
            entry = entry_from_mapping(data, path, slug)
        except EntryError as exc:
            problems.append(str(exc))
            continue
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"{path}: {exc}")
            continue
        if entry.id in seen:
            problems.append(f"{path}: id: {entry.id} is already used by {seen[entry.id]}")
            continue
        seen[entry.id] = path
        records.append(_index_record(path, slug, entry))
        mappings.append(data)
    _choose_keywords(records)
    return records, mappings, problems


def _cache_paths(cache_dir: Path, signature: str) -> tuple[Path, Path]:
    stem = f"kb-{_CACHE_FORMAT}-{signature[:32]}"
    return cache_dir / f"{stem}.index.json", cache_dir / f"{stem}.data.jsonl"


def _write_cache(
    cache_dir: Path, signature: str, records: list[dict[str, Any]], mappings: list[dict[str, Any]], problems: list[str]
) -> None:
    index_path, data_path = _cache_paths(cache_dir, signature)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        offset = 0
        lines = []
        for record, data in zip(records, mappings, strict=True):
            line = (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")
            record["offset"], record["length"] = offset, len(line)
            offset += len(line)
            lines.append(line)
        tmp_data = data_path.with_suffix(f".{os.getpid()}.tmp")
        tmp_data.write_bytes(b"".join(lines))
        tmp_data.replace(data_path)
        tmp_index = index_path.with_suffix(f".{os.getpid()}.tmp")
        tmp_index.write_text(
            json.dumps(
                {"signature": signature, "records": records, "problems": problems, "index": keyword_index(records)}
            ),
            encoding="utf-8",
        )
        tmp_index.replace(index_path)
    except OSError:
        pass  # a read-only home must not stop an explanation


def _read_cache(
    cache_dir: Path, signature: str
) -> tuple[list[dict[str, Any]], list[str], dict[str, list[int]], Path] | None:
    index_path, data_path = _cache_paths(cache_dir, signature)
    try:
        blob = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(blob, dict) or blob.get("signature") != signature or not data_path.exists():
        return None
    return blob["records"], blob["problems"], blob["index"], data_path


def load_catalog(
    extra_dirs: Iterable[Path] = (),
    *,
    include_builtin: bool = True,
    cache_dir: Path | None = None,
) -> Catalog:
    """Load the built-in KB and ``extra_dirs``; problems are collected, never raised."""
    roots = ([builtin_kb_dir()] if include_builtin else []) + [Path(d) for d in extra_dirs]
    missing: list[str] = []
    files: list[tuple[Path, str]] = []
    for root in roots:
        if not root.exists():
            missing.append(f"{root}: KB folder not found")
            continue
        files.extend(entry_files(root))
    signature = _signature(files)
    cached = _read_cache(cache_dir, signature) if cache_dir is not None else None
    if cached is not None:
        records, problems, index, data_path = cached

        def load(record: dict[str, Any]) -> dict[str, Any]:
            with data_path.open("rb") as handle:
                handle.seek(record["offset"])
                loaded: dict[str, Any] = json.loads(handle.read(record["length"]))
            return loaded

        return Catalog(records, missing + problems, load, index)
    records, mappings, problems = _read_files(files)
    if cache_dir is not None:
        _write_cache(cache_dir, signature, records, mappings, problems)
    by_path = {record["path"]: data for record, data in zip(records, mappings, strict=True)}
    return Catalog(records, missing + problems, lambda record: by_path[record["path"]])
