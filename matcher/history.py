"""Which later release changed the dtype/device handling of the library code a traceback failed in.

Most dtype failures reported against a library are bugs in that library that a later release fixed. The index
built by :mod:`dtypefix.kbtools.history` (shipped under ``matcher/data/history/``) records, per library file and
function, the releases that changed the function's dtype or device lines, with the lines and the PR. This module
reads a traceback's library frames (innermost first), works out the installed release (from the versions the
input gives, else from which releases' files have the printed line text at the printed line number), and lists
the later changes of each frame's function — a change to that code's dtype handling, likely the fix.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sqlite3
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from .packages import PackageVersion
from .traceback import Frame

__all__ = ["DB_NAME", "Change", "Coverage", "FrameHistory", "coverage", "fix_history", "line_hash", "open_index"]

_NEAR = 3
"""Changed lines within this many lines of the failing line count as touching it."""
_SITE = re.compile(r"(?:site|dist)-packages[/\\]")


def line_hash(text: str) -> int:
    """16-bit hash of a stripped source line: what a traceback prints under ``File ..., line N``."""
    return int.from_bytes(hashlib.blake2b(text.strip().encode(), digest_size=2).digest(), "big")


@dataclass(frozen=True)
class Change:
    """A later release's change to the dtype/device lines of the function a frame is in."""

    release: str
    """The first release that contains the change."""
    function: str
    """Qualified name (``MotionConv2d.forward``)."""
    old: tuple[str, ...]
    """Lines removed (stripped), only those of the change that touches dtype/device handling."""
    new: tuple[str, ...]
    """Lines added."""
    pr: int
    """Pull request number; 0 when unknown (released code read from wheels)."""
    subject: str
    """Commit subject; empty when unknown."""
    closeness: str
    """``line`` (the failing line itself changed), ``near`` (within a few lines of it) or ``function``."""
    confidence: str
    """``high``, ``medium`` or ``low``: how likely this change is the fix of this failure."""


@dataclass(frozen=True)
class FrameHistory:
    """One library frame of the failing stack and the later changes to its function."""

    library: str
    """Distribution name (``diffusers``)."""
    path: str
    """File under the package (``diffusers/models/attention.py``)."""
    line: int
    function: str
    code: str
    installed: str
    """The installed release: from the input's versions, else the newest release whose lines match; may be
    empty when neither says."""
    installed_from: str
    """``versions`` (a freeze, listing or banner said it) or ``lines`` (the frames' line texts matched)."""
    matching: tuple[str, ...]
    """Releases whose file has this frame's line text at its line number (empty when not checked)."""
    changes: tuple[Change, ...]
    """Later changes of the function's dtype/device handling, oldest first."""


@dataclass(frozen=True)
class Coverage:
    """What the shipped index covers: shown by ``dtypefix --version``."""

    built: str
    libraries: tuple[tuple[str, str, str, int], ...]
    """(library, first release, last release, number of releases)."""
    not_covered: tuple[str, ...]


DB_NAME = "history.sqlite"
"""The index file under ``matcher/data/history/`` (written by :mod:`dtypefix.kbtools.history`)."""


def _data_dir() -> Path:
    return Path(str(resources.files("dtypefix.matcher"))) / "data" / "history"


@dataclass(frozen=True)
class _Library:
    name: str
    package: str
    releases: tuple[str, ...]
    built: str
    not_covered: tuple[str, ...]


