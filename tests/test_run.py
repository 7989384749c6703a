"""`dtypefix run`: output passes through, the child's exit code comes back, signals reach the child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

DTYPEFIX = [sys.executable, "-m", "dtypefix.cli"]
MAT1 = "expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16"


def _run(*args: str, **kw) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, NO_COLOR="1", LANG="en_US.UTF-8")
    return subprocess.run([*DTYPEFIX, "run", "--", *args], capture_output=True, env=env, check=False, **kw)


def test_failure_is_streamed_then_explained_with_the_childs_exit_code() -> None:
    proc = _run(sys.executable, "-c", f"print('hello'); raise RuntimeError({MAT1!r})")
    assert proc.returncode == 1
    assert proc.stdout == b"hello\n"  # stdout untouched: the explanation goes to stderr
    err = proc.stderr.decode()
    assert err.index("RuntimeError: expected mat1") < err.index("# DTF001:")
    assert "DTF001" in err


def test_success_is_not_explained() -> None:
    proc = _run(sys.executable, "-c", "print('fine')")
    assert proc.returncode == 0 and proc.stdout == b"fine\n" and proc.stderr == b""


def test_exit_code_is_passed_through() -> None:
    proc = _run(sys.executable, "-c", "import sys; sys.exit(7)")
    assert proc.returncode == 7 and b"dtypefix" not in proc.stderr


def test_large_output_passes_through_byte_for_byte() -> None:
    code = "import sys; sys.stdout.write(('x' * 1023 + '\\n') * 20000); sys.stdout.write('tail\\r100%')"
    proc = _run(sys.executable, "-c", code)
    assert proc.returncode == 0
    assert len(proc.stdout) == 20000 * 1024 + len("tail\r100%") and proc.stdout.endswith(b"tail\r100%")


def test_missing_command_exits_127_like_a_shell() -> None:
    proc = _run("definitely-not-a-command-dtypefix")
    assert proc.returncode == 127 and b"cannot run" in proc.stderr and b"Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_non_executable_command_exits_126(tmp_path: Path) -> None:
    script = tmp_path / "not-executable.sh"
    script.write_text("echo hi\n", encoding="utf-8")
    proc = _run(str(script))
    assert proc.returncode == 126 and b"cannot run" in proc.stderr


def test_config_named_on_the_command_line_is_used(tmp_path: Path) -> None:
    ds = tmp_path / "ds.json"
    ds.write_text('{"bf16": {"enabled": true}, "zero_optimization": {"stage": 3, "zero_quantized_weights": true}}')
    script = f"import sys; raise RuntimeError({MAT1!r})"
    proc = _run(sys.executable, "-c", script, "--deepspeed", str(ds))
    assert "DTF200" in proc.stderr.decode()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_is_forwarded_to_the_child(tmp_path: Path) -> None:
    marker = tmp_path / "got-sigint"
    child = (
        "import signal, sys, time\n"
        f"def h(*a):\n    open({str(marker)!r}, 'w').write('yes'); sys.exit(42)\n"
        "signal.signal(signal.SIGINT, h)\nprint('ready', flush=True)\ntime.sleep(30)\n"
    )
    env = dict(os.environ, NO_COLOR="1")
    with subprocess.Popen(
        [*DTYPEFIX, "run", "--", sys.executable, "-c", child], stdout=subprocess.PIPE, env=env
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 42
    assert marker.read_text() == "yes"


def test_background_grandchildren_holding_the_pipe_do_not_delay_the_exit() -> None:
    import time as _time

    start = _time.monotonic()
    proc = _run("sh", "-c", "sleep 15 & exit 3")
    assert proc.returncode == 3 and _time.monotonic() - start < 10


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_usr1_is_forwarded_to_the_child(tmp_path: Path) -> None:
    import signal as _signal
    import time as _time

    marker = tmp_path / "got-usr1"
    code = (
        "import signal, sys, time, pathlib\n"
        f"signal.signal(signal.SIGUSR1, lambda *a: (pathlib.Path({str(marker)!r}).write_text('x'), sys.exit(5)))\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.Popen(
        [*DTYPEFIX, "run", "--", sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    _time.sleep(0.3)
    proc.send_signal(_signal.SIGUSR1)
    assert proc.wait(timeout=20) == 5 and marker.exists()


def test_a_second_term_escalates_to_kill(tmp_path: Path, monkeypatch) -> None:
    import signal as _signal
    import time as _time

    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(60)\n"
    env = dict(__import__("os").environ)
    script = (
        "import sys; from dtypefix.cli import runner; runner.KILL_GRACE = 0.5\n"
        "from dtypefix.cli.app import main\n"
        f"sys.exit(main(['run', '--', {sys.executable!r}, '-c', {code!r}]))\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as proc:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        proc.send_signal(_signal.SIGTERM)
        _time.sleep(0.3)
        proc.send_signal(_signal.SIGTERM)
        assert proc.wait(timeout=20) == 128 + _signal.SIGKILL


def test_a_term_that_arrives_while_the_child_starts_reaches_the_child(monkeypatch) -> None:
    """The handlers are in place before the child starts: a TERM in that window is held, then forwarded."""
    from dtypefix.cli import runner

    real_popen = subprocess.Popen

    def popen_after_a_term(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # lands while dtypefix is still starting the child
        return real_popen(*args, **kwargs)

    monkeypatch.setattr(runner.subprocess, "Popen", popen_after_a_term)
    started = time.monotonic()
    result = runner.run_command([sys.executable, "-c", "import time; time.sleep(30)"])
    assert result.returncode == 128 + signal.SIGTERM
    assert time.monotonic() - started < 20
