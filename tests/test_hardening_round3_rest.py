"""Issue 24 item 10, the cases that had no test yet: a relative XDG_CACHE_HOME, an unreadable DTYPEFIX_KB folder
(as another user when root, since root reads any folder), binary input named as a file refused on its first
chunk."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from dtypefix.cli.inputs import InputError, read_log
from dtypefix.matcher.catalog import default_cache_dir, load_catalog

OTHER_UID = 12345


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DTYPEFIX_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert default_cache_dir() == tmp_path / ".cache" / "dtypefix"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "abs"))
    assert default_cache_dir() == tmp_path / "abs" / "dtypefix"


def _private_kb(root: Path) -> Path:
    kb = root / "kb"
    (kb / "area").mkdir(parents=True)
    (kb / "area" / "x.yaml").write_text("id: DTF999\n", encoding="utf-8")
    return kb


def _as_other() -> None:
    os.setgid(OTHER_UID)
    os.setuid(OTHER_UID)


def test_an_unreadable_private_kb_folder_is_reported_not_skipped(tmp_path: Path) -> None:
    """Unreadable to the user who runs dtypefix: mode 000 for an ordinary user; for root (who reads any folder)
    a 0700 folder of root's read by a second user, uid 12345, in a child process."""
    kb = _private_kb(tmp_path)
    if os.getuid() != 0:
        kb.chmod(0)
        try:
            problems = load_catalog([kb], include_builtin=False).problems
        finally:
            kb.chmod(0o755)
        assert any(str(kb) in p and "cannot be read" in p for p in problems), problems
        return
    with tempfile.TemporaryDirectory() as shared:  # pytest's own tmp_path sits in a folder closed to others
        Path(shared).chmod(0o755)
        _check_as_other_user(_private_kb(Path(shared)))


def _check_as_other_user(kb: Path) -> None:
    kb.chmod(0o700)
    for folder in kb.parents:
        if folder.stat().st_mode & 0o001 == 0:
            pytest.skip(f"uid {OTHER_UID} cannot reach {kb} ({folder} is closed to others)")
    try:
        probe = subprocess.run([sys.executable, "-c", "import dtypefix.matcher"], preexec_fn=_as_other, check=False)
    except PermissionError:
        probe = None
    if probe is None or probe.returncode != 0:
        pytest.skip(f"uid {OTHER_UID} cannot run this interpreter or import dtypefix (it lives in a private folder)")
    script = (
        "import os, sys; from pathlib import Path; from dtypefix.matcher.catalog import load_catalog;"
        "print(os.getuid()); print(*load_catalog([Path(sys.argv[1])], include_builtin=False).problems, sep='\\n')"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(kb)],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=_as_other,
        env={**os.environ, "HOME": str(kb.parent), "DTYPEFIX_CACHE_DIR": ""},
    )
    assert run.returncode == 0, run.stderr
    uid, *problems = run.stdout.splitlines()
    assert uid == str(OTHER_UID)
    assert any(str(kb) in p and "cannot be read" in p for p in problems), run.stdout


def test_a_named_endless_binary_file_is_refused_on_its_first_chunk(tmp_path: Path) -> None:
    """A FIFO fed random bytes for ever stands for ``explain /dev/urandom``; the writer counts what was taken."""
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    written = [0]

    def feed() -> None:
        try:
            with fifo.open("wb") as out:
                while written[0] < 256 << 20:
                    out.write(os.urandom(1 << 16))
                    written[0] += 1 << 16
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    with pytest.raises(InputError, match="binary data"):
        read_log(str(fifo))
    writer.join(timeout=30)
    assert not writer.is_alive()
    assert written[0] <= 8 << 20, f"{written[0]} bytes read before refusing"


def test_explain_dev_urandom_exits_2_at_once(cli) -> None:  # type: ignore[no-untyped-def]
    if not Path("/dev/urandom").exists():
        pytest.skip("needs /dev/urandom")
    result = cli("explain", "/dev/urandom")
    assert result.code == 2 and "binary" in result.err and "Traceback" not in result.err


MAT1_TRACEBACK = (
    'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    y = a @ b\n'
    "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16\n"
)


@pytest.mark.parametrize("command", ["explain", "report"])
def test_a_traceback_then_80000_blanks_is_explained(cli, command: str) -> None:  # type: ignore[no-untyped-def]
    """Issue 24 item 2 end to end: ``' ' * 80000 + 'x'`` after a traceback took 69 s in explain and report."""
    result = cli(command, stdin=(MAT1_TRACEBACK + " " * 80_000 + "x\n").encode())
    assert result.code == 0, result.err
    assert "DTF001" in result.out


def test_embedded_config_lines_with_a_long_blank_run_are_linear() -> None:
    """Issue 24 item 2, the YAML-line pattern of matcher/configs.py: a line of 200,000 blanks and an ``x`` among
    config lines (at 2440f7e: 1.3 s for 10,000 blanks, four times that for each doubling)."""
    from dtypefix.matcher.configs import find_embedded

    text = "bf16:\n  enabled: true\n" + " " * 200_000 + "x\nzero_optimization:\n  stage: 3\n"
    assert [c.data.get("zero_optimization") for c in find_embedded(text)] == [{"stage": 3}]


def test_an_unreadable_area_folder_inside_a_private_kb_is_reported(tmp_path: Path, monkeypatch) -> None:
    """An area folder that cannot be listed (permissions; root reads anything, so the refusal is simulated at the
    system call) is named in one problem line, not skipped without a word."""
    import os

    from dtypefix.matcher import catalog as catalog_module

    kb = tmp_path / "kb"
    (kb / "private").mkdir(parents=True)
    (kb / "other").mkdir()
    real = os.scandir

    def scandir(path):  # the only difference from the real call: this folder refuses to be listed
        if str(path) == str(kb / "private"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(catalog_module.os, "scandir", scandir)
    catalog = catalog_module.load_catalog([kb], include_builtin=False, cache_dir=None)
    assert any("private" in p and "cannot be read" in p for p in catalog.problems), catalog.problems
