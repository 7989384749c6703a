"""A realistic log archive for ``dtypefix scan``: failed jobs among healthy ones, as a platform's log store holds.

Failed jobs carry real failure output: the CPU recordings in tests/data/recorded/, the KB's example logs (real
reports, trimmed), the shared corpus's reports (tests/corpus/, with the environment they list) and, when given with
``--recordings``, the GPU recordings in shared/recordings/*/logs/. Each is put at the end of a healthy run's output,
so that jobs look like what a training job prints: INFO lines with timestamps, tqdm bars redrawn with carriage
returns, library warnings, loss lines. Sizes are log-normal (median ~30 KB) with a few logs of megabytes; about one
job in twenty is a per-rank folder (torchrun's --log-dir layout with error.json, or ``*_rank<N>.log`` files), one
in five is gzip, and a handful are empty, binary or truncated. Dates spread over 90 days (file times).

    python bench/scan_archive.py /tmp/archive --jobs 10000
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WARNINGS = (
    "/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: "
    "the use_reentrant parameter should be passed explicitly.",
    "/opt/conda/lib/python3.11/site-packages/transformers/trainer.py:1702: FutureWarning: `tokenizer` is deprecated "
    "and will be removed in version 5.0.0 for `Trainer.__init__`. Use `processing_class` instead.",
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot "
    "assign requested address).",
    "/opt/conda/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py:600: UserWarning: torch._dynamo "
    "recompiling function forward due to a guard failure.",
)
INFO = (
    "[INFO|trainer.py:2134] ***** Running training *****",
    "[INFO|trainer.py:2135]   Num examples = 52,002",
    "[INFO|configuration_utils.py:733] loading configuration file config.json",
    "[INFO|modeling_utils.py:3553] loading weights file model.safetensors.index.json",
    "[INFO|trainer.py:3478] Saving model checkpoint to /checkpoints/checkpoint-500",
    "[2024-06-01 10:00:00,000] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda",
)


def failures(recordings: list[Path]) -> list[str]:
    """Every real failure text available, each once."""
    texts = [
        p.read_text(encoding="utf-8", errors="replace") for p in sorted((ROOT / "tests/data/recorded").glob("*.log"))
    ]
    for folder in recordings:
        texts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.glob("*/logs/*.log"))]
        texts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.glob("logs/*.log"))]
    for path in sorted((ROOT / "kb").glob("*/*/*.log")):
        texts.append(path.read_text(encoding="utf-8", errors="replace"))
    for path in sorted((ROOT / "tests/corpus").glob("*.yaml")):
        report = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(report, dict) and report.get("log"):
            texts.append(f"{report.get('environment') or ''}\n{report['log']}")
    return [t for t in texts if t.strip()]


def healthy(rng: random.Random, size: int, start: float) -> str:
    """A training run's ordinary output of about ``size`` bytes."""
    lines: list[str] = [rng.choice(INFO) for _ in range(5)]
    total, step, now = 0, 0, start
    while total < size:
        kind = rng.random()
        if kind < 0.55:
            pct = step % 101
            bar = "".join(
                f"\r{p}%|{'█' * (p // 10)}{' ' * (10 - p // 10)}| {p}/100 [00:{p % 60:02d}<01:00, 1.2it/s]"
                for p in range(max(0, pct - 3), pct + 1)
            )
            line = f"Epoch 0: {bar}"
        elif kind < 0.85:
            line = f"{{'loss': {2.5 * 0.999**step:.4f}, 'grad_norm': {rng.uniform(0.2, 3):.3f}, 'learning_rate': 2e-05, 'epoch': {step / 1000:.2f}}}"
        elif kind < 0.97:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now))
            line = f"{stamp},{rng.randint(0, 999):03d} - INFO - {rng.choice(INFO)}"
        else:
            line = rng.choice(WARNINGS)
        lines.append(line)
        total += len(line) + 1
        step += 1
        now += rng.uniform(0.5, 3)
    return "\n".join(lines) + "\n"


