"""What a person sees in a real terminal: every character survives rich, and the answer fits one screen.

The screen test runs dtypefix in a 100x50 tmux pane and reads it back with capture-pane, for the seed cases and
five common failures: the cause (the first line names the entry), the deciding evidence and the fix are all
within the first 20 lines.
"""

from __future__ import annotations

import io
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from dtypefix.cli.markdown import format_report
from dtypefix.matcher import explain
from dtypefix.matcher.catalog import builtin_kb_dir

ROOT = Path(__file__).resolve().parents[1]
KB = builtin_kb_dir()
SEEDS = ROOT / "tests" / "data" / "seeds"
DTYPEFIX = [sys.executable, "-m", "dtypefix.cli"]

# Text that Markdown or rich markup could eat: regex syntax, backslashes, underscores, brackets, backticks.
NASTY = (
    "RuntimeError: expected scalar type BFloat16 but found Float in "
    "_amp_foreach_non_finite_check_and_unscale_ [bold]x[/bold] (?P<left>[\\w:]+) \\( *star* a`tick` <tag>"
)


def _term(markdown: str, width: int = 100) -> str:
    from rich.console import Console
    from rich.markdown import Markdown

    out = io.StringIO()
    Console(file=out, width=width, force_terminal=True, color_system=None).print(Markdown(markdown))
    return out.getvalue()


def test_every_character_of_the_error_survives_the_terminal_view() -> None:
    shown = _term(format_report(explain(NASTY), "en"))
    flat = " ".join(shown.split())
    for token in (
        "_amp_foreach_non_finite_check_and_unscale_",
        "[bold]x[/bold]",
        "(?P<left>[\\w:]+)",
        "\\(",
        "*star*",
        "a`tick`",
        "<tag>",
    ):
        assert token in flat, token


CASES = {
    "seed-000": (
        [KB / "deepspeed/zeropp-quantized-weights-under-bf16/liger-640.log"],
        ["--config", KB / "deepspeed/zeropp-quantized-weights-under-bf16/liger-640.ds.json"],
    ),
    "seed-001": ([SEEDS / "001-liger-train.log"], ["--freeze", SEEDS / "001-liger.freeze.txt"]),
    "seed-002": (
        [KB / "accelerate/deepspeed-fp8-not-applied/34027-report.log"],
        ["--config", KB / "accelerate/deepspeed-fp8-not-applied/34027-acc_cfg.yaml"],
    ),
    "seed-003": (
        [KB / "devices/int8-lora-on-pre-turing-gpu-in-mixed-box/llama-cookbook-715.log", SEEDS / "003-env.txt"],
        [],
    ),
    "seed-004": (
        [KB / "deepspeed/zero3-offload-clip-scale-on-gpu/axolotl-1698.log"],
        [
            "--config",
            SEEDS / "004-zero3_bf16_cpuoffload_all.json",
            "--config",
            SEEDS / "004-axolotl.yml",
            "--freeze",
            SEEDS / "004-freeze.txt",
        ],
    ),
    "mat1-mat2": ([KB / "family/mat1-mat2-dtype/kopa-11.log"], []),
    "device-mismatch": ([KB / "family/device-mismatch/atom-8.log"], []),
    "scalar-type": ([KB / "family/scalar-type-mismatch/moss-16.log"], []),
    "input-weight-type": ([KB / "family/input-weight-type/dia-158.log"], []),
    "flash-attn": ([KB / "family/flash-attn-dtype/py4cast-38.log"], []),
}


@pytest.fixture(scope="module")
def tmux():
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed: the real-terminal check needs it")
    session = f"dtypefix-{uuid.uuid4().hex[:8]}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "50"], check=True)
    yield session
    subprocess.run(["tmux", "kill-session", "-t", session], check=False)


_END = "__dtypefix_screen_end__"


def _screen(session: str, command: str) -> list[str]:
    """Run ``command`` in a fresh 100x50 pane (a real terminal: dtypefix sees a TTY) and read the screen."""
    window = uuid.uuid4().hex[:6]
    script = f"{command}; echo {_END}; sleep 60"
    subprocess.run(["tmux", "new-window", "-d", "-t", session, "-n", window, "sh", "-c", script], check=True)
    target = f"{session}:{window}"
    text = ""
    for _ in range(300):
        time.sleep(0.1)
        text = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", target], capture_output=True, text=True, check=True
        ).stdout
        if _END in text:
            break
    subprocess.run(["tmux", "kill-window", "-t", target], check=False)
    return text.split(_END)[0].splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_cause_evidence_and_fix_within_twenty_lines_of_a_100_column_terminal(tmux, case) -> None:
    inputs, options = CASES[case]
    args = " ".join(shlex.quote(str(a)) for a in options)
    files = " ".join(shlex.quote(str(p)) for p in inputs)
    command = (
        f"cat {files} | env COLUMNS=100 {' '.join(map(shlex.quote, DTYPEFIX))} explain --format term --lang en {args}"
    )
    screen = [line for line in _screen(tmux, command)]
    first = screen[:20]
    assert first and "DTF" in first[0], screen[:5]
    assert any(line.lstrip().startswith("Fix:") for line in first), "\n".join(first)
    assert any("✔" in line or "Because" in line or "Error:" in line for line in first), "\n".join(first)


@pytest.mark.slow
def test_run_gives_the_child_a_terminal_when_dtypefix_runs_in_one(tmux) -> None:
    child = "import sys; print('tty', sys.stdout.isatty(), sys.stderr.isatty()); sys.exit(4)"
    command = f"{' '.join(map(shlex.quote, DTYPEFIX))} run -- {shlex.quote(sys.executable)} -c {shlex.quote(child)}; echo rc=$?"
    screen = "\n".join(_screen(tmux, command))
    assert "tty True True" in screen and "rc=4" in screen
