"""Build the fix-history index: which later release changed the dtype/device handling of a library function.

Run ``python -m dtypefix.kbtools.history build LIB ...`` (or ``refresh`` for every library). For each release of a
library the builder reads the released Python files, either from a wheel / sdist that ``pip download`` fetched
into the cache (what users install) or from the release tag of a git mirror (the same files, plus the commits).
Per file and function (``ast``) it records the releases in which the function's body changed and, when the changed
lines touch dtype or device handling, those lines; with a git mirror it also names the commit subject and PR
number of the change. Per release it keeps a 16-bit hash of every line of the files that had such a change, so a
traceback's ``File ..., line N`` plus its line text says which releases the user can be running.

The output is ``matcher/data/history/history.sqlite``: per library its releases, their dates, the build date and
what could not be covered; per file one zlib-compressed JSON row. :mod:`dtypefix.matcher.history` reads it.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import difflib
import hashlib
import json
import re
import sqlite3
import subprocess
import sys
import tarfile
import zipfile
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from dtypefix.matcher.history import DB_NAME, line_hash

__all__ = [
    "DTYPE_LINE",
    "LIBRARIES",
    "Library",
    "ReleaseFiles",
    "build_from_archives",
    "build_from_git",
    "build_library",
    "compact_row",
    "main",
    "write_index",
]

DTYPE_LINE = re.compile(
    r"\.to\(|dtype|device|\.float\(\)|\.half\(\)|\.bfloat16\(\)|\.double\(\)|autocast|upcast|downcast"
    r"|float16|bfloat16|float32|float64|\bfp16|\bbf16|\bfp32|\.type\(|\.cuda\(|\.cpu\("
    r"|\bu?int8\b|float8|\bfp8\b|\bnf4\b|\bfp4\b|[48]_?bit\b|\b[48]-bit\b"
)
"""A changed line that touches dtype or device handling (the only changes the index keeps the text of): casts and
moves, dtype names (``fp16_groups`` too), and the quantized widths (``int8``, ``nf4``, ``load_in_8bit``)."""
_CONVERSION = re.compile(
    r"\.to\(|\.cuda\(|\.cpu\(|\.float\(\)|\.half\(\)|\.bfloat16\(\)|\.double\(\)|\.type\(|autocast"
)
"""A statement that casts or moves a tensor: every line of it is dtype handling, even one naming no dtype."""

_PR = re.compile(r"\(#(\d+)\)\s*$|#(\d+)")
_MAX_LINES = 6
"""Changed lines kept per side of one change; the first ones are the ones a reader needs."""


@dataclass(frozen=True)
class Library:
    """One library the index covers and where its released code comes from."""

    dist: str
    """Distribution name on the package index (``flash-attn``) and in a freeze."""
    package: str
    """Top-level import folder, as it appears in site-packages paths (``flash_attn``)."""
    since: str
    """Oldest release indexed (about three years back)."""
    repo: str = ""
    """Git mirror (``owner+name``) whose tags are the releases; empty: wheels from the cache."""
    src: str = ""
    """Folder above the package inside the repository (``src`` for a src layout)."""
    tag: str = "v{}"
    """Tag name of a release."""
    only: tuple[str, ...] = ()
    """Sub-folders of the package indexed (torch: its Python training code); empty: all."""
    versions: tuple[str, ...] = ()
    """Releases to index when not all of them can be (large wheels); empty: every release since ``since``."""
    note: str = ""
    """What is left out and why, stored with the index (``dtypefix --version`` readers see it in the data)."""
    every_line: bool = True
    """Keep the hash of every line of a file that had a dtype change, so that a frame in a function that never
    changed (the usual case: the bug sits in a helper that did) still says which releases it can be running.
    False for transformers and vLLM (the largest indexes) and unsloth (whose monthly releases are picked from a list
    made by hand, so a refresh does not rebuild it): only the changed functions' lines are kept there."""


