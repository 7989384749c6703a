"""Cold start as a user meets it: a wheel installed in a fresh venv, `dtypefix explain` on a real log.

Run from the project root:  python bench/startup.py  [--runs 21] [--kb-sizes 0,2000] [--venv DIR] [--checkout DIR]

``--checkout DIR`` builds the wheel from another checkout (``git worktree add /tmp/old <commit>``): the same
measurement of an older commit, for a before/after on the same machine.

Builds the wheel, installs it (with its dependencies, bytecode compiled by pip as usual) into a new virtual
environment, then times, in pairs, `dtypefix explain tests/data/seeds/001-liger-train.log` against the import floor
`python -c "import typer, yaml, rapidfuzz"` run by the same interpreter. Each pair runs back to back, so a load
spike hits both; the figure is the median of the per-pair ratios. Wall time and CPU time (user + system of the
child) are both reported: on a shared machine the CPU ratio is the steadier of the two. The KB cache is warmed
first (a cold cache is a once-per-KB-change cost, measured by bench/run.py). Nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "data" / "seeds" / "001-liger-train.log"
sys.path.insert(0, str(Path(__file__).parent))

from generate import synthetic_kb  # noqa: E402


def _install(venv: Path, checkout: Path) -> Path:
    """A fresh venv with the wheel of ``checkout`` installed; returns its bin folder."""
    wheels = venv.parent / "wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(checkout)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    wheel = next(wheels.glob("dtypefix-*.whl"))
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], check=True, stdout=subprocess.DEVNULL)
    return venv / "bin"


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _pairs(bin_dir: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    floor = [str(bin_dir / "python"), "-c", "import typer, yaml, rapidfuzz"]
    explain = [str(bin_dir / "dtypefix"), "explain", str(LOG)]
    for _ in range(2):  # warm the KB cache and the page cache
        _run(explain, env)
    walls, cpus, floors, costs = [], [], [], []
    for _ in range(runs):
        floor_wall, floor_cpu = _run(floor, env)
        wall, cpu = _run(explain, env)
        walls.append(wall / floor_wall)
        cpus.append(cpu / floor_cpu)
        floors.append(floor_wall)
        costs.append(wall)
    return {
        "floor_ms": statistics.median(floors) * 1000,
        "explain_ms": statistics.median(costs) * 1000,
        "wall_ratio": statistics.median(walls),
        "cpu_ratio": statistics.median(cpus),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--kb-sizes", default="0,2000", help="synthetic entries added with DTYPEFIX_KB (0: none)")
    parser.add_argument("--venv", type=Path, help="reuse a venv made by an earlier run instead of building one")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the checkout whose wheel is measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dtypefix-startup-") as tmp:
        work = Path(tmp)
        bin_dir = args.venv / "bin" if args.venv else _install(work / "venv", args.checkout)
        env = dict(os.environ, DTYPEFIX_CACHE_DIR=str(work / "cache"), NO_COLOR="1")
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a wheel install runs with bytecode
        env.pop("DTYPEFIX_KB", None)
        print(
            f"# cold start, wheel install — Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} pairs"
        )
        print(f"# log: {LOG.relative_to(ROOT)}; target: ratio <= 1.3 (shipped KB), <= 1.5 (2,000 extra entries)")
        for size in (int(s) for s in args.kb_sizes.split(",")):
            run_env = dict(env)
            if size:
                kb = synthetic_kb(work / f"kb-{size}", size)
                run_env["DTYPEFIX_KB"] = str(kb)
            figures = _pairs(bin_dir, run_env, args.runs)
            label = "shipped KB" if not size else f"shipped KB + {size} synthetic entries"
            print(
                f"{label:38s} floor {figures['floor_ms']:4.0f} ms, explain {figures['explain_ms']:4.0f} ms; "
                f"paired median ratio: wall {figures['wall_ratio']:.2f}, CPU {figures['cpu_ratio']:.2f}"
            )
        if not args.venv:
            shutil.rmtree(work / "venv", ignore_errors=True)


if __name__ == "__main__":
    main()
