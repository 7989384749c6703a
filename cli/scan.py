"""``dtypefix scan``: every job in a log archive explained, and the fleet counted by cause.

The command only wires the parts together: :mod:`.scan_jobs` finds the jobs, an engine (:mod:`.scan_local`, or
:mod:`.scan_ray` on a Ray cluster) writes one row per job with :func:`.scan_rows.scan_job`, and the summary is
counted from the written rows (:mod:`.scan_summary`, :mod:`.scan_html`). Its imports are inside the function: the
other commands do not pay for them.
"""

from __future__ import annotations

import enum
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .inputs import InputError
from .options import FormatOption, KbOption, LangOption, app, kb_dirs, lang_of

if TYPE_CHECKING:
    from .scan_local import ScanCounts

__all__ = ["Engine", "scan"]


class Engine(str, enum.Enum):
    """``--engine`` choices."""

    local = "local"
    ray = "ray"


@app.command()
def scan(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH...",
            help="Log files (plain or .gz), folders (walked; per-rank folders are one job each) and globs; "
            "with --engine ray also object-store URIs (s3://, gs://, ...).",
        ),
    ],
    out: Annotated[
        str,
        typer.Option(
            "--out",
            "-o",
            help="The JSON Lines file, one row per job, its state file beside it; with --engine ray a folder "
            "(or object-store URI) for Ray's part files.",
        ),
    ] = "dtypefix-scan.jsonl",
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Worker processes (local engine); default: every core.")
    ] = None,
    engine: Annotated[Engine, typer.Option("--engine", help="local (processes) or ray (Ray Data).")] = Engine.local,
    full: Annotated[
        bool, typer.Option("--full", help="Explain every job again, ignoring what the last scan into --out kept.")
    ] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write the summary as an HTML report with charts.")
    ] = None,
    lang: LangOption = None,
    fmt: FormatOption = None,
    kb: KbOption = None,
) -> int:
    """Scan a log archive: explain every job (a log file or a per-rank folder) and count them by cause.

    Writes one JSON Lines row per job to --out (path, size, mtime, status, cause, confidence, location, packages
    and the same report as `explain --format json`), then prints the summary. A re-scan into the same --out reads
    only jobs that are new or changed. Exit code 0 when at least one job was explained by a known cause, 1 when
    none was, 2 on bad usage; unreadable jobs are rows, never errors.

    Example: dtypefix scan /var/log/training --jobs 8 --out fleet.jsonl --html fleet.html
    """
    from .scan_html import summary_html
    from .scan_summary import format_summary, summarise, summary_json

    if engine is Engine.ray:
        from .scan_ray import read_rows, scan_ray

        counts = scan_ray(paths, out, kb_dirs=kb_dirs(kb))
        summary = summarise(read_rows(out))
    else:
        target = Path(out)
        if target.is_dir():
            raise InputError(f"--out {out}: is a directory; give a file name such as {target / 'scan.jsonl'}")
        if not target.parent.exists():
            raise InputError(f"--out {out}: folder {target.parent} does not exist")
        counts = _scan_locally(paths, target, jobs or os.cpu_count() or 1, full, kb_dirs(kb))
        summary = summarise(_rows(target))
    typer.echo(
        f"dtypefix scan: {counts.jobs} jobs, {counts.explained_now} read and explained, {counts.kept} kept from the "
        f"last scan, {counts.seconds:.1f} s; rows in {out}",
        err=True,
    )
    one = lang_of(lang)
    if html is not None:
        html.write_text(summary_html(summary, one), encoding="utf-8")
    if fmt == "html":  # the page with its charts, as --html writes it
        sys.stdout.write(summary_html(summary, one))
    else:
        from .formats import Document, emit

        emit(fmt, sys.stdout, Document(lambda: format_summary(summary, one), lambda: summary_json(summary), None, one))
    return 0 if summary.statuses["explained"] else 1


def _scan_locally(paths: list[str], out: Path, workers: int, full: bool, dirs: list[Path]) -> ScanCounts:
    from .scan_jobs import LocalFileSystem, find_jobs
    from .scan_local import default_progress, scan_local
    from .scan_state import fingerprint, state_path

    found = find_jobs(
        paths,
        LocalFileSystem(),
        exclude=[out, state_path(out), *(p.with_name(p.name + ".partial") for p in (out, state_path(out)))],
    )
    advance, close = default_progress(len(found))
    try:
        return scan_local(
            found, out, kb_dirs=dirs, workers=workers, fingerprint=fingerprint(dirs), full=full, progress=advance
        )
    finally:
        close()


def _rows(out: Path) -> Iterator[dict[str, Any]]:
    """The written rows, one at a time (a damaged line is skipped: the summary counts what can be read)."""
    with out.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                yield json.loads(line)
            except ValueError:
                continue
