"""The local engine: jobs explained in worker processes, rows written in job order, re-scans incremental.

Each worker process loads the KB once (its initializer) and then explains job after job; the parent only finds
jobs, decides which a previous scan already covers (:mod:`.scan_state`), and writes rows as they come back, so its
memory holds one row at a time. Rows keep the jobs' order (sorted by path) whatever the number of workers, so two
scans of the same archive write the same file.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from dtypefix.matcher.catalog import Catalog, default_cache_dir, load_catalog

from .scan_jobs import Job, LocalFileSystem
from .scan_rows import UNCHANGED, job_stat, scan_job
from .scan_state import Known, load_state, save_state

__all__ = ["Progress", "ScanCounts", "default_progress", "scan_local"]


@dataclass(frozen=True)
class ScanCounts:
    """What one scan did."""

    jobs: int
    explained_now: int
    """Jobs read and explained in this scan."""
    kept: int
    """Jobs whose row was kept from the previous scan (stat or content hash unchanged)."""
    seconds: float


class Progress:
    """A one-line progress bar on a terminal's stderr, redrawn at most ten times a second."""

    def __init__(self, total: int, stream: IO[str]) -> None:
        self.total = total
        self.stream = stream
        self.done = 0
        self.start = time.monotonic()
        self.drawn = 0.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.drawn >= 0.1 or self.done == self.total:
            self.drawn = now
            rate = self.done / max(now - self.start, 1e-9)
            left = (self.total - self.done) / rate if rate else 0.0
            filled = int(30 * self.done / max(self.total, 1))
            self.stream.write(
                f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} jobs  {rate:.0f}/s  "
                f"{int(left) // 60}:{int(left) % 60:02d} left "
            )
            self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


@dataclass(frozen=True)
class _Setup:
    """What each worker needs, handed over once by the pool's initializer."""

    kb_dirs: tuple[Path, ...]
    known: frozenset[str]


_worker: list[tuple[Catalog, frozenset[str]] | Exception] = []
"""The worker process's KB and known hashes, set once by :func:`_start_worker` (empty in the parent), or why the
KB could not be loaded."""


def _start_worker(setup: _Setup) -> None:
    _worker.clear()
    try:
        _worker.append((load_catalog(setup.kb_dirs, cache_dir=default_cache_dir()), setup.known))
    except Exception as exc:  # raised by the first job instead: a pool respawns a worker whose initializer fails
        _worker.append(exc)


def _work(job: Job) -> dict[str, Any]:
    state = _worker[0]
    if isinstance(state, Exception):
        raise state
    catalog, known = state
    return scan_job(job, LocalFileSystem(), catalog, known)


def _results(todo: list[Job], setup: _Setup, workers: int) -> Iterator[dict[str, Any]]:
    """Rows for ``todo``, in order; in this process when one worker is asked for (or one job is left)."""
    if workers <= 1 or len(todo) <= 1:
        _start_worker(setup)
        try:
            yield from map(_work, todo)
        finally:
            _worker.clear()
        return
    chunk = max(1, min(32, len(todo) // (workers * 8)))
    with multiprocessing.get_context().Pool(workers, initializer=_start_worker, initargs=(setup,)) as pool:
        yield from pool.imap(_work, todo, chunksize=chunk)


def scan_local(
    jobs: list[Job],
    out: Path,
    *,
    kb_dirs: Iterable[Path],
    workers: int,
    fingerprint: str,
    full: bool = False,
    progress: Callable[[int], None] | None = None,
) -> ScanCounts:
    """Explain ``jobs`` into the JSON Lines file ``out`` (rows in job order), keeping the rows of jobs a previous
    scan into ``out`` already explained unless ``full``."""
    started = time.monotonic()
    fs = LocalFileSystem()
    state = {} if full else load_state(out, fingerprint)
    by_hash = {k.hash: path for path, k in state.items() if k.hash}
    stats = {job.path: job_stat(job, fs) for job in jobs}
    keep = {
        job.path
        for job in jobs
        if job.path in state and stats[job.path] == (state[job.path].size, state[job.path].mtime_ns)
    }
    todo = [job for job in jobs if job.path not in keep]
    setup = _Setup(tuple(kb_dirs), frozenset(by_hash))
    partial = out.with_name(out.name + ".partial")
    new_state: dict[str, Known] = {}
    explained = 0
    old = out.open("rb") if state else None
    try:
        with partial.open("wb") as sink:
            results = _results(todo, setup, workers)
            for job in jobs:
                if job.path in keep:
                    line = _old_line(old, state[job.path])
                    known = state[job.path]
                else:
                    row = next(results)
                    if row["status"] == UNCHANGED:  # same content as a job the state knows: its row, this path
                        source = state[by_hash[row["hash"]]]
                        line = _moved(_old_line(old, source), row)
                    else:
                        explained += 1
                        line = (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
                    size, mtime = stats[job.path] or (0, 0)
                    known = Known(size, mtime, row.get("hash"), 0, 0)
                new_state[job.path] = replace(known, offset=sink.tell(), length=len(line))
                sink.write(line)
                if progress is not None:
                    progress(1)
        partial.replace(out)
    finally:
        if old is not None:
            old.close()
        partial.unlink(missing_ok=True)
    save_state(out, fingerprint, new_state)
    return ScanCounts(len(jobs), explained, len(jobs) - explained, time.monotonic() - started)


def _old_line(old: IO[bytes] | None, known: Known) -> bytes:
    assert old is not None  # a kept job implies a loaded state, which implies the old output is open
    old.seek(known.offset)
    return old.read(known.length)


def _moved(line: bytes, row: dict[str, Any]) -> bytes:
    """An earlier row for the same content, with this job's path, size and time."""
    data = json.loads(line)
    data.update(path=row["path"], size=row["size"], mtime=row["mtime"])
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def default_progress(total: int) -> tuple[Callable[[int], None] | None, Callable[[], None]]:
    """A progress bar on stderr when it is a terminal, nothing otherwise; ``(advance, close)``."""
    if not sys.stderr.isatty():
        return None, lambda: None
    bar = Progress(total, sys.stderr)
    return bar.advance, bar.close
