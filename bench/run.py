"""dtypefix benchmarks: start-up against the interpreter floor, KB size, and log size. Prints figures.

Run from the project root with the package installed:  python bench/run.py  [--quick]
Figures are medians of repeated cold runs, reported as ratios against a baseline measured in the same run, so
a noisy machine still gives comparable answers. Nothing here asserts: docs/performance.md records the results.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
DTYPEFIX = [PY, "-m", "dtypefix.cli"]
sys.path.insert(0, str(Path(__file__).parent))

from generate import synthetic_kb, write_log, write_traceback  # noqa: E402


def _time(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def _peak(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (KB) of ``cmd``, via GNU time."""
    timer = shutil.which("time") or "/usr/bin/time"
    start = time.perf_counter()
    proc = subprocess.run(
        [timer, "-f", "%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False
    )
    wall = time.perf_counter() - start
    rss = int(proc.stderr.decode().strip().splitlines()[-1])
    return wall, rss


def _median(cmd: list[str], runs: int, env: dict[str, str] | None = None) -> float:
    return statistics.median(_time(cmd, env) for _ in range(runs))


def bench_startup(work: Path, runs: int, env: dict[str, str]) -> None:
    log = write_traceback(work / "typical.log")
    floor_cmd = [PY, "-c", "import typer, yaml, rapidfuzz"]
    md_cmd = [*DTYPEFIX, "explain", str(log), "--format", "md"]
    json_cmd = [*DTYPEFIX, "explain", str(log), "--format", "json"]
    subprocess.run(json_cmd, stdout=subprocess.DEVNULL, env=env, check=False)  # warm the KB cache
    floors, mds, jsons = [], [], []
    for _ in range(runs):  # interleaved, so load spikes hit all three alike
        floors.append(_time(floor_cmd, env))
        mds.append(_time(md_cmd, env))
        jsons.append(_time(json_cmd, env))
    floor, md, js = (statistics.median(x) for x in (floors, mds, jsons))
    print("## 1. Start-up: a 60-line traceback, cold process, warm KB cache")
    print(f"floor `python -c 'import typer, yaml, rapidfuzz'`: {floor * 1000:.0f} ms")
    print(
        f"dtypefix explain --format json: {js * 1000:.0f} ms  ({(js / floor - 1) * 100:+.0f}% over the floor; target <= +30%)"
    )
    print(f"dtypefix explain --format md:   {md * 1000:.0f} ms  ({(md / floor - 1) * 100:+.0f}% over the floor)")
    probe = subprocess.run(
        [
            PY,
            "-c",
            "import sys; from dtypefix.cli.app import main; import io, contextlib\n"
            f"with contextlib.redirect_stdout(io.StringIO()): main(['explain', {str(log)!r}, '--format', 'json'])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('rich', 'markdown_it', 'jsonschema', 'torch'))))",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    print(
        f"modules loaded by --format json from rich/markdown_it/jsonschema/torch: {probe.stdout.strip() or probe.stderr.strip()}"
    )
    print()


def bench_kb_size(work: Path, runs: int, env: dict[str, str], sizes: list[int]) -> None:
    log = write_traceback(work / "typical.log")
    print("## 2. KB size: the same explain with N synthetic entries added (warm cache; cold build shown too)")
    base = None
    for size in sizes:
        kb = synthetic_kb(work / f"kb-{size}", size)
        cmd = [*DTYPEFIX, "explain", str(log), "--format", "json", "--kb", str(kb)]
        build = _time(cmd, env)  # first run validates everything and writes the cache
        warm = _median(cmd, runs, env)
        base = base or warm
        print(
            f"{size:>6} entries: {warm * 1000:6.0f} ms warm ({warm / base:.2f}x the 100-entry run; target 10,000 <= 3x), "
            f"first run with cache build {build:.1f} s"
        )
    print()


def bench_log_size(work: Path, env: dict[str, str], sizes_mb: list[int]) -> None:
    print("## 3. Log size: 8 interleaved ranks, tqdm noise, launcher chatter, the traceback near the end")
    for size in sizes_mb:
        log = write_log(work / f"log-{size}mb.log", size << 20)
        actual = log.stat().st_size / (1 << 20)
        grep_wall = _time(["grep", "-c", "Traceback", str(log)], env)
        wall, rss = _peak([*DTYPEFIX, "explain", str(log), "--format", "json"], env)
        print(
            f"{actual:7.0f} MB: dtypefix {wall:6.2f} s = {actual / wall:7.0f} MB/s, peak RSS {rss / 1024:5.0f} MB; "
            f"grep -c Traceback {grep_wall:5.2f} s = {actual / grep_wall:6.0f} MB/s"
        )
        log.unlink()
    print("   the same logs with the traceback halfway (then as much progress output again):")
    for size in sizes_mb:
        log = write_log(work / f"log-{size}mb-middle.log", size << 20, middle=True)
        actual = log.stat().st_size / (1 << 20)
        cmd = [*DTYPEFIX, "explain", str(log), "--format", "json"]
        wall, rss = _peak(cmd, env)
        answer = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False).stdout
        found = bool(json.loads(answer).get("matches")) if answer.strip() else False
        print(
            f"{actual:7.0f} MB: dtypefix {wall:6.2f} s = {actual / wall:7.0f} MB/s, peak RSS {rss / 1024:5.0f} MB; "
            f"error {'explained' if found else 'MISSED'}"
        )
        log.unlink()
    print()


def bench_traceback_flood(work: Path, env: dict[str, str], counts: list[int]) -> None:
    print("## 4. A flood of distinct tracebacks (a loop that logs and goes on), the real error last")
    flood = 'Traceback (most recent call last):\n  File "train.py", line 7, in <module>\n    step()\nKeyError: {i}\n'
    last = "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16\n"
    for count in counts:
        log = work / f"flood-{count}.log"
        log.write_text("".join(flood.format(i=i) for i in range(count)) + last, encoding="utf-8")
        size = log.stat().st_size / (1 << 20)
        wall, rss = _peak([*DTYPEFIX, "explain", str(log), "--format", "json"], env)
        print(f"{count:7d} tracebacks ({size:4.1f} MB): {wall:6.2f} s, peak RSS {rss / 1024:5.0f} MB")
        log.unlink()
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, smaller KBs and logs")
    args = parser.parse_args()
    runs = 5 if args.quick else 15
    with tempfile.TemporaryDirectory(prefix="dtypefix-bench-") as tmp:
        work = Path(tmp)
        env = dict(os.environ, DTYPEFIX_CACHE_DIR=str(work / "cache"), NO_COLOR="1")
        # Measure dtypefix as a wheel install runs it: with bytecode. (Some sandboxes set PYTHONDONTWRITEBYTECODE,
        # which would recompile dtypefix's sources on every run while the floor's packages keep their .pyc files.)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run(
            [PY, "-m", "compileall", "-q", str(ROOT / "matcher"), str(ROOT / "cli")],
            env=env,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        print(f"# dtypefix benchmarks — {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")
        bench_startup(work, runs, env)
        bench_kb_size(work, 3 if args.quick else 5, env, [100, 1000] if args.quick else [100, 1000, 10000])
        bench_log_size(work, env, [10, 100] if args.quick else [10, 100, 1024])
        bench_traceback_flood(work, env, [10_000] if args.quick else [10_000, 100_000])


if __name__ == "__main__":
    main()
