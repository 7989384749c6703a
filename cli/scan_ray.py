"""The Ray engine: the same per-job function (:func:`.scan_rows.scan_job`) as a Ray Data pipeline.

Jobs are found on the driver (local folders, or object-store URIs listed through pyarrow's file systems, the ones
Ray Data itself reads from), handed to Ray Data as a dataset, explained in batches by a pool of actors that each load
the KB once, and written as JSON Lines part files into the output folder (local or a bucket) by a file datasink.
Each worker streams its jobs' files from where they lie, through the same bounded reader as ``explain``: a
multi-gigabyte log never travels whole through the object store. The summary is counted from the written rows.

Ray connects to the cluster named by ``RAY_ADDRESS`` (``ray.init`` reads it), or starts a local instance. On a
cluster every node needs dtypefix installed and must reach the logs (a shared path or the bucket).
"""

from __future__ import annotations

import json
import pickle
import posixpath
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .inputs import InputError
from .scan_jobs import FileSystem, Job, LocalFileSystem, find_jobs
from .scan_local import ScanCounts

if TYPE_CHECKING:
    import pyarrow.fs

__all__ = ["ArrowFileSystem", "read_rows", "scan_ray"]

_BATCH = 16
"""Jobs per batch: small, because one job can take a second (a big log) and batches are the unit of balance."""


def _is_uri(path: str) -> bool:
    return "://" in path


class ArrowFileSystem:
    """An object store (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``...) through ``pyarrow.fs``; paths keep
    their URI scheme, so that rows name the objects as users do."""

    def __init__(self, uri: str) -> None:
        from pyarrow import fs

        self.scheme = uri.split("://", 1)[0] + "://"
        self.fs: pyarrow.fs.FileSystem = fs.FileSystem.from_uri(uri)[0]

    def _native(self, path: str) -> str:
        return path.removeprefix(self.scheme)

    def kind(self, path: str) -> str:
        from pyarrow import fs

        found = self.fs.get_file_info(self._native(path)).type
        return "dir" if found == fs.FileType.Directory else "file" if found == fs.FileType.File else "missing"

    def walk(self, path: str) -> Iterator[str]:
        from pyarrow import fs

        root = self._native(path).rstrip("/")
        infos = self.fs.get_file_info(fs.FileSelector(root, recursive=True))
        names = []
        for info in infos:
            if info.type == fs.FileType.File:
                rel = info.path[len(root) :].lstrip("/")
                if not any(part.startswith(".") for part in rel.split("/")):
                    names.append(rel)
        yield from sorted(names)

    def stat(self, path: str) -> tuple[int, int]:
        info = self.fs.get_file_info(self._native(path))
        return int(info.size or 0), int(info.mtime_ns or 0)

    def open(self, path: str) -> BinaryIO:
        stream: BinaryIO = self.fs.open_input_stream(self._native(path))
        return stream

    def join(self, base: str, name: str) -> str:
        return posixpath.join(base.rstrip("/"), name)


def _filesystem(paths: list[str]) -> FileSystem:
    schemes = {p.split("://", 1)[0] if _is_uri(p) else "" for p in paths}
    if len(schemes) > 1:
        raise InputError("--engine ray: give paths of one kind (all local, or all of one object store)")
    return ArrowFileSystem(paths[0]) if schemes != {""} else LocalFileSystem()


class _ScanBatch:
    """A Ray actor: the KB loaded once, then batches of jobs explained into rows (one JSON line each)."""

    def __init__(self, kb_dirs: list[str], uri: str) -> None:
        from dtypefix.matcher.catalog import default_cache_dir, load_catalog

        self.catalog = load_catalog([Path(d) for d in kb_dirs], cache_dir=default_cache_dir())
        self.fs = ArrowFileSystem(uri) if uri else LocalFileSystem()

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        from .scan_rows import scan_job

        paths, lines = [], []
        for blob in batch["job"]:
            job: Job = pickle.loads(blob)  # made by this program's driver, never read from the logs
            row = scan_job(job, self.fs, self.catalog)
            paths.append(job.path)
            lines.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
        return {"path": paths, "line": lines}


def _datasink(out: str) -> Any:
    from ray.data.datasource import BlockBasedFileDatasink

    class JsonLinesDatasink(BlockBasedFileDatasink):  # type: ignore[misc,unused-ignore]  # Any without ray
        """Each block's ``line`` column as a JSON Lines part file: the rows exactly as the local engine writes."""

        def __init__(self, path: str) -> None:
            super().__init__(path, file_format="jsonl")

        def write_block_to_file(self, block: Any, file: Any) -> None:
            lines = block.to_arrow().column("line").to_pylist()
            file.write("".join(line + "\n" for line in lines).encode("utf-8"))

    return JsonLinesDatasink(out)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError(
            "--engine ray needs Ray Data: pip install 'dtypefix[ray]' (or use the default local engine)"
        ) from None
    return ray


def scan_ray(paths: list[str], out: str, *, kb_dirs: list[Path]) -> ScanCounts:
    """Explain every job under ``paths`` on Ray, writing JSON Lines part files into the folder (or URI) ``out``.

    Connects to ``RAY_ADDRESS`` when set (or to an already initialised Ray), otherwise starts a local instance.
    Every job is explained (no incremental state: a cluster run is the full pass).
    """
    ray = _ray()
    started = time.monotonic()
    fs = _filesystem(paths)
    jobs = find_jobs(paths, fs)
    if not ray.is_initialized():
        ray.init(logging_level="WARNING", log_to_driver=False)
    from ray import data as ray_data

    context = ray_data.DataContext.get_current()
    context.enable_progress_bars = sys.stderr.isatty()
    uri = paths[0] if isinstance(fs, ArrowFileSystem) else ""
    workers = max(1, int(ray.available_resources().get("CPU", 1)))
    dataset = ray_data.from_items([{"job": pickle.dumps(job)} for job in jobs], override_num_blocks=workers * 4)
    rows = dataset.map_batches(
        _ScanBatch,
        fn_constructor_args=([str(d) for d in kb_dirs], uri),
        batch_size=_BATCH,
        concurrency=workers,
        num_cpus=1,
    )
    _clear(out)
    rows.write_datasink(_datasink(out))
    return ScanCounts(len(jobs), len(jobs), 0, time.monotonic() - started)


def _clear(out: str) -> None:
    """An output folder holds one scan: the part files of an earlier one would be counted twice."""
    if _is_uri(out):
        target = ArrowFileSystem(out)
        if target.kind(out) == "dir":
            target.fs.delete_dir_contents(target._native(out), missing_dir_ok=True)
        return
    folder = Path(out)
    if folder.is_file():
        raise InputError(f"--out {out}: with --engine ray, --out is a folder (Ray writes part files into it)")
    for part in folder.glob("*.jsonl") if folder.is_dir() else []:
        part.unlink()


def read_rows(out: str) -> Iterator[dict[str, Any]]:
    """The rows written into the folder (or URI) ``out``, part file by part file."""
    fs: FileSystem = ArrowFileSystem(out) if _is_uri(out) else LocalFileSystem()
    if fs.kind(out) != "dir":
        return
    for name in fs.walk(out):
        if not name.endswith(".jsonl"):
            continue
        with fs.open(fs.join(out, name)) as raw:
            for line in _lines(raw):
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


def _lines(raw: BinaryIO) -> Iterator[bytes]:
    """The lines of a stream, read a chunk at a time (a part file can hold thousands of rows)."""
    rest = b""
    while chunk := raw.read(1 << 20):
        *whole, rest = (rest + chunk).split(b"\n")
        yield from whole
    if rest:
        yield rest
