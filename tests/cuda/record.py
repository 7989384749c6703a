"""Re-record every reproducer this machine can run, in one go.

    python tests/cuda/record.py OUT_DIR [--device cpu|cuda|all] [NAME ...]

Writes OUT_DIR/<name>.log (the merged output) and OUT_DIR/<name>.yaml (device, GPU, driver, versions, command,
exit code, expected entry). On the GPU machine run it with ``--device all`` and copy the files into
tests/data/recorded/; tests/test_recorded.py then replays them on every CI run. A case whose wording does not
appear in its output is reported and not written: a recording proves what the library printed, never a guess.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))

from cases import CASES
from harness import hardware, missing, run, versions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--device", choices=("cpu", "cuda", "all"), default="all")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    import torch

    has_cuda = torch.cuda.is_available()
    failures = 0
    for case in CASES:
        if args.names and case.name not in args.names:
            continue
        if args.device != "all" and case.device != args.device:
            continue
        if case.device == "cuda" and not has_cuda:
            print(f"skip {case.name}: no CUDA device")
            continue
        if case.device == "cpu" and case.name == "cpu-cuda-on-cpu-only-build" and has_cuda:
            print(f"skip {case.name}: needs a CPU-only torch build")
            continue
        if absent := missing(case):
            print(f"skip {case.name}: {', '.join(absent)} not installed")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            result = run(case, Path(tmp))
        if not re.search(case.wording, result.output):
            failures += 1
            print(f"FAIL {case.name}: /{case.wording}/ not in the output (exit {result.returncode}):")
            print(result.output[-2000:])
            continue
        meta = {
            "name": case.name,
            "expected": case.expected,
            "wording": case.wording,
            **hardware(case.device),
            "versions": versions(),
            "command": result.command,
            "exit_code": result.returncode,
        }
        (args.out / f"{case.name}.log").write_text(result.output, encoding="utf-8")
        (args.out / f"{case.name}.yaml").write_text(
            yaml.safe_dump(meta, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        print(f"ok   {case.name} (exit {result.returncode})")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