class _Index:
    """The opened index: library rows read once, file rows read when a frame asks for them."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        rows = self._db.execute("SELECT name, package, releases, built, not_covered FROM library").fetchall()
        self.libraries = {
            r[0]: _Library(r[0], r[1], tuple(json.loads(r[2])), r[3], tuple(json.loads(r[4]))) for r in rows
        }
        self.packages = {lib.package: lib.name for lib in self.libraries.values()}

    @functools.lru_cache(maxsize=256)  # noqa: B019 -- one index per process, rows are immutable
    def file(self, library: str, path: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT data FROM file WHERE library = ? AND path = ?", (library, path)).fetchone()
        if row is None:
            return None
        data: dict[str, Any] = json.loads(zlib.decompress(row[0]))
        return data


@functools.lru_cache(maxsize=4)
def open_index(folder: str = "") -> _Index | None:
    """The index in ``folder`` (default: the one shipped in the package); None when absent or unreadable."""
    path = (Path(folder) if folder else _data_dir()) / DB_NAME
    if not path.is_file():
        return None
    try:
        return _Index(path)
    except (sqlite3.Error, ValueError):
        return None  # a damaged index is no answer, never a crash while explaining


def coverage(folder: str = "") -> Coverage:
    """The date the index was built and the releases it covers per library."""
    index = open_index(folder)
    if index is None:
        return Coverage("", (), ())
    libs = sorted(index.libraries.values(), key=lambda lib: lib.name)
    rows = tuple((lib.name, lib.releases[0], lib.releases[-1], len(lib.releases)) for lib in libs if lib.releases)
    missing = tuple(f"{lib.name} {m}" for lib in libs for m in lib.not_covered)
    return Coverage(max((lib.built for lib in libs), default=""), rows, missing)


def _locate(frame: Frame, packages: Mapping[str, str]) -> tuple[str, str] | None:
    """(library, path under the package) of a frame in an indexed library, from its printed file path."""
    file = frame.file.replace("\\", "/")
    site = list(_SITE.finditer(file))
    tail = file[site[-1].end() :] if site else file
    parts = tail.split("/")
    for i, part in enumerate(parts):
        if part in packages and (site or i > 0) and parts[-1].endswith(".py"):
            return packages[part], "/".join(parts[i:])
    return None


def _matching_releases(row: dict[str, Any], frame: Frame, count: int) -> list[int]:
    """Releases whose file has the frame's line text at its line number.

    The file's line hashes are stored once and then as edits per release that changed the file; they are
    replayed in order (each release's edits are stored last first, so earlier offsets stay valid).
    """
    if not frame.code or "l" not in row:
        return []
    wanted = line_hash(frame.code)
    out: list[int] = []
    versions: list[list[Any]] = row["l"]
    starts = [v[0] for v in versions] + [count]
    current: list[int] = []
    for k, (first, ops) in enumerate(versions):
        if ops is None:
            current = []
            continue
        for i1, i2, new in ops:
            current[i1:i2] = new
        if 0 < frame.line <= len(current) and current[frame.line - 1] == wanted:
            out.extend(range(first, starts[k + 1]))
    return out


def _span_at(row: dict[str, Any], release: int) -> dict[str, list[int]]:
    current: dict[str, list[int]] = {}
    for first, spans in row.get("sp", []):
        if first > release:
            break
        current = spans
    return current


def _function_at(row: dict[str, Any], frame: Frame, release: int | None) -> str:
    """The qualified name of the changed function the frame's line is in (empty: none of them)."""
    names = {str(e["f"]) for e in row.get("e", [])}
    candidates = [n for n in names if n.rsplit(".", 1)[-1] == frame.function]
    if release is not None:
        spans = _span_at(row, max(release, 0))  # older than every indexed release: the oldest is closest
        inside = [n for n in candidates if n in spans and spans[n][0] <= frame.line <= spans[n][1]]
        if inside:
            return min(inside, key=lambda n: spans[n][1] - spans[n][0])
    return candidates[0] if len(candidates) == 1 else ""


def _release_index(releases: list[str], version: str) -> int | None:
    """Index of the newest indexed release not newer than ``version`` (local part ignored); -1 when it is older
    than every indexed release (every indexed change is then later)."""
    try:
        wanted = Version(version.split("+", 1)[0])
    except InvalidVersion:
        return None
    best = -1
    for i, release in enumerate(releases):
        if Version(release) <= wanted:
            best = i
    return best


def _closeness(event: dict[str, Any], frame: Frame, offset: int | None) -> str:
    code = frame.code.strip()
    if code and code in event["old"]:
        return "line"
    if offset is not None and any(abs(offset - a) <= _NEAR for a in event.get("at", [])):
        return "near"
    return "function"


_CONFIDENCE = {("line", True): "high", ("near", True): "medium", ("line", False): "medium"}


def _frame_history(
    frame: Frame, lib: _Library, path: str, row: dict[str, Any], versions: Mapping[str, PackageVersion], inner: bool
) -> FrameHistory | None:
    if "e" not in row:
        return None
    library = lib.name
    releases = list(lib.releases)
    matching = _matching_releases(row, frame, len(releases))
    given = versions.get(library)
    installed_at: int | None
    if given is not None:
        installed_at, source = _release_index(releases, given.version), "versions"
        installed = given.version
    elif matching:
        installed_at, source = max(matching), "lines"
        installed = releases[installed_at]
    else:
        return None
    if installed_at is None:
        return None
    function = _function_at(row, frame, installed_at)
    if not function:
        return None
    span = _span_at(row, max(installed_at, 0)).get(function)
    offset = frame.line - span[0] if span and frame.line >= span[0] else None
    changes: list[Change] = []
    for event in row["e"]:
        if event["f"] != function or event["r"] <= installed_at:
            continue
        close = _closeness(event, frame, offset)
        confidence = _CONFIDENCE.get((close, inner), "low")
        changes.append(
            Change(
                releases[event["r"]],
                function,
                tuple(event["old"]),
                tuple(event["new"]),
                int(event.get("pr", 0)),
                str(event.get("s", "")),
                close,
                confidence,
            )
        )
    if not changes:
        return None
    return FrameHistory(
        library,
        path,
        frame.line,
        frame.function,
        frame.code,
        installed,
        source,
        tuple(releases[i] for i in matching),
        tuple(changes),
    )


def fix_history(
    frames: Iterable[Frame], versions: Mapping[str, PackageVersion], folder: str = ""
) -> tuple[FrameHistory, ...]:
    """For each library frame (innermost first), the later releases that changed its function's dtype handling.

    ``frames`` are in printed order (outermost first), as a :class:`~dtypefix.matcher.traceback.Stack` holds
    them. Only frames whose function changed after the installed release appear; nothing when nothing changed.
    """
    index = open_index(folder)
    if index is None:
        return ()
    out: list[FrameHistory] = []
    seen: set[tuple[str, str, str]] = set()
    for depth, frame in enumerate(reversed(tuple(frames))):
        located = _locate(frame, index.packages)
        if located is None:
            continue
        library, path = located
        row = index.file(library, path)
        if row is None:
            continue
        found = _frame_history(frame, index.libraries[library], path, row, versions, inner=not out and depth < 3)
        if found is not None and (library, path, found.changes[0].function) not in seen:
            seen.add((library, path, found.changes[0].function))
            out.append(found)
    return tuple(out)
