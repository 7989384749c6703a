"""Loading the knowledge base: built-in entries plus private KB folders, validated once, cached.

Explaining is lenient: a broken entry is skipped with one problem line, so one bad private entry never stops
an explanation. Lint is strict: the same problems fail it. Validation (JSON Schema) and YAML parsing happen
only when the KB changed; otherwise the validated mappings come from a cache whose name is a hash of what every
entry file and every module that reads them *is* (path, size, inode, modification and change times): a start-up
stats the files and reads none of them, so its cost stays small as the KB grows, and a hostile private entry (a
2 GB file, ``/dev/zero``, a FIFO) is never read before it is refused.

The folder the user names (``DTYPEFIX_CACHE_DIR``, or ``XDG_CACHE_HOME`` on a shared ``/tmp``) is treated as
hostile ground and left as it is: dtypefix keeps its files in a folder of its own inside it
(``dtypefix-kb-<uid>``, mode 0700), opened once without following symlinks and then used only through that
descriptor (``openat``/``renameat``/``unlinkat``), so swapping a path component for a symlink later redirects
nothing. Files are created with unpredictable names and ``O_EXCL``, read back only when they are regular files
of ours (opened ``O_NONBLOCK``: a FIFO planted at a cache name cannot hang a command), each record checked
against the CRC recorded with it; anything corrupt, foreign or unreadable is rebuilt from the entry's own file
rather than trusted or fatal. Only dtypefix's own files are pruned.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from .entry import EntryError, KBEntry, entry_from_mapping
from .prefilter import choose_keywords, required_words

__all__ = ["Catalog", "builtin_kb_dir", "default_cache_dir", "entry_files", "load_catalog", "read_entry_mapping"]

_CACHE_FORMAT = 6
_KEEP_CACHES = 8
"""How many cache generations (KB combinations) to keep; older ones are pruned when a new one is written."""
_MAX_CACHE_BYTES = 64 << 20
_STALE_TEMP_SECONDS = 3600
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
        """``file: field: problem`` lines for entries that were skipped, fixed when the KB is loaded."""

    def _build(self, position: int) -> KBEntry | None:
        """The entry at ``position``; its problems are known at load time, so building never adds any.

        A record whose cached mapping this code cannot use (another version's cache, a damaged file) is built again
        from its own entry file, checked in full; should that fail as well, the entry is left out of this run, and
        the next load (or ``dtypefix lint``) reports the file's problem like any other.
        """
        record = self._records[position]
        entry = self._built.get(record["id"])
        if entry is None:
            path = Path(record["path"])
            try:
                # Every record's mapping built without an error before it was kept (cached or just read).
                entry = entry_from_mapping(self._load(record), path, record["slug"], checked=True)
            except (EntryError, KeyError, TypeError, ValueError, OSError):
                try:
                    entry = entry_from_mapping(read_entry_mapping(path), path, record["slug"])
                except (EntryError, KeyError, TypeError, ValueError, OSError):
                    return None
            entry = _with_keywords(entry, record.get("pattern_keywords"))
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


def _with_keywords(entry: KBEntry, keywords: Any) -> KBEntry:
    """``entry`` with each error pattern's keyword (the word the index chose for it; see :mod:`.prefilter`).

    A pattern whose keyword no message holds cannot match a message, so the anchor skips it without compiling it:
    most of a candidate's patterns are of that kind.
    """
    if not isinstance(keywords, list) or len(keywords) != len(entry.errors):
        return entry
    errors = tuple(
        replace(e, keyword=k) if isinstance(k, str) else e for e, k in zip(entry.errors, keywords, strict=True)
    )
    return replace(entry, errors=errors)


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

    A relative ``XDG_CACHE_HOME`` is ignored, as the XDG Base Directory specification says. None (no cache) when no
    home can be found (no ``HOME`` and a uid without a passwd entry, as on OpenShift). The folder returned is the one
    the user named: the cache lives in a folder of dtypefix's own inside it (see :func:`load_catalog`).
    """
    explicit = os.environ.get("DTYPEFIX_CACHE_DIR")
    if explicit is not None:
        return Path(explicit) if explicit else None
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not Path(base).is_absolute():
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError, OSError):
            return None
    return Path(base) / "dtypefix"


