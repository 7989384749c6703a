"""``dtypefix scan`` on a generated archive: jobs per second on 1 and 2 cores, peak memory, an incremental re-scan,
and the Ray engine against the local one on the same machine.

    python bench/scan_bench.py --jobs 10000 --archive /tmp/scan-archive [--recordings ../shared/recordings] [--ray]

Every scan runs as the real command in a child process (``python -m dtypefix.cli``), timed from outside. Peak memory
is the largest resident set of any one process of the scan (the parent or a worker, from ``getrusage``); the
machine's load average is printed before and after, since the figures mean little on a busy machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("scan_archive", ROOT / "bench" / "scan_archive.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


_MEASURE = (
    "import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN); sys.stderr.write(done.stderr); "
    "print(done.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)"
)
"""A fresh process per scan, so that the peak resident set it reports is this scan's own."""


def run_scan(args: list[str]) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of the scan's processes, peak RSS of one process in MB, stderr's last line)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "dtypefix.cli", "scan", *args, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    code, cpu, rss = done.stdout.split()
    if int(code) not in (0, 1):
        raise SystemExit(f"scan failed ({code}): {done.stderr[-2000:]}")
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    return wall, float(cpu), int(rss) // 1024, last


def huge_log(folder: Path, megabytes: int) -> Path:
    """One log of ``megabytes``: a long healthy run, an error in the middle, the failure at the end."""
    path = folder / "huge.log"
    block = "".join(f"{{'loss': 1.{i:04d}, 'learning_rate': 2e-05, 'epoch': 0.{i:04d}}}\n" for i in range(10_000))
    failure = (ROOT / "tests/data/recorded/cpu-torchrun-gloo-rank1-dtype.log").read_text(encoding="utf-8")
    with path.open("w", encoding="utf-8") as out:
        for i in range(megabytes * (1 << 20) // len(block)):
            out.write(block)
            if i == 100:
                out.write("UserWarning: something harmless\nValueError: a handled error in a callback\n")
        out.write(failure)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs in the generated archive")
    parser.add_argument("--archive", type=Path, default=Path(tempfile.gettempdir()) / "dtypefix-scan-archive")
    parser.add_argument("--recordings", type=Path, action="append", default=[])
    parser.add_argument("--huge", type=int, default=512, help="MB of the one huge log scanned for peak memory")
    parser.add_argument("--ray", action="store_true", help="also time --engine ray (needs dtypefix[ray])")
    args = parser.parse_args()
    marker = args.archive / ".generated.json"
    wanted = {"jobs": args.jobs, "recordings": [str(r) for r in args.recordings]}
    if not marker.is_file() or json.loads(marker.read_text()) != wanted:
        shutil.rmtree(args.archive, ignore_errors=True)
        started = time.monotonic()
        counts = _generator().generate(args.archive, args.jobs, recordings=args.recordings)
        marker.write_text(json.dumps(wanted))
        print(f"generated {args.jobs} jobs in {time.monotonic() - started:.0f} s: {counts}")
    size = sum(p.stat().st_size for p in args.archive.rglob("*") if p.is_file())
    print(f"archive: {args.archive}, {size / 1e6:.0f} MB on disk")
    print(f"before: {_load()}")
    out = Path(tempfile.mkdtemp()) / "scan.jsonl"
    results: dict[str, tuple[float, float, int, str]] = {}
    for workers in (1, 2):
        results[f"{workers} core"] = run_scan([str(args.archive), "--out", str(out), "--jobs", str(workers), "--full"])
    results["re-scan, nothing new"] = run_scan([str(args.archive), "--out", str(out), "--jobs", "2"])
    big = huge_log(out.parent, args.huge)
    results[f"one {args.huge} MB log"] = run_scan([str(big), "--out", str(out.parent / "huge.jsonl"), "--jobs", "1"])
    if args.ray:
        ray_out = out.parent / "ray"
        results["ray, 2 CPUs"] = run_scan([str(args.archive), "--engine", "ray", "--out", str(ray_out)])
    print(f"after: {_load()}")
    print(f"rows: {sum(1 for _ in out.open())}, {out.stat().st_size / 1e6:.0f} MB")
    print("| run | wall s | jobs/s | CPU s | peak RSS of one process |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (wall, cpu, rss, _) in results.items():
        jobs = 1 if name.startswith("one ") else args.jobs
        print(f"| {name} | {wall:.1f} | {jobs / wall:.1f} | {cpu:.1f} | {rss} MB |")
    one, two = results["1 core"][0], results["2 core"][0]
    print(f"scaling 1 -> 2 cores: {one / two:.2f}x (wall)")
    print(f"re-scan: {100 * results['re-scan, nothing new'][0] / one:.1f} % of the first scan's time")
    if args.ray:
        print(
            f"ray vs local (2 cores): {results['ray, 2 CPUs'][0] - two:+.1f} s, {results['ray, 2 CPUs'][0] / two:.2f}x"
        )
    for name, (*_, last) in results.items():
        print(f"  {name}: {last}")


if __name__ == "__main__":
    main()
