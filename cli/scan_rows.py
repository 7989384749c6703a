"""One job in, one row out: the per-job function both scan engines run (local processes, Ray Data).

A job is read as ``dtypefix explain`` reads it (:mod:`.logfiles`, :func:`.inputs.checked_text`), explained with the
same call, and its row carries the same JSON document (:func:`.json_output.report_json`) next to the few fields a
fleet summary counts. Bad input is a row with its reason, never an exception: an archive always has a few.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from dtypefix.matcher.explain import explain_incident, incident_from
from dtypefix.matcher.traceback import Stack

from .input_errors import TAIL_BYTES, InputError
from .inputs import checked_text
from .json_output import report_json
from .logfiles import keep_stream, read_logdir_text
from .scan_jobs import FileSystem, Job

if TYPE_CHECKING:
    from dtypefix.matcher.catalog import Catalog
    from dtypefix.matcher.result import Report

__all__ = ["STATUSES", "UNCHANGED", "job_stat", "scan_job", "status_of"]

STATUSES = ("explained", "no known cause", "out of scope", "no error", "unreadable")
"""A row's ``status``: a known cause matched; a traceback or error line was printed but no entry explains it; an
error of a kind dtypefix names but does not treat (out of memory, NCCL...); no traceback and no error line (a
healthy job, or one killed without a word); the job could not be read, or dtypefix failed on it (``reason``)."""
UNCHANGED = "unchanged"
"""``status`` of the stand-in row for a job whose content hash a previous scan already explained."""
_SITE = ("site-packages/", "dist-packages/", "/lib/python")


def scan_job(job: Job, fs: FileSystem, catalog: Catalog, known: Collection[str] = ()) -> dict[str, Any]:
    """Read, hash and explain ``job``; the row. When its content hash is in ``known``, the explaining is skipped
    and the row says :data:`UNCHANGED` (the caller copies the earlier row)."""
    size, mtime = job_stat(job, fs) or (0, 0)
    digest = hashlib.sha256()
    try:
        if job.kind == "missing":
            raise InputError(f"{job.path}: no such file or folder")
        text = _read(job, fs, digest)
    except InputError as exc:
        return _row(job, size, mtime, None, None, str(exc))
    except OSError as exc:
        return _row(job, size, mtime, None, None, f"{job.path}: cannot read: {exc.strerror or exc}")
    content = digest.hexdigest()
    if content in known:
        return {"path": job.path, "size": size, "mtime": _iso(mtime), "hash": content, "status": UNCHANGED}
    try:
        report = explain_incident(incident_from(text), catalog)
    except Exception as exc:  # a bug met on one log of thousands: that job's row says so, the scan goes on
        reason = f"{job.path}: dtypefix failed on this job ({type(exc).__name__}: {exc}); please report it"
        return _row(job, size, mtime, content, None, reason)
    return _row(job, size, mtime, content, report, None)


def job_stat(job: Job, fs: FileSystem) -> tuple[int, int] | None:
    """``(bytes, newest modification in ns)`` of the job's files; ``None`` when one cannot be looked at."""
    if job.kind == "missing":
        return None
    size, mtime = 0, 0
    try:
        for path in job.file_paths(fs):
            one_size, one_mtime = fs.stat(path)
            size, mtime = size + one_size, max(mtime, one_mtime)
    except OSError:
        return None
    return size, mtime


def _read(job: Job, fs: FileSystem, digest: Any) -> str:
    """The job's text, exactly as ``explain`` would get it; every byte read goes into ``digest``."""

    def keep(path: str, tail: int = TAIL_BYTES, name: str = "") -> bytes:
        digest.update(f"\0{name}\0".encode())
        with fs.open(path) as raw:
            return keep_stream(raw, path, tail, digest)

    if job.logdir is None:
        return checked_text(job.path, keep(job.path))
    return read_logdir_text(job.base, job.logdir, lambda name, tail: keep(fs.join(job.base, name), tail, name))


def _iso(mtime_ns: int) -> str:
    return datetime.fromtimestamp(mtime_ns / 1e9, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_of(report: Report) -> str:
    if report.found:
        return "explained"
    if report.out_of_scope is not None:
        return "out of scope"
    incident = report.incident
    # A short log with no exception has its lines read as a bare message (a pasted error, for explain); for a
    # fleet, a job counts as failed only when a traceback or a typed error line was printed.
    printed = incident.stacks or any(line.exc_type for line in incident.error_lines)
    return "no known cause" if printed else "no error"


def _location(report: Report) -> dict[str, Any] | None:
    """Where the headline error was raised in the job's own code: its innermost frame outside installed packages
    (the innermost frame of all when every frame is a library's)."""
    primary = report.incident.primary
    if not isinstance(primary, Stack) or not primary.frames:
        return None
    own = [f for f in primary.frames if not any(part in f.file for part in _SITE)]
    frame = (own or list(primary.frames))[-1]
    return {"file": frame.file, "line": frame.line, "function": frame.function, "stream": primary.stream}


def _row(
    job: Job, size: int, mtime: int, content: str | None, report: Report | None, reason: str | None
) -> dict[str, Any]:
    top = report.matches[0] if report is not None and report.matches else None
    return {
        "path": job.path,
        "kind": job.kind,
        "size": size,
        "mtime": _iso(mtime) if mtime else None,
        "hash": content,
        "status": "unreadable" if report is None else status_of(report),
        "reason": reason,
        "cause": top.entry.id if top else None,
        "confidence": top.confidence if top else None,
        "family": top.entry.family if top else None,
        "title": top.entry.title.en if top else None,
        "out_of_scope": report.out_of_scope.value if report is not None and report.out_of_scope else None,
        "error": None
        if report is None or report.incident.primary is None
        else f"{report.incident.primary.exc_type}: {report.incident.primary.message}".lstrip(": ")[:300],
        "location": _location(report) if report is not None else None,
        "packages": {n: p.version for n, p in report.incident.packages.items()} if report is not None else {},
        "report": report_json(report) if report is not None else None,
    }
