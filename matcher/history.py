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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from .packages import PackageVersion
from .traceback import FRAME, Frame

__all__ = [
    "DB_NAME",
    "Change",
    "Coverage",
    "FrameHistory",
    "best_change",
    "coverage",
    "fix_history",
    "line_hash",
    "open_index",
    "shown",
]

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
    """``line`` (the failing line itself changed), ``near`` (within a few lines of it), ``function`` (elsewhere in
    the failing function) or ``file`` (another function of the same file, next to the failing line)."""
    confidence: str
    """``high``, ``medium`` or ``low``: how likely this change is the fix of this failure."""
    moved_to: str = ""
    """The file the change is in when the code moved after the installed release (``diffusers/models/unets/...``);
    empty when it is the frame's own file."""
    sure: bool = True
    """Whether the change is surely later than the installed release; False when the user may already have it: it
    lies inside the range of releases the traceback's lines match, or (an index that keeps only the last patch of
    each minor release) in the indexed patch of the installed release's own minor."""


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
    """The installed release: from the input's versions, else the newest release whose lines match (``matching``
    then holds the whole range, and a change inside it is named with low confidence)."""
    installed_from: str
    """``versions`` (a freeze, listing or banner said it), ``lines`` (the frames' line texts matched at their line
    numbers) or ``text`` (only the failing lines' text matched, at other numbers: a source checkout or an edited
    copy)."""
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

    @functools.lru_cache(maxsize=32)  # noqa: B019 -- one index per process, rows are immutable
    def paths(self, library: str) -> tuple[str, ...]:
        """Every file of a library the index has a row for (asked only when a frame's file may have moved)."""
        rows = self._db.execute("SELECT path FROM file WHERE library = ?", (library,)).fetchall()
        return tuple(r[0] for r in rows)

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


def _locate(frame: Frame, packages: Mapping[str, str]) -> tuple[str, str, bool] | None:
    """(library, path under the package, installed) of a frame in an indexed library, from its printed file path.

    ``installed`` is False for a source checkout (``/code/DeepSpeed/deepspeed/runtime/engine.py``): such a path may
    be anyone's folder of that name, so its frame is answered only when its line text matches a release.
    """
    file = frame.file.replace("\\", "/")
    site = list(_SITE.finditer(file))
    tail = file[site[-1].end() :] if site else file
    parts = tail.split("/")
    if not parts[-1].endswith(".py"):
        return None
    # Under site-packages the package is the first folder; in a checkout (``/code/diffusers/src/diffusers/...``)
    # the repository folder often has the package's name too, so the innermost folder of that name is the package.
    # A path the reporter shortened (``peft/tuners/tuners_utils.py``) starts with the package's folder.
    order = range(len(parts)) if site else range(len(parts) - 1, -1, -1)
    for i in order:
        if parts[i] in packages:
            return packages[parts[i]], "/".join(parts[i:]), bool(site)
    return None


def _versions(row: dict[str, Any], count: int) -> Iterator[tuple[int, int, list[int] | None]]:
    """(first release, release after the last, line hashes) of each version of the file, oldest first.

    The file's line hashes are stored once and then as edits per release that changed the file; they are
    replayed in order (each release's edits are stored last first, so earlier offsets stay valid).
    """
    versions: list[list[Any]] = row.get("l", [])
    starts = [v[0] for v in versions] + [count]
    current: list[int] = []
    for k, (first, ops) in enumerate(versions):
        if ops is None:
            current = []
            yield first, starts[k + 1], None
            continue
        for i1, i2, new in ops:
            current[i1:i2] = new
        yield first, starts[k + 1], current


def _matching_releases(row: dict[str, Any], frame: Frame, count: int) -> list[int]:
    """Releases whose file has the frame's line text at its line number."""
    if not frame.code:
        return []
    wanted = line_hash(frame.code)
    out: list[int] = []
    for first, after, hashes in _versions(row, count):
        if hashes is not None and 0 < frame.line <= len(hashes) and hashes[frame.line - 1] == wanted:
            out.extend(range(first, after))
    return out