def _size(rng: random.Random, scale: float) -> int:
    if rng.random() < 0.005:
        return int(rng.uniform(2e6, 6e6) * scale)  # the odd run that logged every step for hours
    return int(min(rng.lognormvariate(10.3, 0.9), 1.5e6) * scale)  # median ~30 KB


def _write(path: Path, text: str, compress: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    if compress:
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(data, compresslevel=5))
    else:
        path.write_bytes(data)


def _rank_folder(folder: Path, rng: random.Random, failure: str, size: int, start: float, torchrun: bool) -> None:
    """A failed distributed job: one rank's failure among ranks that were stopped."""
    ranks = rng.choice((2, 4, 8))
    bad = rng.randrange(ranks)
    stamp = int(start)
    run = folder / f"run_{rng.getrandbits(32):08x}" / "attempt_0"
    for rank in range(ranks):
        text = healthy(rng, max(2000, size // ranks), start)
        if rank == bad:
            text += failure
        if torchrun:
            base = run / str(rank)
            _write(base / "stdout.log", text, False)
            _write(base / "stderr.log", failure if rank == bad else "", False)
            if rank == bad and failure.strip():
                error = {
                    "message": {
                        "message": failure.strip().splitlines()[-1][:200],
                        "extraInfo": {"py_callstack": failure, "timestamp": str(stamp)},
                    }
                }
                (base / "error.json").write_text(json.dumps(error), encoding="utf-8")
        else:
            _write(folder / f"train_rank{rank}.log", text, rng.random() < 0.2)


def generate(
    out: Path, jobs: int, seed: int = 0, failed: float = 0.3, scale: float = 1.0, recordings: list[Path] | None = None
) -> dict[str, int]:
    """Write ``jobs`` jobs under ``out``; the counts of each kind written."""
    rng = random.Random(seed)
    texts = failures(recordings or [])
    counts = {"files": 0, "failed": 0, "rank folders": 0, "gzip": 0, "bad": 0, "bytes": 0}
    end = time.time()
    for n in range(jobs):
        when = end - rng.uniform(0, 90 * 86400)
        day = out / time.strftime("%Y-%m-%d", time.gmtime(when))
        size = _size(rng, scale)
        roll = rng.random()
        if roll < 0.003:
            path = day / f"job-{n:06d}.log"
            kind = rng.choice(("empty", "binary", "cut"))
            day.mkdir(parents=True, exist_ok=True)
            if kind == "empty":
                path.write_bytes(b"")
            elif kind == "binary":
                path = path.with_suffix(".bin")
                path.write_bytes(b"PK\x03\x04" + bytes(2048) + rng.randbytes(2048))  # a checkpoint archive
            else:
                whole = gzip.compress(healthy(rng, 50_000, when).encode())
                path = path.with_name(path.name + ".gz")
                path.write_bytes(whole[: len(whole) // 2])
            counts["bad"] += 1
            os.utime(path, (when, when))
            continue
        is_failed = rng.random() < failed
        failure = rng.choice(texts) if is_failed else ""
        counts["failed"] += is_failed
        if rng.random() < 0.05:
            folder = day / f"job-{n:06d}"
            _rank_folder(folder, rng, failure, size, when, torchrun=rng.random() < 0.5)
            counts["rank folders"] += 1
            for path in folder.rglob("*"):
                os.utime(path, (when, when))
                counts["bytes"] += path.stat().st_size if path.is_file() else 0
            continue
        compress = rng.random() < 0.2
        path = day / f"job-{n:06d}.log"
        _write(path, healthy(rng, size, when) + failure, compress)
        written = path.with_name(path.name + ".gz") if compress else path
        os.utime(written, (when, when))
        counts["files"] += 1
        counts["gzip"] += compress
        counts["bytes"] += written.stat().st_size
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--failed", type=float, default=0.3, help="share of failed jobs")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every healthy log's size")
    parser.add_argument("--recordings", type=Path, action="append", default=[], help="e.g. shared/recordings")
    args = parser.parse_args()
    started = time.monotonic()
    counts = generate(args.out, args.jobs, args.seed, args.failed, args.scale, args.recordings)
    print(f"{args.jobs} jobs in {args.out} ({time.monotonic() - started:.0f} s): {counts}")


if __name__ == "__main__":
    main()
