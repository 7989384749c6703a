"""Issue 24 (round three): each finding of the attack, held by a test. The matrix in docs/performance.md names
these tests; bench/hardening_bench.py prints the before/after figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DTYPEFIX = [sys.executable, "-m", "dtypefix.cli"]
MAT1 = "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16\n"


def _env() -> dict[str, str]:
    return dict(os.environ, NO_COLOR="1", LANG="en_US.UTF-8")


# ------------------------------------------------------------------------------------------- item 8: run's stdout
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_run_with_stdout_on_a_full_disk_returns_the_childs_status() -> None:
    child = "import sys, time; print('x' * 70000); sys.stdout.flush(); time.sleep(0.2); print('more'); sys.exit(3)"
    with Path("/dev/full").open("wb") as full:
        proc = subprocess.run(
            [*DTYPEFIX, "run", "--", sys.executable, "-c", child],
            stdout=full,
            stderr=subprocess.PIPE,
            env=_env(),
            timeout=60,
            check=False,
        )
    assert proc.returncode == 3, proc.stderr
    assert b"Traceback" not in proc.stderr


def test_run_with_stdout_closed_still_starts_the_child(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    child = f"import pathlib, sys; print('out'); pathlib.Path({str(marker)!r}).write_text('yes'); sys.exit(3)"
    proc = subprocess.run(
        [*DTYPEFIX, "run", "--", sys.executable, "-c", child],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(),
        timeout=60,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert marker.read_text() == "yes"
    assert proc.returncode == 3, proc.stderr
    assert b"Traceback" not in proc.stderr