def _text_releases(row: dict[str, Any], frame: Frame, count: int) -> list[int]:
    """Releases whose copy of the frame's function has the frame's line text somewhere, at whatever line number.

    The fallback when no release has it at the printed line number: a source checkout between two releases or an
    edited install prints its own numbering, but the line that failed is still a release's line.
    """
    code = frame.code.strip()
    if len(code) < _MIN_TEXT or not frame.function:
        return []
    wanted = line_hash(code)
    names = {str(e["f"]) for e in row.get("e", []) if str(e["f"]).rsplit(".", 1)[-1] == frame.function}
    out: list[int] = []
    for first, after, hashes in _versions(row, count):
        if hashes is None:
            continue
        spans = [s for n, s in _span_at(row, first).items() if n in names]
        if any(wanted in hashes[start - 1 : end] for start, end in spans):
            out.extend(range(first, after))
    return out


def _hashes_at(row: dict[str, Any], release: int, count: int) -> list[int]:
    """The line hashes of the file as ``release`` has it (for the largest libraries, inside the changed functions
    only; 0 elsewhere)."""
    for first, after, hashes in _versions(row, count):
        if first <= release < after:
            return list(hashes or [])
    return []


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


_BLANK = line_hash("")
_MIN_TEXT = 8
"""Removed lines shorter than this (``else:``, ``)``) are not looked for by their 16-bit hash: too many collide."""


def _changed_rows(event: dict[str, Any], span: list[int] | None, hashes: list[int]) -> list[int]:
    """Line numbers, in the installed file, of the lines an event removed or inserted before.

    The removed lines are found by their text inside the function; an insertion by its offset among the
    function's non-blank lines (the builder counts offsets over non-blank lines only).
    """
    if not span or not hashes:
        return []
    lines = range(span[0], min(span[1], len(hashes)) + 1)
    wanted = {line_hash(x) for x in event["old"] if len(x.strip()) >= _MIN_TEXT}
    rows = [n for n in lines if hashes[n - 1] in wanted]
    body = [n for n in lines if hashes[n - 1] != _BLANK]
    for offset in event.get("at", []):
        if 0 <= offset < len(body):
            rows.append(body[offset])
        elif body and offset == len(body):
            rows.append(body[-1])
    return rows


def _closeness(event: dict[str, Any], frame: Frame, span: list[int] | None, hashes: list[int]) -> str:
    """``line`` (the failing line was removed or rewritten), ``near`` (the change is within a few lines of it) or
    ``function`` (elsewhere in the function)."""
    code = frame.code.strip()
    if code and code in event["old"]:
        return "line"
    if any(abs(n - frame.line) <= _NEAR for n in _changed_rows(event, span, hashes)):
        return "near"
    return "function"


_CONFIDENCE = {("line", True): "high", ("near", True): "medium", ("line", False): "medium"}
_NEIGHBOUR = 60
"""A later dtype change in another function of the same file counts as a lead when that function starts or ends
within this many lines of the failing line (a helper the failing function calls, a method of the same class)."""


@dataclass(frozen=True)
class _Installed:
    """What a library's frames say about the installed release."""

    at: int | None
    """Index of the newest indexed release not newer than the installed one (-1: older than all)."""
    version: str
    source: str
    """``versions`` or ``lines``."""
    matching: tuple[int, ...]
    """Releases whose files have the frames' line texts at their line numbers."""


def _installed(
    lib: _Library, rows: list[tuple[Frame, dict[str, Any]]], given: PackageVersion | None
) -> _Installed | None:
    """The installed release of a library: the input's version, else the releases every frame's line matches.

    Frames in files without a dtype change carry no line hashes (nor, for the largest libraries, frames outside the
    changed functions), so the frames that do are combined: the releases all of them match, or the innermost one's
    when they disagree.
    """
    releases = list(lib.releases)
    source = "lines"
    sets = [m for m in (_matching_releases(row, frame, len(releases)) for frame, row in rows) if m]
    if not sets and given is None:
        source = "text"  # no release has these lines at these numbers: look for the failing lines' text alone
        sets = [m for m in (_text_releases(row, frame, len(releases)) for frame, row in rows) if m]
    matching: list[int] = []
    if sets:
        common = set(sets[0]).intersection(*sets[1:])
        matching = sorted(common) if common else sets[0]
    if given is not None:
        return _Installed(_release_index(releases, given.version), given.version, "versions", tuple(matching))
    if matching:
        return _Installed(max(matching), releases[max(matching)], source, tuple(matching))
    return None