def _scan(root: Path, unreadable: list[str] | None = None) -> list[tuple[str, str, str]]:
    """``(file, slug, what the file is)`` for every entry under ``root``, with ``os.scandir``, in path order.

    ``what the file is`` comes from ``stat`` (see :func:`_signature`); a start-up lists and stats thousands of entry
    files this way in a few milliseconds, where ``Path.glob`` and a ``Path`` per file cost several times that. An
    area folder that cannot be listed adds a line to ``unreadable`` (its entries are not used).
    """
    if root.is_file():
        return [(str(root), f"{root.parent.name}/{root.stem}", _identity(str(root)))]

    def yaml_in(folder: str) -> list[tuple[str, str]]:
        with os.scandir(folder) as listing:
            return sorted((item.name, item.path) for item in listing if item.name.endswith(".yaml"))

    top = str(root)
    direct = yaml_in(top)
    if direct:  # an area folder (kb/deepspeed): its entries; the YAML in example folders are configs
        return [(path, f"{root.name}/{name[:-5]}", _identity(path)) for name, path in direct]
    with os.scandir(top) as listing:
        areas = sorted((item.name, item.path) for item in listing if item.is_dir())
    found: list[tuple[str, str, str]] = []
    for area, folder in areas:
        try:
            found.extend((path, f"{area}/{name[:-5]}", _identity(path)) for name, path in yaml_in(folder))
        except OSError as exc:
            if unreadable is not None:
                unreadable.append(
                    f"{folder}: KB folder cannot be read ({exc.strerror or exc}); its entries are not used"
                )
    return found


def _identity(path: str) -> str:
    """What a file is, from ``stat`` alone: size, inode, device, mode and modification and change times (ns)."""
    try:
        info = os.stat(path)  # noqa: PTH116 - a str path: no Path object per file on the start-up path
    except OSError:
        return "<missing>"
    return f"{info.st_size}:{info.st_ino}:{info.st_dev}:{info.st_mode}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def entry_files(root: Path) -> Iterator[tuple[Path, str]]:
    """``(file, slug)`` for every entry under ``root``: ``<area>/<slug>.yaml``, example folders skipped."""
    for path, slug, _ in _scan(root):
        yield Path(path), slug


def _printable_name(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((builtin_kb_dir() / "schema.json").read_text(encoding="utf-8"))
    return data


def _read_bounded(path: Path) -> bytes:
    """The bytes of a regular file of at most :data:`_MAX_ENTRY_BYTES`, read without ever reading more.

    Opened ``O_NONBLOCK`` so that a FIFO cannot hang the open, and checked with ``fstat`` on the open descriptor:
    ``/dev/zero``, a device, a FIFO or a 2 GB file is refused before a byte of it is read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise EntryError(path, "", "not a regular file; not an entry")
        if info.st_size > _MAX_ENTRY_BYTES:
            raise EntryError(path, "", f"larger than {_MAX_ENTRY_BYTES >> 10} KB; not an entry")
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(_MAX_ENTRY_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > _MAX_ENTRY_BYTES:  # it grew after the fstat
        raise EntryError(path, "", f"larger than {_MAX_ENTRY_BYTES >> 10} KB; not an entry")
    return data


def read_entry_mapping(path: Path) -> dict[str, Any]:
    """Parse one entry file safely and validate it against the schema; raises :class:`EntryError`."""
    import jsonschema  # imported here: only needed when the cache misses, and it is slow to import
    import yaml

    try:
        text = _read_bounded(path).decode("utf-8")
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


def _code_files() -> list[str]:
    """Every module of the matcher package and the schema: what turns entry files into entries."""
    here = Path(__file__).parent
    return [*sorted(str(p) for p in here.rglob("*.py")), str(builtin_kb_dir() / "schema.json")]


def _signature(files: list[tuple[str, str, str]]) -> str:
    """A hash of what every entry file and every module that reads them is, from ``stat`` alone.

    An edit that keeps the size and resets the modification time still moves the change time, which no user can
    set. Reading the bytes instead would cost a read of every entry on every start-up, and read a hostile file
    before its size is checked.
    """
    parts = [f"{_CACHE_FORMAT}"]
    parts.extend(f"{path}\0\0{_identity(path)}" for path in _code_files())
    parts.extend(f"{path}\0{slug}\0{what}" for path, slug, what in files)
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


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
        record["pattern_keywords"] = [next(chosen) for _ in record.pop("words")]
        record["keywords"] = sorted(set(record["pattern_keywords"]))


def _read_files(files: list[tuple[str, str, str]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Parse, validate and build every entry once: index records, their mappings, and the problems."""
    records: list[dict[str, Any]] = []
    mappings: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: dict[str, Path] = {}
    for position, (name, slug, _) in enumerate(files):
        path = Path(name)
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
        records.append({**_index_record(path, slug, entry), "file": position})
        mappings.append(data)
    _choose_keywords(records)
    return records, mappings, problems


def _cache_names(signature: str) -> tuple[str, str]:
    stem = f"kb-{_CACHE_FORMAT}-{signature[:32]}"
    return f"{stem}.index.json", f"{stem}.data.jsonl"


def _own_folder_name() -> str:
    """dtypefix's folder inside the one the user names: per user, so that two users sharing ``/tmp`` never meet."""
    return f"dtypefix-kb-{os.getuid()}"


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _open_cache_dir(base: Path, *, create: bool) -> int | None:
    """A descriptor of dtypefix's own folder inside ``base``, or None when there is none we may use.

    ``base`` itself is never changed (no chmod, no pruning): it may be a shared ``/tmp`` or a project folder. Our
    folder must be a real directory (not a symlink), owned by us; one that is ours but open to others is closed.
    """
    try:
        if create:
            base.mkdir(mode=0o700, parents=True, exist_ok=True)
        parent = os.open(base, _DIR_FLAGS)
    except OSError:
        return None
    name = _own_folder_name()
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=parent)
        fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=parent)
    except OSError:
        return None
    finally:
        os.close(parent)
    try:
        info = os.fstat(fd)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise PermissionError("not ours")
        if info.st_mode & 0o077:
            os.fchmod(fd, 0o700)  # ours but open (made with another umask): close it; its files are checked anyway
    except OSError:
        os.close(fd)
        return None
    return fd


