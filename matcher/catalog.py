"""Loading the knowledge base: built-in entries plus private KB folders, validated once, cached by content.

Explaining is lenient: a broken entry is skipped with one problem line, so one bad private entry never stops
an explanation. Lint is strict: the same problems fail it. Validation (JSON Schema) and YAML parsing happen
only when the KB changed; otherwise the validated mappings come from a cache keyed by a hash of every entry's
path and bytes and of the code that reads them.

The cache directory is treated as hostile ground (``XDG_CACHE_HOME`` may point into a shared ``/tmp`` on HPC and
CI hosts): it is used only when it is a real directory owned by the current user and writable by no one else;
files are created with unpredictable names (``mkstemp``: ``O_EXCL``, never following a planted symlink) and moved
into place; what is read back is opened without following symlinks, checked against the digest recorded with it,
and anything corrupt, foreign or unreadable is rebuilt rather than trusted or fatal. Old caches are pruned.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .entry import EntryError, KBEntry, entry_from_mapping
from .prefilter import choose_keywords, required_words

__all__ = ["Catalog", "builtin_kb_dir", "default_cache_dir", "entry_files", "load_catalog", "read_entry_mapping"]

_CACHE_FORMAT = 3
_KEEP_CACHES = 8
"""How many cache generations (KB combinations) to keep; older ones are pruned when a new one is written."""
_MAX_CACHE_BYTES = 64 << 20
_MAX_ENTRY_BYTES = 256 << 10
"""An entry is a few KB of YAML; a private KB cannot make every command read a huge file."""
_MAX_ALIASES = 50
_ALIAS = re.compile(r"(?<![\w*])\*[A-Za-z0-9_-]+")


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

    def _build(self, position: int) -> KBEntry | None:
        record = self._records[position]
        entry = self._built.get(record["id"])
        if entry is None:
            try:
                entry = entry_from_mapping(self._load(record), Path(record["path"]), record["slug"])
            except (EntryError, KeyError, TypeError, ValueError, OSError) as exc:
                # A cached mapping this code cannot use (another version's cache, a damaged file): skip the entry.
                self.problems = (*self.problems, f"{record.get('path', '?')}: unusable cached entry: {exc}")
                return None
            self._built[record["id"]] = entry
        return entry

    def _built_from(self, positions: Iterable[int]) -> tuple[KBEntry, ...]:
        return tuple(e for e in (self._build(i) for i in positions) if e is not None)

    @property
    def entries(self) -> tuple[KBEntry, ...]:
        return self._built_from(range(len(self._records)))

    @property
    def active(self) -> tuple[KBEntry, ...]:
        return self._built_from(i for i, r in enumerate(self._records) if r["status"] == "active")

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
        return self._built_from(sorted(positions))

    def checkable(self) -> tuple[KBEntry, ...]:
        """Active cause entries with config or environment conditions (what ``dtypefix check`` can test)."""
        return self._built_from(i for i, r in enumerate(self._records) if r["status"] == "active" and r["checkable"])


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
    """``$DTYPEFIX_CACHE_DIR``, else ``$XDG_CACHE_HOME/dtypefix``, else ``~/.cache/dtypefix``; empty disables.

    None (no cache) when no home can be found (no ``HOME`` and a uid without a passwd entry, as on OpenShift).
    """
    explicit = os.environ.get("DTYPEFIX_CACHE_DIR")
    if explicit is not None:
        return Path(explicit) if explicit else None
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError, OSError):
            return None
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


def _printable_name(path: Path) -> bool:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((builtin_kb_dir() / "schema.json").read_text(encoding="utf-8"))
    return data


def read_entry_mapping(path: Path) -> dict[str, Any]:
    """Parse one entry file safely and validate it against the schema; raises :class:`EntryError`."""
    import jsonschema  # imported here: only needed when the cache misses, and it is slow to import
    import yaml

    try:
        if path.stat().st_size > _MAX_ENTRY_BYTES:
            raise EntryError(path, "", f"larger than {_MAX_ENTRY_BYTES >> 10} KB; not an entry")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EntryError(path, "", f"cannot read: {exc}") from None
    if text.count("*") > _MAX_ALIASES and len(_ALIAS.findall(text)) > _MAX_ALIASES:
        raise EntryError(path, "", f"more than {_MAX_ALIASES} YAML aliases; refusing to expand them")
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
    """A hash of every entry file's path and bytes, the schema, and the code that turns them into entries."""
    digest = hashlib.sha256(f"{_CACHE_FORMAT}".encode())
    here = Path(__file__).parent
    code = [here / name for name in ("catalog.py", "entry.py", "facts.py", "prefilter.py")]
    code += sorted((here / "conditions").glob("*.py"))  # one module per condition kind
    for path, slug in [*((p, "") for p in code), (builtin_kb_dir() / "schema.json", ""), *files]:
        try:
            digest.update(f"\0{path}\0{slug}\0".encode() + path.read_bytes())
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
        "checkable": entry.checkable,
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