def _beyond(state: _Installed, lib: _Library) -> bool:
    """An installed package whose lines match no release at their numbers, while their text is the newest indexed
    release's: it may be a release newer than the index, which has every change the text range holds."""
    return state.source == "text" and bool(state.matching) and max(state.matching) == len(lib.releases) - 1


def _not_before(state: _Installed, release: int | None) -> _Installed | None:
    """``state`` with its matching releases limited to ``release`` and later; None when none is left."""
    keep = tuple(m for m in state.matching if release is None or m >= release)
    return replace(state, at=max(keep), matching=keep) if keep else None


def _unreleased(version: str) -> bool:
    """A development or pre-release build (``0.11.2.dev0``, NVIDIA's ``2.3.0a0+40ec155``, a nightly): its code lies
    between releases, so the stated version alone does not say which release's code it is. ``2.3.1+cu121`` is a
    release."""
    try:
        parsed = Version(version)
    except InvalidVersion:
        return False
    return parsed.is_devrelease or parsed.is_prerelease


def _change(
    event: dict[str, Any], releases: list[str], close: str, confidence: str, moved_to: str = "", sure: bool = True
) -> Change:
    return Change(
        releases[event["r"]],
        str(event["f"]),
        tuple(event["old"]),
        tuple(event["new"]),
        int(event.get("pr", 0)),
        str(event.get("s", "")),
        close,
        confidence,
        moved_to,
        sure,
    )


def _moved(
    index: _Index,
    frame: Frame,
    lib: _Library,
    row: dict[str, Any] | None,
    path: str,
    installed: _Installed,
    inner: bool,
) -> FrameHistory | None:
    """The later changes of the frame's function after its file moved.

    diffusers 0.25 moved ``models/unet_2d_condition.py`` to ``models/unets/``: a fix made after the move is in a file
    of another path. Looked for only under strict conditions, so that a same-named function elsewhere is never
    taken for the frame's: exactly one other indexed file has the frame's file name, it did not exist yet in the
    installed release, the frame's own file is gone from the newest release (when the index knows), and a function
    of the frame's name in it changed later.
    """
    at = installed.at
    if at is None or not frame.function:
        return None
    releases = list(lib.releases)
    if row is not None and "l" in row and row["l"][-1][1] is not None:
        return None  # the frame's file is still there: nothing moved
    name = path.rsplit("/", 1)[-1]
    others = [p for p in index.paths(lib.name) if p != path and p.rsplit("/", 1)[-1] == name]
    if len(others) != 1:
        return None
    other_row = index.file(lib.name, others[0])
    if other_row is None or _hashes_at(other_row, max(at, 0), len(releases)):
        return None  # it existed beside the frame's file: another function of the same name, not this one
    events = [e for e in other_row.get("e", []) if str(e["f"]).rsplit(".", 1)[-1] == frame.function and e["r"] > at]
    if not events:
        return None
    code = frame.code.strip()
    changes = []
    for event in events:
        close = "line" if code and code in event["old"] else "function"
        changes.append(_change(event, releases, close, _CONFIDENCE.get((close, inner), "low"), others[0]))
    return _answer(lib.name, path, frame, installed, releases, changes)


