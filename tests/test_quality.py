"""Code quality gates: ruff (lint and format) and mypy --strict over the mapped `dtypefix.*` packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_ruff_is_clean() -> None:
    ruff = _tool("ruff")
    assert subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True, check=False).returncode == 0
    fmt = subprocess.run([ruff, "format", "--check", "."], cwd=ROOT, capture_output=True, text=True, check=False)
    assert fmt.returncode == 0, fmt.stdout


def test_mypy_strict_is_clean(tmp_path: Path) -> None:
    mypy = _tool("mypy")
    view = tmp_path / "dtypefix"
    view.mkdir()
    for package in ("matcher", "kbtools", "cli", "kb"):
        (view / package).symlink_to(ROOT / package, target_is_directory=True)
    env = dict(os.environ, MYPYPATH=str(tmp_path))
    run = subprocess.run(
        [
            mypy,
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "-p",
            "dtypefix.matcher",
            "-p",
            "dtypefix.kbtools",
            "-p",
            "dtypefix.cli",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
