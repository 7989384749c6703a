"""What ``dtypefix scan`` is given, as jobs: one log file, or one folder of per-rank logs.

Paths may be files, folders (walked to any depth) and globs; with the Ray engine, object-store URIs too. A folder
is listed once and its file names decide what is one incident (:func:`dtypefix.matcher.logdir.find_logdirs`, the
same rule ``dtypefix explain FOLDER`` follows); every other file is a job of its own. The file system is behind a
small interface so that the same jobs can be found and read on a local disk or in a bucket.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from dtypefix.matcher.logdir import LogDir, find_logdirs, is_attempt_folder

__all__ = ["FileSystem", "Job", "LocalFileSystem", "find_jobs"]


class FileSystem(Protocol):
    """What scanning needs of a file system (local disk, or pyarrow's for object stores)."""

    def kind(self, path: str) -> str:
        """``file``, ``dir`` or ``missing``."""
        ...

    def walk(self, path: str) -> Iterator[str]:
        """Every file under the folder ``path``, relative to it, POSIX separators."""
        ...

    def stat(self, path: str) -> tuple[int, int]:
        """``(size, mtime in nanoseconds)``; raises ``OSError``."""
        ...

    def open(self, path: str) -> BinaryIO:
        """A binary stream; raises ``OSError``."""
        ...

    def join(self, base: str, name: str) -> str: ...


class LocalFileSystem:
    """The local disk. Hidden files and folders are skipped; symlinked folders are not followed (no cycles)."""

    def kind(self, path: str) -> str:
        found = Path(path)
        return "dir" if found.is_dir() else "file" if found.exists() else "missing"

    def walk(self, path: str) -> Iterator[str]:
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            rel = os.path.relpath(folder, path)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            for name in sorted(files):
                if not name.startswith("."):
                    yield prefix + name

    def stat(self, path: str) -> tuple[int, int]:
        found = Path(path).stat()
        return found.st_size, found.st_mtime_ns

    def open(self, path: str) -> BinaryIO:
        return Path(path).open("rb")

    def join(self, base: str, name: str) -> str:
        return str(Path(base, *name.split("/"))) if base else name


@dataclass(frozen=True)
class Job:
    """One incident to explain: a file, or the files of one multi-rank run."""

    path: str
    """What the rows show: the file, or the run's folder (with its name pattern for ``*rank<N>*`` files)."""
    kind: str
    """``file``, ``torchrun``, ``rank-files``, or ``missing`` (a path given that does not exist)."""
    base: str = ""
    """The folder :attr:`files` are relative to (empty for a file job, whose one file is :attr:`path`)."""
    files: tuple[str, ...] = ()
    logdir: LogDir | None = None

    def file_paths(self, fs: FileSystem) -> tuple[str, ...]:
        return tuple(fs.join(self.base, name) for name in self.files) if self.logdir else (self.path,)


_GLOB_CHARS = frozenset("*?[")


def find_jobs(targets: Iterable[str], fs: FileSystem, exclude: Iterable[str | Path] = ()) -> list[Job]:
    """The jobs under ``targets``, each once, sorted by path. A target that does not exist is a ``missing`` job
    (reported as a row, never fatal); a glob is expanded on the local disk. ``exclude`` are files never to read
    (the scan's own output and state, when they lie in a scanned folder)."""
    local = isinstance(fs, LocalFileSystem)
    skip = {str(Path(p).resolve()) if local else str(p) for p in exclude}
    jobs: dict[str, Job] = {}
    for target in targets:
        expanded = [target]
        if local and _GLOB_CHARS & set(target) and not Path(target).exists():
            # glob.glob: Path.glob refuses absolute patterns, which users give
            expanded = sorted(glob.glob(target, recursive=True)) or [target]  # noqa: PTH207
        for path in expanded:
            for job in _jobs_at(path, fs):
                if job.kind == "file" and skip and (str(Path(job.path).resolve()) if local else job.path) in skip:
                    continue
                jobs.setdefault(job.path, job)
    return sorted(jobs.values(), key=lambda job: job.path)


def _jobs_at(path: str, fs: FileSystem) -> Iterator[Job]:
    kind = fs.kind(path)
    if kind == "missing":
        yield Job(path, "missing")
        return
    if kind == "file":
        yield Job(path, "file")
        return
    base, prefix = path, ""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if is_attempt_folder(name):  # one restart of a torchrun run, given by itself
        base, prefix = path.rstrip("/")[: -len(name)].rstrip("/") or ".", name + "/"
    logdirs, rest = find_logdirs(prefix + name for name in fs.walk(path))
    for logdir in logdirs:
        yield Job(fs.join(base, logdir.label), logdir.kind, base, logdir.files, logdir)
    for name in rest:
        yield Job(fs.join(base, name), "file")