def _neighbours(row: dict[str, Any], frame: Frame, at: int, releases: list[str], after: int) -> list[Change]:
    """Later dtype changes of other functions in the frame's file that lie next to the failing line.

    Used only when the frame's own function has no later change (it never changed, or its changes are all
    installed): the fix of a dtype bug often lands in the helper that built the tensor (a buffer cast in
    ``__init__``, a ``_prepare`` method) rather than where it failed. Nearest first, one change per function,
    always low confidence.
    """
    spans = _span_at(row, max(at, 0))
    nearest: dict[str, tuple[int, dict[str, Any]]] = {}
    for event in row["e"]:
        span = spans.get(event["f"])
        if event["r"] <= at or not span or span[0] <= frame.line <= span[1]:
            continue
        distance = min(abs(frame.line - span[0]), abs(frame.line - span[1]))
        if distance <= _NEIGHBOUR and (event["f"] not in nearest or distance < nearest[event["f"]][0]):
            nearest[event["f"]] = (distance, event)
    ordered = sorted(nearest.values(), key=lambda pair: pair[0])
    return [_change(event, releases, "file", "low", sure=event["r"] > after) for _, event in ordered[:2]]


def _renumbered(row: dict[str, Any], frame: Frame, at: int, count: int) -> Frame:
    """The frame at the line its text has in the release ``at`` (inside a function of its name), for a traceback
    printed from a copy with its own numbering; unchanged when the text is not found."""
    wanted = line_hash(frame.code.strip())
    hashes = _hashes_at(row, max(at, 0), count)
    for name, (start, end) in _span_at(row, max(at, 0)).items():
        if name.rsplit(".", 1)[-1] == frame.function:
            for number in range(start, min(end, len(hashes)) + 1):
                if hashes[number - 1] == wanted:
                    return replace(frame, line=number)
    return frame


def _followed(
    row: dict[str, Any], code: str, function: str, changes: list[Change], releases: list[str], inner: bool, after: int
) -> list[Change]:
    """The changes, where a release that "changed the failing line" only moved it into a helper, corrected.

    A refactor replaces the failing line with a call (peft 0.4.0: ``merge_and_unload`` became
    ``return self._unload_and_optionally_merge()``) while the same line lives on in the helper until a later
    release changes it there. Such a change did not change the line: it becomes a change elsewhere in the
    function, and the helper's later change of that very line is added as the change to the line.
    """
    if len(code) < _MIN_TEXT:
        return changes
    wanted = line_hash(code)
    out: list[Change] = []
    added: list[Change] = []
    for change in changes:
        if change.closeness != "line" or change.release not in releases:
            out.append(change)
            continue
        moved = releases.index(change.release)
        hashes = _hashes_at(row, moved, len(releases))
        rows = [n for n, h in enumerate(hashes, 1) if h == wanted]
        if not rows or len(rows) < _hashes_at(row, moved - 1, len(releases)).count(wanted):
            out.append(change)  # the line is gone (from here at least: the same text elsewhere is another line)
            continue
        out.append(replace(change, closeness="function", confidence="low"))
        spans = _span_at(row, moved)
        holders = {n for n, (a, b) in spans.items() if n != function and any(a <= r <= b for r in rows)}
        later = [e for e in row["e"] if e["f"] in holders and e["r"] > moved and code in e["old"]]
        if later:
            first = min(later, key=lambda e: int(e["r"]))
            sure = first["r"] > after
            added.append(_change(first, releases, "line", _CONFIDENCE.get(("line", inner and sure), "low"), sure=sure))
    return out + added


def _frame_history(
    frame: Frame, lib: _Library, path: str, row: dict[str, Any], installed: _Installed, inner: bool
) -> FrameHistory | None:
    if "e" not in row or installed.at is None:
        return None
    releases = list(lib.releases)
    at = installed.at
    # Lines that match several releases leave the user anywhere in that range: a change inside the range (the
    # failing line itself stayed the same) may be one they lack; it is named, with low confidence, and the words
    # state the range.
    since = min(installed.matching) if installed.source in ("lines", "text") else at
    after = at + 1 if installed.source == "versions" and _own_minor_next(releases, at, installed.version) else at
    probe = frame
    if installed.source == "text" or (installed.source == "versions" and not _line_matches(row, frame, at, releases)):
        # the printed numbers are not the release's own (a checkout, or a stated version whose file is numbered
        # otherwise, as an indexed patch next to the installed one): the failing line is looked for by its text
        probe = _renumbered(row, frame, at, len(releases))
    function = _function_at(row, probe, at)
    changes: list[Change] = []
    if function:
        span = _span_at(row, max(at, 0)).get(function)
        hashes = _hashes_at(row, max(at, 0), len(releases))
        for event in row["e"]:
            if event["f"] == function and event["r"] > since:
                close = _closeness(event, probe, span, hashes)
                sure = event["r"] > after
                confidence = _CONFIDENCE.get((close, inner and sure), "low")
                changes.append(_change(event, releases, close, confidence, sure=sure))
        changes = _followed(row, probe.code.strip(), function, changes, releases, inner and at >= 0, after)
    if not changes and (function or not any(str(e["f"]).rsplit(".", 1)[-1] == frame.function for e in row["e"])):
        # The failing function has no later dtype change (or never had one): the fix may be in a helper beside it.
        changes = _neighbours(row, frame, since, releases, after)
    if not changes:
        return None
    return _answer(lib.name, path, frame, installed, releases, changes)


