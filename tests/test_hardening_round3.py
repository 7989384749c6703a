"""Issue 24 (round three): each finding of the attack, held by a test. The matrix in docs/performance.md names
these tests; bench/hardening_bench.py prints the before/after figures."""

from __future__ import annotations

import io
import json
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


# ------------------------------------------------------------------------------------------------ item 10: input
class _Endless(io.RawIOBase):
    """Random bytes for ever, as /dev/urandom gives them; counts what was read."""

    def __init__(self) -> None:
        self.given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def,override]
        n = len(buffer)
        buffer[:n] = os.urandom(n)
        self.given += n
        if self.given > 64 << 20:
            raise AssertionError("binary input was read past 64 MB")
        return n


def test_endless_binary_input_is_refused_within_the_first_megabytes(monkeypatch: pytest.MonkeyPatch) -> None:
    from dtypefix.cli import inputs

    endless = _Endless()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(endless)))
    with pytest.raises(inputs.InputError, match="binary data"):
        inputs.read_log(None)
    assert endless.given <= 4 << 20


@pytest.mark.parametrize(
    ("name", "text"),
    [("big.json", '{"train_batch_size": ' + "9" * 5000 + "}\n"), ("big.yaml", "train_batch_size: " + "9" * 5000)],
)
def test_a_5000_digit_integer_in_config_is_an_input_error(cli, tmp_path: Path, name: str, text: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = cli("explain", "--config", str(path), stdin=MAT1.encode())
    assert result.code == 2
    assert result.err.startswith("dtypefix: error: config") and "internal error" not in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_a_flood_of_rank_prefixed_errors_is_listed_bounded(cli) -> None:  # type: ignore[no-untyped-def]
    flood = "".join(f"[rank{i % 8}]: {MAT1.rstrip()} step {i}\n" for i in range(3000))
    result = cli("explain", "--format", "json", stdin=flood.encode())
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["matches"][0]["id"] == "DTF001"
    assert 0 < len(data["extracted"]["error_lines"]) + len(data["extracted"]["exceptions"]) <= 400


@pytest.mark.parametrize("fmt", ["md", "term", "html"])
def test_c1_controls_and_bidi_overrides_never_reach_output(cli, fmt: str) -> None:  # type: ignore[no-untyped-def]
    log = "RuntimeError: expected mat1 and mat2 \u009b31m to have\u009d8;;x\u009c the same dtype \u202eevil\u2066\n"
    for message in (log, "ValueError: no entry knows this \u009b2J\u202e\n"):
        result = cli("explain", "--format", fmt, stdin=message.encode())
        assert result.code in (0, 1), result.err
        assert not any(ch in result.out for ch in "\u009b\u009d\u009c\u202e\u2066"), ascii(result.out)


def test_carriage_return_only_logs_are_explained(cli) -> None:  # type: ignore[no-untyped-def]
    log = 'Traceback (most recent call last):\r  File "train.py", line 9, in <module>\r    y = a @ b\r' + MAT1
    result = cli("explain", "--format", "json", stdin=log.replace("\n", "\r").encode())
    assert result.code == 0, result.err
    assert json.loads(result.out)["matches"][0]["id"] == "DTF001"


def test_a_5000_deep_exception_group_finishes() -> None:
    from dtypefix.matcher.explain import explain

    lines = ["  + Exception Group Traceback (most recent call last):", '  |   File "t.py", line 6, in <module>']
    for level in range(5000):
        pad = "  " * min(level, 20)
        lines += [f"  {pad}| ExceptionGroup: level {level} (1 sub-exception)", f"  {pad}+-+---------- 1 ----------"]
    lines.append("  " * 21 + "| " + MAT1.rstrip())
    report = explain("\n".join(lines) + "\n")
    assert report.matches and report.matches[0].entry.id == "DTF001"