def _write_atomically(folder: int, name: str, data: bytes) -> None:
    """Write ``data`` to a fresh, unpredictably named file in ``folder`` and move it into place there."""
    tmp = f".{name}.{os.urandom(8).hex()}.tmp"  # os.urandom: `secrets` imports `random` (a cold-start cost)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags, 0o600, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)  # a full disk must not leave temp files behind
        raise


_ROW = ("file", "id", "status", "checkable", "offset", "length", "crc", "pattern_keywords")
"""A cached record as a JSON array in this order: the path and slug come from the file list every start-up makes
anyway (``file`` is a position in it), so the index a start-up parses stays small as the KB grows."""


def _write_cache(
    cache_dir: Path, signature: str, records: list[dict[str, Any]], mappings: list[dict[str, Any]], problems: list[str]
) -> None:
    folder = _open_cache_dir(cache_dir, create=True)
    if folder is None:
        return
    index_name, data_name = _cache_names(signature)
    try:
        offset = 0
        lines = []
        for record, data in zip(records, mappings, strict=True):
            line = (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")
            record["offset"], record["length"], record["crc"] = offset, len(line), zlib.crc32(line)
            offset += len(line)
            lines.append(line)
        _write_atomically(folder, data_name, b"".join(lines))
        index = {
            "format": _CACHE_FORMAT,
            "signature": signature,
            "records": [[record[key] for key in _ROW] for record in records],
            "problems": problems,
            "index": keyword_index(records),
        }
        _write_atomically(folder, index_name, json.dumps(index, separators=(",", ":")).encode("utf-8"))
        _prune(folder, keep={index_name, data_name})
    except OSError:
        pass  # a read-only or full home must not stop an explanation
    finally:
        os.close(folder)


def _prune(folder: int, keep: set[str]) -> None:
    """Drop our stale temp files and all but the most recently used cache generations; nothing else."""
    try:
        with os.scandir(folder) as listing:
            found = [(item.name, item.stat(follow_symlinks=False)) for item in listing]
    except OSError:
        return
    now = time.time()
    generations: dict[str, float] = {}
    for name, info in found:
        if name.startswith(".kb-") and name.endswith(".tmp") and now - info.st_mtime > _STALE_TEMP_SECONDS:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=folder)
        elif name.startswith("kb-") and name.endswith((".index.json", ".data.jsonl")):
            stem = name.rsplit(".", 2)[0]
            generations[stem] = max(generations.get(stem, 0.0), info.st_mtime)
    kept = {n.rsplit(".", 2)[0] for n in keep}
    ordered = sorted((s for s in generations if s not in kept), key=lambda s: -generations[s])
    for stem in ordered[max(0, _KEEP_CACHES - len(kept)) :]:
        for suffix in (".index.json", ".data.jsonl"):
            with contextlib.suppress(OSError):
                os.unlink(f"{stem}{suffix}", dir_fd=folder)