def _line_matches(row: dict[str, Any], frame: Frame, at: int, releases: list[str]) -> bool:
    """Whether release ``at`` has the frame's line text at its line number (True when it cannot be told)."""
    hashes = _hashes_at(row, max(at, 0), len(releases))
    if not frame.code or not hashes:
        return True  # no text, or no lines kept: nothing says the numbering differs
    if not 0 < frame.line <= len(hashes):
        return False
    return not hashes[frame.line - 1] or hashes[frame.line - 1] == line_hash(frame.code)  # 0: a masked line


def _own_minor_next(releases: list[str], at: int, version: str) -> bool:
    """Whether the stated version is not itself indexed and the next indexed release is a later patch of its minor.

    torch and vLLM are indexed at the last patch of each minor release: a change first seen in 2.1.2 may have been
    made in 2.1.0 already, so for someone on 2.1.0 it is not surely later.
    """
    if at + 1 >= len(releases):
        return False
    try:
        stated, following = Version(version.split("+", 1)[0]), Version(releases[at + 1])
    except InvalidVersion:
        return False
    return stated < following and stated.release[:2] == following.release[:2]


def _answer(
    library: str, path: str, frame: Frame, installed: _Installed, releases: list[str], changes: list[Change]
) -> FrameHistory:
    """One frame's answer: where it is, which releases its lines match, and the later changes found."""
    return FrameHistory(
        library,
        path,
        frame.line,
        frame.function,
        frame.code,
        installed.version,
        installed.source,
        tuple(releases[i] for i in installed.matching),
        tuple(changes),
    )


_RANK = {"line": 0, "near": 1, "function": 2, "file": 3}


def best_change(frame: FrameHistory) -> Change:
    """The change closest to the failing line; among equals one surely after the installed release, the earliest
    (the first release that changed it). Among changes inside the range the lines match, the latest: the user may
    run any release of the range, and the later a change, the likelier they lack it."""
    rank = min((_RANK[c.closeness], not c.sure) for c in frame.changes)
    equal = [c for c in frame.changes if (_RANK[c.closeness], not c.sure) == rank]
    if len(equal) == 1:
        return equal[0]
    pick = max if rank[1] else min
    return pick(equal, key=lambda c: _version(c.release))


def _version(release: str) -> Version:
    try:
        return Version(release)
    except InvalidVersion:
        return Version("0")


def shown(history: tuple[FrameHistory, ...], count: int = 2) -> tuple[FrameHistory, ...]:
    """The frames a first screen names: those whose change is closest to the failing line, innermost among equals.

    A change to the very line that failed in an outer frame says more than a change elsewhere in the file of the
    innermost one.
    """
    order = sorted(range(len(history)), key=lambda i: (_RANK[best_change(history[i]).closeness], i))
    return tuple(history[i] for i in order[:count])


