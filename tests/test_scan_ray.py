"""``dtypefix scan --engine ray``: on a local Ray instance (two CPUs), the same rows as the local engine.

Skipped when Ray is not installed (``pip install 'dtypefix[ray]'``). Starting Ray and its actors takes about
20 seconds on two cores; the scan itself a few.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'dtypefix[ray]'")

pytestmark = [
    pytest.mark.ray,
    # Ray's own modules warn (deprecations, resource hints) on import and start-up: not ours to fail on.
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning"),
]

ROOT = Path(__file__).resolve().parent.parent


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("scan_archive", ROOT / "bench" / "scan_archive.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_rows_equal_local_rows(cli, tmp_path: Path, local_ray: None) -> None:
    archive = tmp_path / "archive"
    counts = _generator().generate(archive, 300, seed=7, scale=0.05)
    assert counts["rank folders"] > 5 and counts["gzip"] > 30
    local = tmp_path / "local.jsonl"
    assert cli("scan", str(archive), "--out", str(local), "--jobs", "1", "--format", "json").code == 0
    folder = tmp_path / "ray-out"
    result = cli("scan", str(archive), "--engine", "ray", "--out", str(folder), "--format", "json")
    assert result.code == 0, result.err
    local_rows = sorted(local.read_text(encoding="utf-8").splitlines())
    ray_rows = sorted(line for part in folder.glob("*.jsonl") for line in part.read_text(encoding="utf-8").splitlines())
    assert len(ray_rows) == len(local_rows) >= 300
    assert ray_rows == local_rows  # byte for byte: the same per-job function, the same JSON
    local_summary = json.loads(cli("scan", str(archive), "--out", str(local), "--format", "json").out)
    assert json.loads(result.out) == local_summary  # counted from the written rows either way


def test_object_store_uris_read_as_local_paths() -> None:
    # pyarrow.fs, the file systems Ray Data reads from; file:// stands in for s3:// or gs:// (no bucket offline).
    from dtypefix.cli.scan_jobs import LocalFileSystem, find_jobs
    from dtypefix.cli.scan_ray import ArrowFileSystem
    from dtypefix.cli.scan_rows import scan_job
    from dtypefix.matcher.catalog import load_catalog

    folder = ROOT / "tests" / "data" / "logdir"
    uri = folder.as_uri()
    store = ArrowFileSystem(uri)
    remote, local = find_jobs([uri], store), find_jobs([str(folder)], LocalFileSystem())
    assert [(j.path.removeprefix(uri), j.kind) for j in remote] == [
        (j.path.removeprefix(str(folder)), j.kind) for j in local
    ]
    assert any(j.kind == "torchrun" for j in remote)
    catalog = load_catalog(cache_dir=None)
    for far, near in zip(remote, local, strict=True):
        far_row, near_row = scan_job(far, store, catalog), scan_job(near, LocalFileSystem(), catalog)
        assert far_row.pop("path").startswith("file://") and near_row.pop("path")
        assert far_row == near_row
