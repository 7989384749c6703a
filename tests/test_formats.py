"""Output formats behind one interface (cli/formats/), and the ``github`` format's workflow commands."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from dtypefix.cli.formats import FORMATS, Document, emit
from dtypefix.cli.formats.github import user_frame, workflow_commands
from dtypefix.matcher import check, explain
from dtypefix.matcher.catalog import load_catalog

KB = load_catalog([Path(__file__).parent / "data" / "golden-kb"], include_builtin=False, cache_dir=None)
# A traceback as a CI runner prints it: the user's script under the workspace, then torch's own frame.
LOG = (
    "Traceback (most recent call last):\n"
    '  File "/home/runner/work/proj/proj/train.py", line 42, in <module>\n'
    "    out = model(x)\n"
    '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, in forward\n'
    "    return F.linear(input, self.weight, self.bias)\n"
    "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and BFloat16\n"
)


def test_every_format_is_a_choice_and_writes() -> None:
    report = explain(LOG, catalog=KB)
    assert set(FORMATS) == {"md", "term", "json", "html", "github"}
    for name in FORMATS:
        out = io.StringIO()
        emit(name, out, Document(lambda: "# hello\n", lambda: {"a": 1}, report, "en"))
        assert out.getvalue(), name


def test_github_points_at_the_users_failing_line() -> None:
    report = explain(LOG, catalog=KB)
    frame = user_frame(report.incident)
    assert frame is not None and (frame.file.endswith("train.py"), frame.line) == (True, 42)
    (line,) = workflow_commands(report, "en", workspace="/home/runner/work/proj/proj")[:1]
    head, _, message = line.partition("::")[2].partition("::")
    assert head.startswith("error file=train.py,line=42,title=dtypefix DTF001%3A ")
    assert "\n" not in line and "%0A" in message  # one workflow command per line, newlines escaped
    assert "dtypefix show DTF001" in message


def test_github_without_a_frame_of_the_users_code_has_no_file() -> None:
    report = explain("RuntimeError: mat1 and mat2 must have the same dtype, but got Float and BFloat16\n", catalog=KB)
    assert report.found
    assert all(line.startswith("::error title=") for line in workflow_commands(report, "zh"))


def test_github_check_findings_are_warnings() -> None:
    config = '{"zero_optimization": {"stage": 3, "zero_quantized_weights": true}, "bf16": {"enabled": true}}'
    report = check(configs=[("ds.json", config)], flags="--bf16 True", catalog=KB)
    lines = workflow_commands(report, "en")
    assert lines and all(line.startswith("::warning title=dtypefix ") for line in lines)


@pytest.mark.parametrize("command", [("show", "DTF001"), ("search", "mat1")])
def test_github_prints_markdown_where_there_is_nothing_to_point_at(cli, command: tuple[str, str]) -> None:
    result = cli(*command, "--format", "github", "--kb", str(Path(__file__).parent / "data" / "golden-kb"))
    assert result.code == 0 and "::error" not in result.out and result.out.strip()


def test_github_from_the_command_line(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_WORKSPACE", "/home/runner/work/proj/proj")
    result = cli("explain", "--format", "github", stdin=LOG.encode())
    assert result.code == 0
    assert result.out.startswith("::error file=train.py,line=42,title=dtypefix ")