def _read_own_file(folder: int, name: str) -> bytes | None:
    """The bytes of a regular file of ours in ``folder``, opened without following symlinks or blocking."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > _MAX_CACHE_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(info.st_size)  # not read(limit): that would allocate the limit first
    except OSError:
        return None
    finally:
        os.close(fd)


_ROW_TYPES = (int, str, str, bool, int, int, int, list)


def _records_from(
    blob: Any, signature: str, files: list[tuple[str, str, str]], size: int
) -> list[dict[str, Any]] | None:
    """The index's records, when it is this generation's and every row has the shape we use and lies in the data."""
    if not isinstance(blob, dict) or blob.get("signature") != signature or blob.get("format") != _CACHE_FORMAT:
        return None
    rows, problems, index = blob.get("records"), blob.get("problems"), blob.get("index")
    if not isinstance(rows, list) or not isinstance(problems, list) or not isinstance(index, dict):
        return None
    records = []
    for row in rows:
        if not isinstance(row, list) or len(row) != len(_ROW) or not all(map(isinstance, row, _ROW_TYPES)):
            return None
        record = dict(zip(_ROW, row, strict=True))
        if not 0 <= record["file"] < len(files) or record["offset"] < 0 or record["offset"] + record["length"] > size:
            return None
        record["path"], record["slug"], _ = files[record["file"]]
        records.append(record)
    for positions in index.values():
        if not isinstance(positions, list) or not all(isinstance(i, int) and 0 <= i < len(records) for i in positions):
            return None
    return records


def _read_cache(
    cache_dir: Path, signature: str, files: list[tuple[str, str, str]]
) -> tuple[list[dict[str, Any]], list[str], dict[str, list[int]], bytes] | None:
    folder = _open_cache_dir(cache_dir, create=False)
    if folder is None:
        return None
    try:
        index_name, data_name = _cache_names(signature)
        raw, data = _read_own_file(folder, index_name), _read_own_file(folder, data_name)
    finally:
        os.close(folder)
    if raw is None or data is None:
        return None
    try:
        blob = json.loads(raw)
    except ValueError:
        return None
    records = _records_from(blob, signature, files, len(data))
    if records is None:
        return None
    return records, [str(p) for p in blob["problems"]], blob["index"], data


def _kb_files(roots: list[Path]) -> tuple[list[tuple[str, str, str]], list[str]]:
    """Every entry file under ``roots``, and a problem line for each folder or file name that cannot be used."""
    missing: list[str] = []
    files: list[tuple[str, str, str]] = []
    for root in roots:
        if not root.exists():
            missing.append(f"{root}: KB folder not found")
            continue
        try:
            found = _scan(root, missing)
        except OSError as exc:
            missing.append(f"{root}: KB folder cannot be read ({exc.strerror or exc}); its entries are not used")
            continue
        for item in found:
            if _printable_name(item[0]):
                files.append(item)
            else:  # a file name that is not UTF-8 would break every later print of it: report and skip
                missing.append(f"{item[0]!a}: file name is not valid UTF-8; entry skipped")
    return files, missing


def load_catalog(
    extra_dirs: Iterable[Path] = (),
    *,
    include_builtin: bool = True,
    cache_dir: Path | None = None,
) -> Catalog:
    """Load the built-in KB and ``extra_dirs``; problems are collected, never raised."""
    roots = ([builtin_kb_dir()] if include_builtin else []) + [Path(d) for d in extra_dirs]
    files, missing = _kb_files(roots)
    signature = _signature(files)
    cached = _read_cache(cache_dir, signature, files) if cache_dir is not None else None
    if cached is not None:
        records, problems, index, data = cached

        def load(record: dict[str, Any]) -> dict[str, Any]:
            line = data[record["offset"] : record["offset"] + record["length"]]
            if zlib.crc32(line) != record["crc"]:  # damaged since it was written: the entry's own file decides
                return read_entry_mapping(Path(record["path"]))
            loaded = json.loads(line)
            if not isinstance(loaded, dict):
                raise TypeError("not a mapping")
            return loaded

        return Catalog(records, missing + problems, load, index)
    records, mappings, problems = _read_files(files)
    if cache_dir is not None:
        _write_cache(cache_dir, signature, records, mappings, problems)
    by_path = {record["path"]: data for record, data in zip(records, mappings, strict=True)}
    return Catalog(records, missing + problems, lambda record: by_path[record["path"]])
