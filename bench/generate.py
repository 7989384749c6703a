"""Synthetic inputs for the benchmarks: a typical traceback, big multi-rank logs, and big KBs."""

from __future__ import annotations

import random
from pathlib import Path

TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/home/user/LLaMA-Factory/src/llamafactory/launcher.py", line 23, in <module>',
    "    launch()",
    '  File "/home/user/LLaMA-Factory/src/llamafactory/train/tuner.py", line 50, in run_exp',
    "    run_sft(model_args, data_args, training_args, finetuning_args, generating_args, callbacks)",
    '  File "/home/user/.venv/lib/python3.11/site-packages/transformers/trainer.py", line 2052, in train',
    "    return inner_training_loop(",
    '  File "/home/user/.venv/lib/python3.11/site-packages/transformers/trainer.py", line 3485, in training_step',
    "    loss = self.compute_loss(model, inputs)",
    '  File "/home/user/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1553, in _wrapped_call_impl',
    "    return self._call_impl(*args, **kwargs)",
    '  File "/home/user/.venv/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 117, in forward',
    "    return F.linear(input, self.weight, self.bias)",
    "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16",
]


def write_traceback(path: Path) -> Path:
    """A typical 60-line failure: launcher chatter, a progress bar, the traceback on one rank."""
    lines = [
        f"[2024-06-01 10:00:{i:02d},000] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda"
        for i in range(20)
    ]
    lines += [
        f"  {p}%|{'█' * (p // 10)}{' ' * (10 - p // 10)}| {p}/100 [00:{p:02d}<01:00, 1.2it/s]" for p in range(0, 100, 5)
    ]
    lines += [f"[rank0]: {line}" for line in TRACEBACK]
    lines += ["[2024-06-01 10:01:00,000] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 4242"] * 6
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_log(path: Path, size: int, *, middle: bool = False) -> Path:
    """``size`` bytes of an 8-rank log with tqdm carriage returns, the traceback near the end (or, with
    ``middle``, halfway, followed by as much progress output again)."""
    rng = random.Random(0)
    block = []
    for step in range(200):
        rank = rng.randrange(8)
        block.append(
            f"[default{rank}]:{{'loss': {rng.random():.4f}, 'grad_norm': {rng.random() * 3:.3f}, 'learning_rate': 2e-05, 'epoch': 0.{step}}}\n"
        )
        block.append(f"[rank{rank}]: {step % 100:3d}%|██▍       | {step}/1000 [00:{step % 60:02d}<12:00,  1.31it/s]\r")
        if step % 50 == 0:
            block.append(
                f"[2024-06-01 10:{step % 60:02d}:00,000] [INFO] [logging.py:96:log_dist] [Rank {rank}] step={step}, skipped=0\n"
            )
    chunk = "".join(block).encode()
    tail = "".join(f"[rank{r}]: {line}\n" for r in range(8) for line in TRACEBACK).encode()
    with path.open("wb") as handle:
        written = 0
        while written < (size // 2 if middle else size - len(tail) - 4096):
            handle.write(chunk)
            written += len(chunk)
        handle.write(tail)
        while middle and written < size - len(tail) - 4096:
            handle.write(chunk)
            written += len(chunk)
        handle.write(b"[2024-06-01 11:00:00,000] [ERROR] [launch.py:325:sigkill_handler] exits with return code = 1\n")
    return path


TEMPLATE = """id: DTF{number}
title:
  en: Synthetic failure {n}
  zh: 合成的失败 {n}
kind: cause
family: other
tags: [synthetic]
severity: error
status: active
match:
  errors:
    - type: RuntimeError
      message: 'synthetic failure number {n} in module_{n} \\(code (?P<code>\\d+)\\)'
      weight: 4
  log:
    - pattern: 'module_{n} loaded'
      weight: 1
  packages:
    - name: synthetic-pkg-{n}
      spec: '<1.0'
      weight: 2
explanation:
  cause:
    en: Synthetic cause {n}.
    zh: 合成原因 {n}。
  fix:
    - en: Synthetic fix {n}.
      zh: 合成修复 {n}。
  does_not_help:
    - en: Synthetic non-fix {n}.
      zh: 合成的无效做法 {n}。
references:
  - url: https://example.com/{n}
    title: synthetic
examples:
  - input: a.log
    source: https://example.com/{n}
  - input: b.log
    source: https://example.com/{n}
counter_examples:
  - input: c.log
    source: https://example.com/{n}
"""


def synthetic_kb(root: Path, count: int) -> Path:
    """A private KB folder with ``count`` distinct, schema-valid entries (ids DTF1000...)."""
    area = root / "synthetic"
    area.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (area / f"synthetic-{n}.yaml").write_text(TEMPLATE.format(number=1000 + n, n=n), encoding="utf-8")
    return root
