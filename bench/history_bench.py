"""Size of the shipped fix-history index and the time of a lookup.

Prints the index file's size, the libraries and releases it covers, then the time of ``fix_history`` on the
frames of every test fixture and development case (tests/data/history_dev; the held-out samples are left to the
measurement): the first call in a process (opens the index) and the median of repeated calls (the rows a traceback
needs are then cached).

Run:  python bench/history_bench.py
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import yaml

from dtypefix.matcher.explain import incident_from
from dtypefix.matcher.history import DB_NAME, _data_dir, coverage, fix_history, open_index
from dtypefix.matcher.traceback import Stack

ROOT = Path(__file__).resolve().parent.parent


def _logs() -> list[str]:
    logs = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests" / "data" / "history").glob("*.log"))]
    for path in sorted((ROOT / "tests" / "data" / "history_dev").glob("*.yaml")):
        logs.append(yaml.safe_load(path.read_text(encoding="utf-8"))["log"])
    return logs


def main() -> None:
    path = _data_dir() / DB_NAME
    cover = coverage()
    print(f"index: {path.stat().st_size / 1e6:.2f} MB ({path.name}), built {cover.built}")
    for name, first, last, count in cover.libraries:
        print(f"  {name:13} {count:4} releases  {first} – {last}")
    stacks = []
    for log in _logs():
        incident = incident_from(log)
        primary = incident.primary
        if isinstance(primary, Stack) and primary.frames:
            stacks.append((primary.frames, incident.packages))
    start = time.perf_counter()
    open_index()
    fix_history(*stacks[0])
    cold = (time.perf_counter() - start) * 1000
    times = []
    for _ in range(20):
        for frames, packages in stacks:
            t0 = time.perf_counter()
            fix_history(frames, packages)
            times.append((time.perf_counter() - t0) * 1000)
    print(f"first lookup in a process (opens the index): {cold:.1f} ms")
    print(
        f"lookup per traceback ({len(stacks)} tracebacks x 20): median {statistics.median(times):.2f} ms, max {max(times):.2f} ms"
    )


if __name__ == "__main__":
    main()
