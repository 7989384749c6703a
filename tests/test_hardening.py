"""Bad input never crashes dtypefix: clear one-line messages, the right exit codes, bounded work."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DTYPEFIX = [sys.executable, "-m", "dtypefix.cli"]
MAT1 = b"RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16\n"


def _run(args: list[str], stdin: bytes | None = None, **kw) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, NO_COLOR="1", LANG="en_US.UTF-8")
    return subprocess.run([*DTYPEFIX, *args], input=stdin, capture_output=True, env=env, check=False, **kw)


def _no_traceback(proc: subprocess.CompletedProcess[bytes]) -> None:
    assert b"Traceback (most recent call last)" not in proc.stderr, proc.stderr.decode(errors="replace")


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (os.urandom(200_000), 2),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 5000, 2),
        (b"", 2),
        (b"  \n\n\t\n", 2),
        (b"\xfa\xfb invalid utf-8 \xc3\x28 \xff" + MAT1, 0),
        (MAT1.replace(b"\n", b"\r\n") * 3, 0),
        (b"noise\x00\x00" + MAT1, 0),
    ],
    ids=["random-bytes", "png", "empty", "whitespace", "invalid-utf8", "crlf", "nul-bytes"],
)
def test_odd_bytes(data: bytes, code: int) -> None:
    proc = _run(["explain", "--format", "json"], stdin=data)
    assert proc.returncode == code, proc.stderr
    _no_traceback(proc)
    if code == 0:
        assert json.loads(proc.stdout)["matches"][0]["id"] == "DTF001"
    else:
        assert proc.stderr.count(b"\n") == 1  # one line


@pytest.mark.slow
def test_a_100mb_single_line(tmp_path: Path) -> None:
    big = tmp_path / "one-line.log"
    with big.open("wb") as handle:
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            handle.write(chunk)
        handle.write(b" " + MAT1)
    proc = _run(["explain", str(big), "--format", "json"], timeout=120)
    _no_traceback(proc)
    assert proc.returncode in (0, 1)
    json.loads(proc.stdout)


def test_stdin_closed_early_and_output_into_head() -> None:
    env = dict(os.environ, NO_COLOR="1")
    producer = subprocess.Popen(
        ["bash", "-c", f"{' '.join(DTYPEFIX)} explain --lang both --format md | head -n 2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    out, err = producer.communicate(MAT1 * 200, timeout=60)
    assert len(out.splitlines()) == 2
    assert b"BrokenPipe" not in err and b"Traceback" not in err


def test_ctrl_c_exits_130_without_traceback() -> None:
    env = dict(os.environ, NO_COLOR="1")
    # stdin stays open and empty, so dtypefix blocks reading it; SIGINT must end it cleanly.
    with subprocess.Popen(
        [*DTYPEFIX, "explain", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as proc:
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert b"Traceback" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path: Path) -> None:
    locked = tmp_path / "locked.log"
    locked.write_bytes(MAT1)
    locked.chmod(0)
    proc = _run(["explain", str(locked)])
    assert proc.returncode == 2 and b"permission denied" in proc.stderr


def test_missing_file() -> None:
    proc = _run(["explain", "/no/such/file.log"])
    assert proc.returncode == 2 and b"no such file" in proc.stderr
    _no_traceback(proc)


@pytest.mark.parametrize(
    "config",
    [
        "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"b{i}: &b{i} [*{'a' if i == 0 else f'b{i - 1}'}, *{'a' if i == 0 else f'b{i - 1}'}]\n" for i in range(80)
        ),
        "a: " + "[" * 20000 + "]" * 20000 + "\n",
        '{"zero_optimization": ' * 5000 + "1" + "}" * 5000,
        "\x00\x01binary",
        "this is: [not: valid",
    ],
    ids=["alias-bomb", "deep-yaml", "deep-json", "binary", "broken-yaml"],
)
def test_malicious_or_broken_config(tmp_path: Path, config: str) -> None:
    path = tmp_path / "evil.yaml"
    path.write_text(config, encoding="utf-8")
    proc = _run(["explain", "--config", str(path)], stdin=MAT1, timeout=60)
    assert proc.returncode == 2
    assert b"config" in proc.stderr and proc.stderr.count(b"\n") == 1
    _no_traceback(proc)


def test_hostile_kb_regex_is_rejected_at_load(tmp_path: Path) -> None:
    source = ROOT / "kb" / "family" / "mat1-mat2-dtype.yaml"
    area = tmp_path / "kb" / "evil"
    area.mkdir(parents=True)
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["id"] = "DTF990"
    data["match"]["errors"][0]["message"] = "(?=x)" + data["match"]["errors"][0]["message"]
    (area / "lookahead.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    (area / "garbage.yaml").write_text(": : :\n  - [", encoding="utf-8")
    proc = _run(["explain", "--kb", str(tmp_path / "kb"), "--format", "json"], stdin=MAT1)
    assert proc.returncode == 0
    assert b"lookahead.yaml" in proc.stderr and b"RE2 cannot compile" in proc.stderr
    assert b"garbage.yaml" in proc.stderr
    data = json.loads(proc.stdout)
    assert all(m["id"] != "DTF990" for m in data["matches"])
    _no_traceback(proc)


def test_backtracking_bomb_in_the_input_is_linear() -> None:
    # A line that makes naive backtracking regexes explode: many dots and word characters, no exception suffix.
    evil = (b"a." * 200_000) + b"\n" + (b"x" * 2_000_000) + b"\n" + MAT1
    proc = _run(["explain", "--format", "json"], stdin=evil, timeout=60)
    assert proc.returncode == 0
    _no_traceback(proc)


def test_commands_open_no_network_socket(
    cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, small_checkout: Path
) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("dtypefix tried to open a network socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    assert cli("explain", "--format", "json", "--this-env", stdin=MAT1).code == 0
    assert cli("search", "unscale fp16", "--format", "json").code == 0
    assert cli("check", "--config", str(ROOT / "tests/data/clean-zero3-bf16.json"), "--format", "json").code == 0
    docs = ("docs", "--out", str(tmp_path / "docs"), "--html", str(tmp_path / "site"), "--kb-root", str(small_checkout))
    assert cli(*docs).code == 0
    assert cli("report", "--format", "json", stdin=MAT1).code == 0


def test_config_and_freeze_reads_are_bounded(cli, tmp_path) -> None:
    """`/dev/zero` and a huge file given as --config or --freeze are refused after a bounded read (issue 12, 7)."""
    big = tmp_path / "train.json"
    with big.open("wb") as handle:
        handle.write(b"{" + b" " * (20 << 20) + b"}")
    for option, target in (("--config", "/dev/zero"), ("--freeze", "/dev/zero"), ("--config", str(big))):
        if not Path(target).exists():
            continue
        result = cli("explain", option, target, stdin=b"RuntimeError: expected mat1 and mat2\n")
        assert result.code == 2 and len(result.err.strip().splitlines()) == 1, result.err


def test_docs_out_removes_only_pages_it_generated(cli, tmp_path, small_checkout) -> None:
    out = tmp_path / "site"
    out.mkdir()
    mine = out / "notes.md"
    mine.write_text("# my own notes\n", encoding="utf-8")
    stale = out / "entries" / "DTF999.md"
    stale.parent.mkdir()
    stale.write_text(
        "<!-- Generated by `dtypefix docs` from kb/. Do not edit: run `dtypefix docs` instead. -->\n\nold\n",
        encoding="utf-8",
    )
    assert cli("docs", "--out", str(out), "--kb-root", str(small_checkout)).code == 0
    assert mine.exists() and not stale.exists()


def test_docs_does_not_publish_dtypefix_kb_unless_asked(cli, tmp_path, monkeypatch, small_checkout) -> None:
    message = "ValueError: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."
    root = tmp_path / "kb"
    root.mkdir()
    (root / "ids.txt").write_text("", encoding="utf-8")
    assert (
        cli("new", "--kb-root", str(root), "--area", "devices", "--title", "Private thing", "--message", message).code
        == 0
    )
    monkeypatch.setenv("DTYPEFIX_KB", str(root))
    out = tmp_path / "site"
    assert cli("docs", "--out", str(out), "--kb-root", str(small_checkout)).code == 0
    assert not any("Private thing" in p.read_text(encoding="utf-8") for p in out.rglob("*.md"))


def test_html_never_embeds_remote_images() -> None:
    from dtypefix.cli.render import markdown_to_html

    page = markdown_to_html("![x](https://evil.example/track.png) <img src=https://evil.example/a.png>")
    assert "<img" not in page
