"""The fast ``explain`` path (cli/fastpath.py) takes only the command lines it can read exactly, and gives the same
answer and exit code as the typer application for each of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dtypefix.cli.app import main as typer_main
from dtypefix.cli.console import _explain_fast
from dtypefix.cli.fastpath import ExplainLine, explain_line
from dtypefix.cli.settings import Lang

ROOT = Path(__file__).resolve().parents[1]
SEED = str(ROOT / "tests" / "data" / "seeds" / "001-liger-train.log")
CONFIG = str(ROOT / "examples" / "zeropp-bf16.ds.json")
LOG = str(ROOT / "examples" / "zeropp-bf16.log")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["explain", "x.log"], ExplainLine(file="x.log")),
        (["explain"], ExplainLine()),
        (["explain", "-"], ExplainLine(file="-")),
        (
            ["explain", "--format", "json", "-l", "zh", "--top=2", "--details", "x.log"],
            ExplainLine(file="x.log", fmt="json", lang=Lang.zh, top=2, details=True),
        ),
        (
            ["explain", "-c", "a.json", "--config=b.yaml", "--freeze", "f.txt", "--kb", "kb", "--this-env", "x"],
            ExplainLine(file="x", config=["a.json", "b.yaml"], freeze=["f.txt"], kb=[Path("kb")], this_env=True),
        ),
    ],
)
def test_plain_explain_command_lines_are_read(argv: list[str], expected: ExplainLine) -> None:
    assert explain_line(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["show", "DTF001"],
        ["explain", "--help"],
        ["explain", "-h"],
        ["explain", "a.log", "b.log"],
        ["explain", "--format", "yaml"],
        ["explain", "--format"],
        ["explain", "--format="],
        ["explain", "--lang", "fr"],
        ["explain", "--top", "0"],
        ["explain", "--top", "two"],
        ["explain", "--top", "٣"],
        ["explain", "--config", "--details"],
        ["explain", "--", "x.log"],
        ["explain", "--det"],
        ["explain", "--details=yes"],
        ["explain", "-fjson"],
    ],
)
def test_everything_else_goes_to_typer(argv: list[str]) -> None:
    """Help, usage errors and forms click reads in its own way are never second-guessed."""
    assert explain_line(argv) is None


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", SEED],
        ["explain", SEED, "--format", "json", "--lang", "both"],
        ["explain", "--details", "-n", "1", "-l", "zh", SEED],
        ["explain", LOG, "--config", CONFIG],
        ["explain", str(ROOT / "README.md")],  # no known cause: exit 1
        ["explain", str(ROOT / "no-such.log")],  # bad input: exit 2 with one line
        ["explain", LOG, "--config", str(ROOT / "README.md")],
    ],
)
def test_fast_and_typer_paths_answer_alike(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    fast = _explain_fast(argv)
    fast_out = capsys.readouterr()
    slow = typer_main(argv)
    slow_out = capsys.readouterr()
    assert fast == slow
    assert fast_out.out == slow_out.out
    assert fast_out.err == slow_out.err


def test_the_fast_path_imports_neither_typer_nor_yaml() -> None:
    """Once the KB cache is warm (the first run may parse the KB's YAML), neither is imported."""
    code = (
        "import sys, io, contextlib\n"
        "from dtypefix.cli.console import _explain_fast\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = _explain_fast(['explain', {SEED!r}])\n"
        "print(code, sorted(m for m in ('typer', 'click', 'yaml', 'rich') if m in sys.modules))\n"
    )
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "[]"]