_VLLM = (
    "0.6.6.post1",
    "0.7.3",
    "0.8.5.post1",
    "0.9.2",
    "0.10.2",
    "0.11.2",
    "0.12.0",
    "0.13.0",
    "0.14.1",
    "0.15.1",
    "0.16.0",
    "0.17.1",
    "0.18.1",
    "0.19.1",
    "0.20.2",
    "0.21.0",
    "0.22.1",
    "0.23.0",
    "0.24.0",
    "0.25.1",
    "0.26.0",
    "0.27.1",
    "0.28.0",
    "0.29.0",
    "0.30.0",
    "0.31.0",
    "0.32.0",
    "0.33.0",
)
"""The last patch of each minor release (Linux x86-64 wheels; from 0.12 on they are tagged manylinux_2_31)."""
_TORCH = (
    "2.0.1",
    "2.1.2",
    "2.2.2",
    "2.3.1",
    "2.4.1",
    "2.5.1",
    "2.6.0",
    "2.7.1",
    "2.8.0",
    "2.9.1",
    "2.10.0",
    "2.11.0",
    "2.12.1",
    "2.13.0",
    "2.14.1",
    "2.15.0",
)

LIBRARIES: tuple[Library, ...] = (
    Library("transformers", "transformers", "4.36.0", every_line=False),
    Library("diffusers", "diffusers", "0.24.0", "huggingface+diffusers", "src"),
    Library("accelerate", "accelerate", "0.25.0", "huggingface+accelerate", "src"),
    Library("peft", "peft", "0.3.0", "huggingface+peft", "src"),
    Library("trl", "trl", "0.7.5", "huggingface+trl"),
    Library("deepspeed", "deepspeed", "0.10.0", "deepspeedai+DeepSpeed"),
    Library("bitsandbytes", "bitsandbytes", "0.41.3", "bitsandbytes-foundation+bitsandbytes", tag="{}"),
    Library("torchao", "torchao", "0.1.0", "pytorch+ao"),
    Library("liger-kernel", "liger_kernel", "0.1.0", "linkedin+Liger-Kernel", "src"),
    Library("flash-attn", "flash_attn", "2.4.0", "Dao-AILab+flash-attention"),
    Library("xformers", "xformers", "0.0.23", "facebookresearch+xformers"),
    # Unsloth publishes several releases a week; its git tags are month names, not versions.
    Library(
        "unsloth",
        "unsloth",
        "2024.1",
        note="last release of each month only (no PR numbers: tags are not versions)",
        every_line=False,
    ),
    Library(
        "vllm",
        "vllm",
        "0.6.0",
        versions=_VLLM,
        every_line=False,
        note="last patch of each minor release only (vLLM wheels are 200-400 MB each)",
    ),
    Library(
        "torch",
        "torch",
        "2.0.0",
        only=("nn", "amp", "cuda/amp", "distributed", "optim", "_tensor.py", "autocast_mode.py"),
        versions=_TORCH,
        note="last patch of each minor release; Python files of nn, amp, distributed, optim (macOS arm64 wheels)",
    ),
)


@dataclass(frozen=True)
class ReleaseFiles:
    """The Python files of one release: path under the package -> a key of its content, and how to read it."""

    version: str
    date: str
    files: dict[str, str]
    """``diffusers/models/attention.py`` -> content key (git blob id or a hash of the text)."""
    texts: dict[str, str] = field(default_factory=dict)
    """Content key -> text, for sources that read everything at once (archives)."""


# ----------------------------------------------------------------------------------------------- release sources


def _wanted(lib: Library, path: str) -> bool:
    if not path.endswith(".py") or not path.startswith(lib.package + "/"):
        return False
    if not lib.only:
        return True
    inner = path[len(lib.package) + 1 :]
    return any(inner == o or inner.startswith(o.rstrip("/") + "/") for o in lib.only)


def _archive_release(lib: Library, archive: Path, version: str) -> ReleaseFiles:
    """Read the .py files of a wheel or sdist; nothing is unpacked to disk."""
    files: dict[str, str] = {}
    texts: dict[str, str] = {}
    date = ""

    def add(path: str, data: bytes) -> None:
        text = data.decode("utf-8", "replace")
        key = hashlib.sha1(data).hexdigest()
        files[path] = key
        texts[key] = text

    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if _wanted(lib, info.filename):
                    add(info.filename, zf.read(info))
                if info.filename.endswith("/METADATA") and not date:
                    date = dt.date(*info.date_time[:3]).isoformat()
    else:
        with tarfile.open(archive) as tf:
            for member in tf:
                parts = member.name.split("/", 1)
                inner = parts[1] if len(parts) == 2 else ""
                if inner.startswith("src/"):
                    inner = inner[4:]
                if member.isfile() and _wanted(lib, inner):
                    handle = tf.extractfile(member)
                    if handle is not None:
                        add(inner, handle.read())
                        date = date or dt.date.fromtimestamp(member.mtime).isoformat()
    return ReleaseFiles(version, date, files, texts)


