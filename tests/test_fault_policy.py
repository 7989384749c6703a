"""One policy for failures of dtypefix itself (issue 12, item 4): one line on stderr, exit 2 — never a traceback,
never exit 1 (which means "no known cause") — and under ``run`` always the child's own status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dtypefix.cli import app as app_module
from dtypefix.cli import settings as settings_module
from dtypefix.matcher import catalog as catalog_module

ROOT = Path(__file__).resolve().parents[1]
MAT1 = "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16\n"

COMMANDS = [
    ["explain", "-"],
    ["check", "--flags", "--bf16 True"],
    ["show", "DTF001"],
    ["search", "mat1"],
    ["lint", str(ROOT / "kb" / "family" / "mat1-mat2-dtype.yaml")],
    ["docs", "--check"],
    ["report", "-"],
]


class Boom(RuntimeError):
    pass


@pytest.mark.parametrize("argv", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_an_injected_fault_is_one_line_and_exit_2(argv, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    def broken(*args, **kwargs):
        raise Boom("injected fault")

    monkeypatch.setattr(settings_module, "load_catalog", broken)
    monkeypatch.setattr(catalog_module, "load_catalog", broken)
    monkeypatch.setattr(sys, "stdin", __import__("io").TextIOWrapper(__import__("io").BytesIO(MAT1.encode())))
    code = app_module.main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "internal error" in lines[0] and "Traceback" not in err


def test_run_returns_the_childs_status_even_when_the_explanation_fails(tmp_path: Path) -> None:
    script = tmp_path / "fail.py"
    script.write_text(f"import sys; print({MAT1!r}, file=sys.stderr); sys.exit(3)\n", encoding="utf-8")
    env = {"DTYPEFIX_KB": str(tmp_path / "kb"), "PATH": "/usr/bin:/bin"}
    (tmp_path / "kb").mkdir()
    boom = tmp_path / "kb" / "boom.py"  # not an entry; the fault comes from the patched loader below
    boom.write_text("", encoding="utf-8")
    code = (
        "import sys; from dtypefix.cli import app, settings\n"
        "def broken(*a, **k): raise RuntimeError('injected')\n"
        "settings.load_catalog = broken\n"
        f"sys.exit(app.main(['run', '--', {sys.executable!r}, {str(script)!r}]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 3, proc.stderr
    assert "internal error" in proc.stderr and "Traceback" not in proc.stderr


def _dtypefix(*args: str, **kw) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "dtypefix.cli", *args], capture_output=True, check=False, **kw)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_non_utf8_stdout_degrades_characters_instead_of_failing(encoding: str, tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    log.write_text(MAT1, encoding="utf-8")
    env = {**__import__("os").environ, "PYTHONIOENCODING": encoding}
    proc = _dtypefix("explain", str(log), "--lang", "zh", "--format", "md", env=env)
    assert proc.returncode == 0 and b"DTF001" in proc.stdout, proc.stderr


def test_a_full_disk_on_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("/dev/full is not available here")
    log = tmp_path / "m.log"
    log.write_text(MAT1, encoding="utf-8")
    with Path("/dev/full").open("wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "dtypefix.cli", "explain", str(log), "--format", "md"],
            stdout=full,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert proc.returncode == 2 and proc.stderr.decode().count("\n") == 1 and b"Traceback" not in proc.stderr


def test_a_closed_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    log.write_text(MAT1, encoding="utf-8")
    proc = subprocess.run(
        f"{sys.executable} -m dtypefix.cli explain {log} --format md >&-", shell=True, capture_output=True, check=False
    )
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr and proc.stderr.decode().count("\n") == 1