def _with_source(frames: tuple[Frame, ...], text: str) -> tuple[Frame, ...]:
    """The frames, each with the source line printed under it where the traceback reader found none.

    A paste that starts its frame lines at column 0 indents their source lines by two spaces, not four
    (``File "...", line 504, in update_step`` then ``  F.optimizer_update_8bit_blockwise(``); the reader takes only
    a four-space line for source. A line indented deeper than its frame line (after the same prefix) is one.
    """
    out: list[Frame] = []
    for frame in frames:
        at = text.find(f'File "{frame.file}", line {frame.line}') if text and not frame.code else -1
        end = text.find("\n", at) if at >= 0 else -1
        if end < 0:
            out.append(frame)
            continue
        start = text.rfind("\n", 0, at) + 1
        tag, lead = text[start:at].rstrip(), at - start - len(text[start:at].rstrip())
        after = text.find("\n", end + 1)
        below = text[end + 1 : after if after >= 0 else len(text)]
        rest = below[len(tag) :] if below.startswith(tag) else ""
        depth = len(rest) - len(rest.lstrip())
        code = rest.strip()
        if depth > lead and code and not FRAME.match(rest):
            frame = replace(frame, code=code)
        out.append(frame)
    return tuple(out)


def fix_history(
    frames: Iterable[Frame], versions: Mapping[str, PackageVersion], folder: str = "", text: str = ""
) -> tuple[FrameHistory, ...]:
    """For each library frame (innermost first), the later releases that changed its function's dtype handling.

    ``frames`` are in printed order (outermost first), as a :class:`~dtypefix.matcher.traceback.Stack` holds
    them. A frame whose own function has no later change gets the later changes of the functions next to it in its
    file (closeness ``file``, low confidence). Nothing when nothing changed. A frame in a source checkout rather than
    site-packages is answered only when its library's line texts match a release. ``text`` (the input the frames
    were read from) gives the source line of a frame the reader left without one.
    """
    index = open_index(folder)
    if index is None:
        return ()
    located: list[tuple[Frame, str, str, bool, dict[str, Any] | None]] = []
    for frame in reversed(_with_source(tuple(frames), text)):
        place = _locate(frame, index.packages)
        if place is not None:
            located.append((frame, *place, index.file(place[0], place[1])))
    installed: dict[str, _Installed | None] = {}
    from_lines: dict[str, _Installed | None] = {}
    for library in dict.fromkeys(item[1] for item in located):
        rows = [(frame, row) for frame, lib, _, _, row in located if lib == library and row is not None]
        given = versions.get(library)
        checkout = not all(site for _, lib, _, site, _ in located if lib == library)
        state = _installed(index.libraries[library], rows, given)
        if state is not None and not checkout and _beyond(state, index.libraries[library]):
            state = None
        installed[library] = None if state is None or (checkout and not state.matching) else state
        if given is not None and _unreleased(given.version):
            # A development build (0.11.2.dev0) lies between releases: when its version finds nothing, the
            # release its frames' lines match may.
            state = _installed(index.libraries[library], rows, None)
            if state is not None and state.source == "text":
                # Text found at other line numbers is weak evidence: it cannot outrank the stated version, whose
                # code is at least that of the release before it.
                state = _not_before(state, _release_index(list(index.libraries[library].releases), given.version))
            from_lines[library] = None if state is None or (checkout and not state.matching) else state
    out = _answers(index, located, installed)
    retry = {lib: state for lib, state in from_lines.items() if not any(f.library == lib for f in out)}
    return tuple(_answers(index, located, {**installed, **retry}) if retry else out)


def _answers(
    index: _Index,
    located: list[tuple[Frame, str, str, bool, dict[str, Any] | None]],
    installed: dict[str, _Installed | None],
) -> list[FrameHistory]:
    """The frames' answers, innermost first, one per changed function."""
    out: list[FrameHistory] = []
    seen: set[tuple[str, str, str]] = set()
    for depth, (frame, library, path, _, row) in enumerate(located):
        known = installed[library]
        lib = index.libraries[library]
        inner = not out and depth < 3
        found = _frame_history(frame, lib, path, row, known, inner) if known and row is not None else None
        if found is None and known is not None:
            found = _moved(index, frame, lib, row, path, known, inner)
        key = (library, path, found.changes[0].function) if found else ("", "", "")
        if found is not None and key not in seen:
            seen.add(key)
            out.append(found)
    return out