def _archives(lib: Library, cache: Path) -> dict[str, Path]:
    """Wheels / sdists of ``lib`` under ``cache/<dist>/``, by version (newest file wins for a version)."""
    found: dict[str, Path] = {}
    folder = cache / lib.dist
    if not folder.is_dir():
        return found
    prefix = lib.dist.replace("-", "_")
    for path in sorted(folder.iterdir()):
        name = path.name
        for stem in (prefix + "-", lib.dist + "-"):
            if name.lower().startswith(stem.lower()):
                rest = name[len(stem) :]
                version = re.split(r"-|\.tar\.gz$|\.zip$", rest)[0].split("+", 1)[0]
                found.setdefault(version, path)
    return found


class _Git:
    """A git mirror read through one long-lived ``cat-file --batch`` process."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._batch = subprocess.Popen(
            ["git", "--git-dir", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def run(self, *args: str) -> str:
        out = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), *args],
            capture_output=True,
            check=False,
            text=True,
            errors="replace",
        )
        return out.stdout

    def blob(self, sha: str) -> str:
        assert self._batch.stdin is not None and self._batch.stdout is not None
        self._batch.stdin.write(sha.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        size = int(header[2])
        data = self._batch.stdout.read(size + 1)[:-1]
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        if self._batch.stdin is not None:
            self._batch.stdin.close()
        self._batch.wait()
        if self._batch.stdout is not None:
            self._batch.stdout.close()


def _git_release(lib: Library, git: _Git, tag: str, version: str) -> ReleaseFiles:
    prefix = f"{lib.src}/" if lib.src else ""
    files: dict[str, str] = {}
    for row in git.run("ls-tree", "-r", tag, "--", prefix + lib.package).splitlines():
        meta, _, path = row.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            inner = path[len(prefix) :]
            if _wanted(lib, inner):
                files[inner] = parts[2]
    date = git.run("log", "-1", "--format=%cs", tag).strip()
    return ReleaseFiles(version, date, files)


def _release_version(text: str) -> Version | None:
    try:
        version = Version(text)
    except InvalidVersion:
        return None
    return None if version.is_prerelease or version.is_devrelease else version


def _git_tags(lib: Library, git: _Git) -> list[tuple[str, str]]:
    """(version, tag) of every release tag since ``lib.since``, oldest first."""
    pattern = re.compile("^" + re.escape(lib.tag).replace(r"\{\}", "(.+)") + "$")
    tags: dict[Version, tuple[str, str]] = {}
    for tag in git.run("tag").split():
        m = pattern.match(tag)
        version = _release_version(m.group(1)) if m else None
        # A tag whose text is not the version's own spelling ("v0.03") is not a release.
        if version is not None and str(version) == m.group(1) and version >= Version(lib.since):  # type: ignore[union-attr]
            tags.setdefault(version, (str(version), tag))
    return [tags[v] for v in sorted(tags)]


# ------------------------------------------------------------------------------------------------- the analysis


@dataclass(frozen=True)
class _Function:
    start: int
    end: int
    body: tuple[str, ...]
    """Stripped lines from ``def`` to the end (what "the body changed" compares)."""
    in_dtype_statement: frozenset[int] = frozenset()
    """Indexes into ``body`` of the lines of a statement that spans several lines and casts or moves a tensor
    (``Params4bit(super().to(device=device, dtype=dtype), ...,`` then one keyword argument a line): a change to one
    of its lines changes that cast even when the changed line names no dtype itself. A long call that only passes a
    ``dtype`` along among other arguments is not one."""


def _statement_rows(function: ast.AST, lines: list[str]) -> set[int]:
    """File line numbers of the multi-line statements (a compound statement: its header) that cast or move."""
    rows: set[int] = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.stmt) or node is function or isinstance(node, ast.FunctionDef | ast.ClassDef):
            continue
        inner = getattr(node, "body", None)
        first = node.lineno
        last = inner[0].lineno - 1 if isinstance(inner, list) and inner else (node.end_lineno or first)
        if last > first and _CONVERSION.search("\n".join(lines[first - 1 : last])):
            rows.update(range(first, last + 1))
    return rows


def _functions(text: str) -> dict[str, _Function]:
    """Qualified name -> span and stripped lines of every function (nested ones under their parent's name)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    lines = text.splitlines()
    out: dict[str, _Function] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    start = child.decorator_list[0].lineno if child.decorator_list else child.lineno
                    end = child.end_lineno or child.lineno
                    numbered = [(n, x.strip()) for n, x in enumerate(lines[start - 1 : end], start) if x.strip()]
                    body = tuple(x for _, x in numbered)
                    marked: frozenset[int] = frozenset()
                    if any(DTYPE_LINE.search(x) for x in body):
                        rows = _statement_rows(child, lines)
                        marked = frozenset(i for i, (n, _) in enumerate(numbered) if n in rows)
                    # Python binds the last definition of a name: the implementation after its ``@overload`` stubs.
                    out[name] = _Function(start, end, body, marked)
                walk(child, name + ".")

    walk(tree, "")
    return out


@dataclass
class _Event:
    function: str
    release: int
    old: list[str]
    new: list[str]
    at: list[int]
    """Offsets (from the function's first line, in the release before) of the removed dtype lines."""
    pr: int = 0
    subject: str = ""

    def as_json(self) -> dict[str, object]:
        row: dict[str, object] = {
            "f": self.function,
            "r": self.release,
            "old": self.old,
            "new": self.new,
            "at": self.at,
        }
        if self.pr:
            row["pr"] = self.pr
        if self.subject:
            row["s"] = self.subject
        return row


def _dtype_change(old: _Function, new: _Function) -> tuple[list[str], list[str], list[int]] | None:
    """Removed and added lines of a body change that touch dtype/device handling; None when none do."""
    removed: list[str] = []
    added: list[str] = []
    offsets: list[int] = []
    matcher = difflib.SequenceMatcher(a=old.body, b=new.body, autojunk=False)
    touched = False
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        before, after = old.body[i1:i2], new.body[j1:j2]
        inside = any(i in old.in_dtype_statement for i in range(i1, i2)) or any(
            j in new.in_dtype_statement for j in range(j1, j2)
        )
        if inside or any(DTYPE_LINE.search(x) for x in (*before, *after)):
            touched = True
            removed.extend(before)
            added.extend(after)
            offsets.extend(range(i1, i2) if i2 > i1 else [i1])
    if not touched:
        return None
    return removed[:_MAX_LINES], added[:_MAX_LINES], offsets[:_MAX_LINES]


def _deltas(versions: list[tuple[int, list[int] | None]]) -> list[list[object]]:
    """Line-hash arrays of one file across releases as edits: [release, [[i1, i2, [hashes]], ...]] (None: absent)."""
    out: list[list[object]] = []
    previous: list[int] = []
    for release, hashes in versions:
        if hashes is None:
            out.append([release, None])
            previous = []
            continue
        ops: list[list[object]] = []
        matcher = difflib.SequenceMatcher(a=previous, b=hashes)  # junk heuristic: masked runs of 0 stay cheap
        for op, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
            if op != "equal":
                ops.append([i1, i2, hashes[j1:j2]])
        out.append([release, ops])
        previous = hashes
    return out


def _masked(versions: list[tuple[int, list[int] | None]], spans: list[list[Any]]) -> list[tuple[int, list[int] | None]]:
    """Keep the line hashes inside the changed functions only (the rest become 0).

    Only a frame in a function with a later dtype change gets an answer, so only those lines are ever asked
    about; runs of 0 cost almost nothing once diffed and compressed.
    """
    out: list[tuple[int, list[int] | None]] = []
    for (release, hashes), (_, named) in zip(versions, spans, strict=True):
        if hashes is None:
            out.append((release, None))
            continue
        keep = [0] * len(hashes)
        for start, end in named.values():
            keep[start - 1 : end] = hashes[start - 1 : end]
        out.append((release, keep))
    return out


def compact_row(row: dict[str, Any]) -> dict[str, Any]:
    """An index row built before :func:`_masked` existed, with its line hashes masked the same way."""
    if "l" not in row or "sp" not in row:
        return row
    versions: list[tuple[int, list[int] | None]] = []
    current: list[int] = []
    for release, ops in row["l"]:
        if ops is None:
            versions.append((release, None))
            current = []
            continue
        for i1, i2, new in ops:
            current[i1:i2] = new
        versions.append((release, list(current)))
    return {**row, "l": _deltas(_masked(versions, row["sp"]))}


def build_library(lib: Library, releases: Iterable[ReleaseFiles], git: _Git | None = None) -> dict[str, Any]:
    """The index of one library from its releases, oldest first.

    ``read`` maps content keys to text for archive releases; with ``git`` blobs are read from the mirror and
    each change is traced to the commit (subject, PR) that made it.
    """
    texts: dict[str, str] = {}
    parsed: dict[str, dict[str, _Function]] = {}
    hashes: dict[str, array[int]] = {}
    spans: dict[str, dict[str, tuple[int, int]]] = {}

    def content(key: str) -> tuple[dict[str, _Function], array[int]]:
        if key not in parsed:
            text = texts.pop(key) if key in texts else (git.blob(key) if git else "")
            parsed[key] = _functions(text)
            hashes[key] = array("H", (line_hash(x) for x in text.splitlines()))
            spans[key] = {n: (f.start, f.end) for n, f in parsed[key].items()}
        return parsed[key], hashes[key]

    changes: dict[str, dict[str, list[int]]] = {}
    events: dict[str, list[_Event]] = {}
    history: dict[str, list[tuple[int, str | None]]] = {}
    previous: dict[str, str] = {}
    done: list[ReleaseFiles] = []
    for index, release in enumerate(releases):
        texts = dict(release.texts)
        done.append(ReleaseFiles(release.version, release.date, {}))
        for path in sorted(set(previous) | set(release.files)):
            key = release.files.get(path)
            if key == previous.get(path):
                continue
            history.setdefault(path, []).append((index, key))
            if key is None or path not in previous:
                continue
            old_functions, _ = content(previous[path])
            new_functions, _ = content(key)
            for name, new in new_functions.items():
                old = old_functions.get(name)
                if old is None or old.body == new.body:
                    continue
                changes.setdefault(path, {}).setdefault(name, []).append(index)
                diff = _dtype_change(old, new)
                if diff is not None:
                    events.setdefault(path, []).append(_Event(name, index, *diff))
        for path in release.files:
            content(release.files[path])
        previous = dict(release.files)
        # Contents no longer current are not compared again: keep only their line hashes and spans.
        current = set(previous.values())
        for key in [k for k in parsed if k not in current]:
            del parsed[key]
        texts = {}
    if git is not None:
        _name_commits(lib, done, events, git)
    files: dict[str, object] = {}
    for path, per_function in sorted(changes.items()):
        row: dict[str, object] = {"c": per_function}
        if path in events:
            row["e"] = [e.as_json() for e in events[path]]
            named = _spans(events[path], history[path], spans)
            row["sp"] = named
            lines = [(i, list(hashes[k]) if k else None) for i, k in history[path]]
            row["l"] = _deltas(lines if lib.every_line else _masked(lines, named))
        files[path] = row
    return {
        "library": lib.dist,
        "package": lib.package,
        "source": f"git tags of {lib.repo.replace('+', '/')}" if lib.repo else "wheels/sdists from PyPI",
        "releases": [r.version for r in done],
        "dates": [r.date for r in done],
        "files": files,
    }


def _spans(
    events: list[_Event], history: list[tuple[int, str | None]], spans: dict[str, dict[str, tuple[int, int]]]
) -> list[list[object]]:
    """Where each changed function starts and ends, per file version: [release, {name: [start, end]}]."""
    names = {e.function for e in events}
    out: list[list[object]] = []
    for index, key in history:
        known = spans.get(key, {}) if key else {}
        out.append([index, {n: list(known[n]) for n in sorted(names) if n in known}])
    return out


def _name_commits(lib: Library, releases: Sequence[ReleaseFiles], events: dict[str, list[_Event]], git: _Git) -> None:
    """Give each change the subject and PR of the commit between the two release tags that added its lines."""
    prefix = f"{lib.src}/" if lib.src else ""
    tags = {r.version: lib.tag.format(r.version) for r in releases}
    for path, rows in events.items():
        by_release: dict[int, list[_Event]] = {}
        for event in rows:
            by_release.setdefault(event.release, []).append(event)
        for index, group in by_release.items():
            span = f"{tags[releases[index - 1].version]}..{tags[releases[index].version]}"
            log = git.run("log", "--format=%x00%s", "-p", "--no-merges", span, "--", prefix + path)
            commits = [c.split("\n", 1) for c in log.split("\x00")[1:]]
            for event in group:
                wanted = [x for x in event.new if DTYPE_LINE.search(x)] or event.new or event.old
                for subject, *diff in commits:
                    body = diff[0] if diff else ""
                    plus = {x[1:].strip() for x in body.splitlines() if x.startswith("+")}
                    minus = {x[1:].strip() for x in body.splitlines() if x.startswith("-")}
                    if any(w in plus for w in wanted) or (not event.new and any(o in minus for o in event.old)):
                        event.subject = subject.strip()
                        m = _PR.search(event.subject)
                        event.pr = int(next(g for g in m.groups() if g)) if m else 0
                        break


# ------------------------------------------------------------------------------------------------ writing, CLI


def default_output() -> Path:
    """The package's data folder for the index."""
    return Path(__file__).resolve().parent.parent / "matcher" / "data" / "history"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS library (
    name TEXT PRIMARY KEY, package TEXT, source TEXT, releases TEXT, dates TEXT, built TEXT, not_covered TEXT
);
CREATE TABLE IF NOT EXISTS file (library TEXT, path TEXT, data BLOB, PRIMARY KEY (library, path));
"""


def write_index(out: Path, index: dict[str, Any], missing: Sequence[str]) -> int:
    """Store one library's index in ``out/history.sqlite`` (replacing its previous rows); returns its bytes.

    One row per file, its JSON zlib-compressed: a lookup reads only the rows of the traceback's files.
    """
    out.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(out / DB_NAME)
    try:
        db.executescript(_SCHEMA)
        name = index["library"]
        db.execute("DELETE FROM file WHERE library = ?", (name,))
        db.execute("DELETE FROM library WHERE name = ?", (name,))
        db.execute(
            "INSERT INTO library VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                index["package"],
                index["source"],
                json.dumps(index["releases"]),
                json.dumps(index["dates"]),
                dt.date.today().isoformat(),
                json.dumps(list(missing)),
            ),
        )
        size = 0
        for path, row in index["files"].items():
            blob = zlib.compress(json.dumps(row, separators=(",", ":"), sort_keys=True).encode(), 9)
            size += len(blob)
            db.execute("INSERT INTO file VALUES (?, ?, ?)", (name, path, blob))
        db.commit()
        db.execute("VACUUM")
    finally:
        db.close()
    return size


def _pip_download(lib: Library, version: str, cache: Path) -> None:
    """Fetch one release's wheel (sdist when there is none) into the cache with pip."""
    target = cache / lib.dist
    base = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"{lib.dist}=={version}", "-d", str(target)]
    extra = ["--only-binary", ":all:", "--python-version", "3.11"]
    if lib.dist == "torch":
        extra += ["--platform", "macosx_11_0_arm64", "--platform", "macosx_14_0_arm64"]  # 2.12 on: macOS 14
    elif lib.dist == "vllm":
        extra += ["--platform", "manylinux_2_31_x86_64", "--platform", "manylinux_2_28_x86_64"]
        extra += ["--platform", "manylinux2014_x86_64"]
    subprocess.run([*base, *extra], check=False, capture_output=True)
    if version not in _archives(lib, cache):
        # DeepSpeed publishes sdists only: pip prepares their metadata, which works without torch for most.
        subprocess.run([*base, "--no-binary", ":all:"], check=False, capture_output=True)


def build_from_git(
    lib: Library,
    git_dir: Path,
    later: Mapping[str, Path] | None = None,
    missing: list[str] | None = None,
    fetch: Path | None = None,
) -> dict[str, Any]:
    """The index of ``lib`` from the release tags of a git repository, with commit subjects and PR numbers.

    ``later`` (wheels / sdists by version) adds the releases newer than the mirror's newest tag: a mirror is a
    snapshot, the package index goes on. Their changes have no PR number (no tag to trace them between).
    """
    git = _Git(git_dir)
    try:
        tagged = _git_tags(lib, git)
        releases = [_git_release(lib, git, tag, v) for v, tag in tagged]
        newest = Version(tagged[-1][0]) if tagged else Version("0")
        after = {v: p for v, p in (later or {}).items() if Version(v) > newest}
        return build_library(lib, chain(releases, _archive_releases(lib, after, missing, fetch)), git=git)
    finally:
        git.close()


def _archive_releases(
    lib: Library, archives: Mapping[str, Path], missing: list[str] | None, fetch: Path | None
) -> Iterator[ReleaseFiles]:
    """The releases of ``archives``, oldest first, read one at a time.

    With ``fetch`` (a cache folder) a release absent from ``archives`` is downloaded with pip first and its file
    deleted once read, so a refresh keeps only what it is reading on disk.
    """
    for version in sorted(archives, key=Version):
        path = archives[version]
        if not path.exists() and fetch is not None:
            _pip_download(lib, version, fetch)
            path = _archives(lib, fetch).get(version, path)
        if not path.exists():
            if missing is not None:
                missing.append(f"{version}: no wheel or sdist could be read")
            continue
        yield _archive_release(lib, path, version)
        if fetch is not None:
            path.unlink()


def build_from_archives(
    lib: Library, archives: Mapping[str, Path], missing: list[str] | None = None, fetch: Path | None = None
) -> dict[str, Any]:
    """The index of ``lib`` from wheels / sdists by version (see :func:`_archive_releases` for ``fetch``)."""
    return build_library(lib, _archive_releases(lib, archives, missing, fetch))


def _pip_versions(lib: Library) -> list[str]:
    """Releases the package index lists for ``lib`` (``pip index versions``), since ``lib.since``."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", lib.dist], capture_output=True, text=True, check=False
    ).stdout
    listed = re.search(r"Available versions:\s*(.+)", out)
    versions = [v.strip() for v in listed.group(1).split(",")] if listed else []
    return [v for v in versions if (p := _release_version(v)) is not None and p >= Version(lib.since)]


def _build_one(lib: Library, cache: Path, out: Path, download: bool, mirrors: Path) -> str:
    missing: list[str] = []
    found = _archives(lib, cache)
    wanted = list(lib.versions) or (_pip_versions(lib) if download else [])
    wanted = wanted or [v for v in found if (p := _release_version(v)) and p >= Version(lib.since)]
    archives = {v: found.get(v, cache / lib.dist / f"{lib.dist}-{v}.missing") for v in wanted}
    fetch = cache if download else None
    if lib.repo and (mirrors / lib.repo / "repo").is_dir():
        index = build_from_git(lib, mirrors / lib.repo / "repo", archives, missing, fetch)
    else:
        index = build_from_archives(lib, archives, missing, fetch)
    if lib.note:
        missing.insert(0, lib.note)
    size = write_index(out, index, missing)
    return f"{lib.dist}: {len(index['releases'])} releases, {size / 1e6:.2f} MB"


def main(argv: Sequence[str] | None = None) -> int:
    """``build LIB...`` indexes the named libraries; ``refresh`` all of them (downloading what is missing)."""
    parser = argparse.ArgumentParser(prog="python -m dtypefix.kbtools.history", description=main.__doc__)
    parser.add_argument("command", choices=["build", "refresh"])
    parser.add_argument("libraries", nargs="*", help="dist names (default: all)")
    parser.add_argument("--cache", type=Path, default=Path("/work/cache/history"), help="wheel/sdist cache")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"), help="folder of git mirrors")
    parser.add_argument("--out", type=Path, default=default_output(), help="index folder")
    args = parser.parse_args(argv)
    names = set(args.libraries)
    unknown = names - {lib.dist for lib in LIBRARIES}
    if unknown:
        print(f"unknown libraries: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    for lib in LIBRARIES:
        if not names or lib.dist in names:
            print(_build_one(lib, args.cache, args.out, args.command == "refresh", args.mirrors), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
