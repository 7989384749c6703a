"""Run a reproducer the way a user does and keep what the terminal showed (stdout and stderr merged)."""

from __future__ import annotations

import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from cases import Case

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded"
LIBRARIES = ("torch", "numpy", "transformers", "accelerate", "peft", "deepspeed", "liger_kernel", "triton")


@dataclass(frozen=True)
class Run:
    output: str
    """stdout and stderr merged, as a terminal shows them."""
    returncode: int
    command: str
    """The command as a user would type it (the script is named after the case)."""


def missing(case: Case) -> list[str]:
    """Modules the case needs that this interpreter cannot import."""
    return [name for name in ("torch", *case.needs) if importlib.util.find_spec(name) is None]


def run(case: Case, workdir: Path, timeout: float = 300) -> Run:
    script = workdir / f"{case.name.replace('-', '_')}.py"
    script.write_text(case.script, encoding="utf-8")
    if case.nproc:
        torchrun = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or "torchrun"
        argv = [torchrun, "--standalone", f"--nproc-per-node={case.nproc}", script.name]
        shown = f"torchrun --standalone --nproc-per-node={case.nproc} {script.name}"
    else:
        argv = [sys.executable, script.name]
        shown = f"python {script.name}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **dict(case.env)}
    done = subprocess.run(
        argv, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, check=False
    )
    text = done.stdout.decode("utf-8", errors="replace")
    # Anonymise the paths a user would scrub before pasting: the work folder and this machine's home.
    text = text.replace(str(workdir), "/home/user/repro")
    text = text.replace(sys.prefix, "/home/user/.venv")
    text = re.sub(r"/(?:home|Users)/[^/\s\"']+", "/home/user", text)
    text = re.sub(r"/root(?=/)", "/home/user", text)
    return Run(text, done.returncode, " ".join(f"{k}={v}" for k, v in case.env) + (" " if case.env else "") + shown)


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name.replace("_", "-")] = version(name.replace("_", "-"))
        except PackageNotFoundError:
            continue
    return out


def hardware(device: str) -> dict[str, str]:
    """GPU name and driver for cuda cases; the CPU for cpu cases."""
    if device == "cpu":
        return {"device": "cpu", "cpu": platform.processor() or platform.machine()}
    import torch

    info = {"device": "cuda", "gpu": torch.cuda.get_device_name(0), "cuda": str(torch.version.cuda)}
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            check=False,
        )
        info["driver"] = smi.stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        info["driver"] = "unknown"
    return info