def _safe_dir(cache_dir: Path, *, create: bool) -> bool:
    """Whether ``cache_dir`` may be used: a real directory (not a symlink), ours, writable by no one else."""
    try:
        if create and not os.path.lexists(cache_dir):
            cache_dir.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                cache_dir.mkdir(mode=0o700)
        info = os.lstat(cache_dir)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    if info.st_mode & 0o077:
        try:
            cache_dir.chmod(0o700)  # ours but too open (an old version's 0755): close it
        except OSError:
            return False
    return True


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a fresh, unpredictably named file beside ``path`` and move it into place."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()  # a full disk must not leave temp files behind
        raise


def _write_cache(
    cache_dir: Path, signature: str, records: list[dict[str, Any]], mappings: list[dict[str, Any]], problems: list[str]
) -> None:
    if not _safe_dir(cache_dir, create=True):
        return
    index_path, data_path = _cache_paths(cache_dir, signature)
    try:
        offset = 0
        lines = []
        for record, data in zip(records, mappings, strict=True):
            line = (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")
            record["offset"], record["length"] = offset, len(line)
            offset += len(line)
            lines.append(line)
        blob = b"".join(lines)
        _write_atomically(data_path, blob)
        index = {
            "format": _CACHE_FORMAT,
            "signature": signature,
            "data_sha256": hashlib.sha256(blob).hexdigest(),
            "records": records,
            "problems": problems,
            "index": keyword_index(records),
        }
        _write_atomically(index_path, json.dumps(index).encode("utf-8"))
        _prune(cache_dir, keep={index_path.name, data_path.name})
    except OSError:
        pass  # a read-only or full home must not stop an explanation


def _prune(cache_dir: Path, keep: set[str]) -> None:
    """Drop stale temp files and all but the most recently used cache generations."""
    try:
        names = [p.name for p in cache_dir.iterdir()]
    except OSError:
        return
    now = time.time()
    generations: dict[str, float] = {}
    for name in names:
        path = cache_dir / name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if name.endswith(".tmp") and now - info.st_mtime > 3600:
            with contextlib.suppress(OSError):
                path.unlink()
        elif name.startswith("kb-") and name.endswith((".index.json", ".data.jsonl")):
            stem = name.rsplit(".", 2)[0]
            generations[stem] = max(generations.get(stem, 0.0), info.st_mtime)
    kept = {n.rsplit(".", 2)[0] for n in keep}
    ordered = sorted((s for s in generations if s not in kept), key=lambda s: -generations[s])
    for stem in ordered[max(0, _KEEP_CACHES - len(kept)) :]:
        for suffix in (".index.json", ".data.jsonl"):
            with contextlib.suppress(OSError):
                (cache_dir / f"{stem}{suffix}").unlink()


def _read_own_file(path: Path) -> bytes | None:
    """The bytes of a regular file we own, opened without following symlinks; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > _MAX_CACHE_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def _valid_index(blob: Any, signature: str, data: bytes) -> bool:
    """The index is this generation's, its digest matches the data, and every record has the shape we use."""
    if not isinstance(blob, dict) or blob.get("signature") != signature or blob.get("format") != _CACHE_FORMAT:
        return False
    if blob.get("data_sha256") != hashlib.sha256(data).hexdigest():
        return False
    records, problems, index = blob.get("records"), blob.get("problems"), blob.get("index")
    if not isinstance(records, list) or not isinstance(problems, list) or not isinstance(index, dict):
        return False
    fields = {"path": str, "slug": str, "id": str, "status": str, "keywords": list, "offset": int, "length": int}
    for record in records:
        if not isinstance(record, dict) or not all(isinstance(record.get(k), t) for k, t in fields.items()):
            return False
        if record["offset"] < 0 or record["offset"] + record["length"] > len(data):
            return False
    return all(
        isinstance(v, list) and all(isinstance(i, int) and 0 <= i < len(records) for i in v) for v in index.values()
    )


def _read_cache(
    cache_dir: Path, signature: str
) -> tuple[list[dict[str, Any]], list[str], dict[str, list[int]], bytes] | None:
    if not _safe_dir(cache_dir, create=False):
        return None
    index_path, data_path = _cache_paths(cache_dir, signature)
    raw, data = _read_own_file(index_path), _read_own_file(data_path)
    if raw is None or data is None:
        return None
    try:
        blob = json.loads(raw)
    except ValueError:
        return None
    if not _valid_index(blob, signature, data):
        return None
    return blob["records"], [str(p) for p in blob["problems"]], blob["index"], data


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
        for path, slug in entry_files(root):
            if _printable_name(path):
                files.append((path, slug))
            else:  # a file name that is not UTF-8 would break every later print of it: report and skip
                missing.append(f"{str(path)!a}: file name is not valid UTF-8; entry skipped")
    signature = _signature(files)
    cached = _read_cache(cache_dir, signature) if cache_dir is not None else None
    if cached is not None:
        records, problems, index, data = cached

        def load(record: dict[str, Any]) -> dict[str, Any]:
            loaded = json.loads(data[record["offset"] : record["offset"] + record["length"]])
            if not isinstance(loaded, dict):
                raise TypeError("not a mapping")
            return loaded

        return Catalog(records, missing + problems, load, index)
    records, mappings, problems = _read_files(files)
    if cache_dir is not None:
        _write_cache(cache_dir, signature, records, mappings, problems)
    by_path = {record["path"]: data for record, data in zip(records, mappings, strict=True)}
    return Catalog(records, missing + problems, lambda record: by_path[record["path"]])
