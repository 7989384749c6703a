"""The command line end to end: exit codes, formats, languages, and bad input without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "zeropp-bf16.log"
SAMPLE_CONFIG = ROOT / "examples" / "zeropp-bf16.ds.json"
SCHEMA = json.loads((ROOT / "docs" / "json-output.schema.json").read_text(encoding="utf-8"))
MAT1 = b"RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16\n"


def test_explain_sample_with_config_finds_the_seed_cause(cli) -> None:
    result = cli("explain", str(SAMPLE), "--config", str(SAMPLE_CONFIG), "--format", "md")
    assert result.code == 0
    assert result.out.startswith("# DTF200: ZeRO++")
    assert "**High confidence**" in result.out


def test_explain_reads_stdin_and_asks_for_the_deciding_input(cli) -> None:
    result = cli("explain", "--format", "md", stdin=MAT1)
    assert result.code == 0
    first = result.out.splitlines()[0]
    assert first.startswith("# DTF001") and "mat1 and mat2" in first  # the message-family explanation comes first
    assert "To decide between the candidates, add" in result.out
    assert "--config ds_config.json" in result.out


def test_json_output_validates_against_the_documented_schema(cli) -> None:
    result = cli("explain", str(SAMPLE), "--config", str(SAMPLE_CONFIG), "--format", "json")
    data = json.loads(result.out)
    jsonschema.validate(data, SCHEMA)
    assert data["matches"][0]["id"] == "DTF200"
    assert data["extracted"]["configs"] == [{"kind": "deepspeed", "origin": "zeropp-bf16.ds.json"}]


def test_no_known_cause_is_exit_1_and_still_valid_json(cli) -> None:
    result = cli(
        "explain",
        "--format",
        "json",
        stdin=b"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'foo'\n",
    )
    assert result.code == 1
    data = json.loads(result.out)
    jsonschema.validate(data, SCHEMA)
    assert data["found"] is False and data["error"]["type"] == "KeyError"


def test_no_known_cause_in_markdown(cli) -> None:
    result = cli("explain", "--format", "md", stdin=b"ValueError: something unrelated\n")
    assert result.code == 1
    assert "no known cause" in result.out and "dtypefix search" in result.out


@pytest.mark.parametrize("lang", ["zh", "both"])
def test_chinese_output(cli, lang: str) -> None:
    result = cli("explain", str(SAMPLE), "--config", str(SAMPLE_CONFIG), "--format", "md", "--lang", lang)
    assert "高置信度" in result.out and "解决方法" in result.out and "你的 DeepSpeed 配置设置了" in result.out
    assert ("High confidence" in result.out) is (lang == "both")


def test_language_defaults_to_the_locale(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert "原因" in cli("explain", "--format", "md", stdin=MAT1).out


def test_html_format(cli) -> None:
    result = cli("explain", str(SAMPLE), "--format", "html")
    assert result.out.startswith("<!doctype html>") and "<h1>" in result.out


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["explain"], b"", "empty input"),
        (["explain"], b"\x00\x01\x02\x03" * 1000, "binary"),
        (["explain", "/nonexistent/log.txt"], None, "no such file"),
        (["explain", str(ROOT)], None, "is a directory"),
        (["explain", "--config", str(ROOT / "README.md")], MAT1, "config"),
        (["explain", "--freeze", "/nonexistent"], MAT1, "no such file"),
        (["explain", "--format", "xml"], MAT1, "xml"),
    ],
    ids=["empty", "binary", "missing", "directory", "bad-config", "missing-freeze", "bad-format"],
)
def test_bad_input_is_one_line_and_exit_2(cli, args: list[str], stdin: bytes | None, message: str) -> None:
    result = cli(*args, stdin=stdin)
    assert result.code == 2
    assert message in result.err
    assert "Traceback" not in result.err + result.out


def test_show_renders_an_entry(cli) -> None:
    result = cli("show", "DTF001", "--format", "md")
    assert result.code == 0 and result.out.startswith("# DTF001:")
    data = json.loads(cli("show", "dtf001", "--format", "json").out)
    assert data["id"] == "DTF001" and data["title"]["zh"]


def test_top_limits_full_explanations(cli) -> None:
    result = cli("explain", "--format", "md", "--top", "1", "--details", stdin=MAT1)
    assert "\n## Cause" in result.out and result.out.count("\n## Cause") == 1 and "**Also possible:**" in result.out
    two = cli("explain", "--format", "md", "--top", "2", "--details", stdin=MAT1)
    assert two.out.count("\n## Cause") == 2


def test_default_view_is_the_verdict_and_details_add_the_rest(cli) -> None:
    short = cli("explain", str(SAMPLE), "--config", str(SAMPLE_CONFIG), "--format", "md").out
    full = cli("explain", str(SAMPLE), "--config", str(SAMPLE_CONFIG), "--format", "md", "--details").out
    assert "**Because:**" in short and "**Fix:**" in short and "## References" not in short
    assert "## References" in full and "## Does not help" in full and "## Why dtypefix thinks so" in full


def test_this_env_reads_installed_packages(cli) -> None:
    data = json.loads(cli("explain", "--this-env", "--format", "json", stdin=MAT1).out)
    assert "pyyaml" in data["extracted"]["packages"]


def test_python_dash_m_and_console_script() -> None:
    run = subprocess.run([sys.executable, "-m", "dtypefix.cli", "--help"], capture_output=True, text=True, check=False)
    assert run.returncode == 0 and "explain" in run.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "dtypefix.cli", "explain", "--format", "json"],
        input=MAT1,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)["matches"]


def test_terminal_format_obeys_no_color(cli) -> None:
    result = cli("explain", str(SAMPLE), "--config", str(SAMPLE_CONFIG), "--format", "term")
    assert result.code == 0 and "ZeRO++" in result.out
    assert "\x1b[" not in result.out  # NO_COLOR is set by the test fixture
