"""A paste cut inside a library function: the message that function raises (census/raises.json, matcher/cut.py),
or, cut in a caller, the one message its callee raises (census/calls.json).

The logs are real pastes from the development samples (tests/blind27, tests/blind28b), used as posted.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import yaml

from dtypefix.cli.json_output import report_json
from dtypefix.cli.markdown import format_report
from dtypefix.kbtools.census import callee_index, load_mined, raise_index
from dtypefix.kbtools.miner import mine_python
from dtypefix.matcher import explain
from dtypefix.matcher.cut import cut_inside, load_calls, load_index
from dtypefix.matcher.source import from_text
from dtypefix.matcher.traceback import parse_stacks

ROOT = Path(__file__).resolve().parents[1]


def _log(sample: str) -> str:
    data = yaml.safe_load((ROOT / "tests" / f"{sample}.yaml").read_text(encoding="utf-8"))
    return str(data["log"])


def test_miner_records_the_enclosing_function() -> None:
    rows = [r for r in load_mined(ROOT / "census" / "mined") if r.site.startswith("vllm/worker/worker.py:")]
    (check,) = [r for r in rows if r.template.startswith("Bfloat16 is only supported")]
    assert (check.version, check.function, check.function_raises) == ("0.3.2", "_check_if_gpu_supports_dtype", 1)
    scaler = [r for r in load_mined(ROOT / "census" / "mined") if r.template == "Attempting to unscale FP16 gradients."]
    assert {r.function for r in scaler} == {"GradScaler._unscale_grads_", "ShardedGradScaler._unscale_grads_"}


def test_index_is_what_the_mined_data_says() -> None:
    shipped = json.loads((ROOT / "census" / "raises.json").read_text(encoding="utf-8"))
    assert shipped == load_index()
    assert shipped == raise_index(load_mined(ROOT / "census" / "mined"))
    (message,) = shipped["vllm/worker/worker.py"]["_check_if_gpu_supports_dtype"]
    assert message[0] == "ValueError" and message[1].startswith("Bfloat16 is only supported on GPUs")
    # _unscale_grads_ also raises an assertion about its parameters (torch 2.13): a cut there says nothing
    assert "_unscale_grads_" not in shipped.get("torch/amp/grad_scaler.py", {})


def test_cut_inside_the_bf16_check_proposes_its_entries_at_low() -> None:
    # https://github.com/netease-youdao/QAnything/issues/128: the paste stops at the frame header of vLLM's check,
    # each line behind docker compose's prefix
    report = explain(_log("blind27/qanything-128"))
    cut = report.incident.cut
    assert report.incident.error_line_missing
    assert cut is not None and cut.function == "_check_if_gpu_supports_dtype" and not cut.at_raise
    assert report.matches and all(m.confidence == "low" for m in report.matches)
    assert report.matches[0].entry.id == "DTF150"  # bf16 on a GPU older than Ampere
    english = format_report(report, "en")
    assert "stops inside `_check_if_gpu_supports_dtype`" in english
    assert "Bfloat16 is only supported on GPUs" in english
    chinese = format_report(report, "zh")
    assert "停在 `_check_if_gpu_supports_dtype` 里面" in chinese
    assert "stops inside" not in chinese and "the paste" not in chinese


def test_miner_records_same_file_callers() -> None:
    source = (
        "class Scaler:\n"
        "    def _unscale(self, g):\n"
        "        if g.dtype == torch.float16:\n"
        "            raise ValueError('Attempting to unscale FP16 gradients.')\n"
        "    def unscale_(self, opt):\n"
        "        self._unscale(opt)\n"
        "    def step(self, opt):\n"
        "        other._unscale(opt)\n"  # a call on another object: the file does not say what it reaches
        "def helper(g):\n"
        "    Scaler()._unscale(g)\n"
    )
    (row,) = [r for r in mine_python(source, "pkg/scaler.py", "pkg", "1.0") if r.function]
    assert row.function == "Scaler._unscale" and row.callers == ("Scaler.unscale_:6",)  # where it is called
    scaler = [r for r in load_mined(ROOT / "census" / "mined") if r.function == "GradScaler._unscale_grads_"]
    assert scaler and all(any(c.startswith("GradScaler.unscale_:") for c in r.callers) for r in scaler)


def test_callee_index_is_what_the_mined_data_says() -> None:
    shipped = json.loads((ROOT / "census" / "calls.json").read_text(encoding="utf-8"))
    assert shipped == load_calls()
    assert shipped == callee_index(load_mined(ROOT / "census" / "mined"))
    callee, message, lines = shipped["torch/amp/grad_scaler.py"]["unscale_"]
    assert callee == "_unscale_grads_" and message == ["ValueError", "Attempting to unscale FP16 gradients."]
    assert {338, 358} <= set(lines)  # the call's line in torch 2.5.1 and in 2.13.0
    # a function that raises a dtype message itself is the raise index's business, never the callee index's
    index = load_index()
    assert not any(function in index.get(path, {}) for path, functions in shipped.items() for function in functions)


def test_cut_in_a_caller_proposes_its_callees_message_at_low_and_says_so() -> None:
    # https://github.com/2U1/Qwen2-VL-Finetune/issues/184: stops at the header of GradScaler.unscale_, which raises
    # no dtype message itself ("unscale_() has already been called ..." is a state check) and calls
    # _unscale_grads_, whose only dtype message is the fp16-gradients refusal
    log = _log("blind28b/qwenvl-ft-184")
    (stack,) = parse_stacks(log)
    assert stack.frames[-1].function == "unscale_" and not stack.error_line
    assert "unscale_" not in load_index().get("torch/amp/grad_scaler.py", {})  # no guess from the function itself
    report = explain(log)
    cut = report.incident.cut
    assert cut is not None and (cut.function, cut.callee) == ("unscale_", "_unscale_grads_") and not cut.at_raise
    assert report.matches and all(m.confidence == "low" for m in report.matches)
    # fp16 trainable weights under the Trainer's fp16 GradScaler: the guessed message and the Trainer's and
    # accelerate's frames the paste does show; the family that says what the message means stays a candidate
    assert [m.entry.id for m in report.matches[:2]] == ["DTF706", "DTF006"]
    english = format_report(report, "en")
    assert "only `_unscale_grads_` raises a dtype or device message" in english
    assert "one call deeper than the paste shows" in english
    chinese = format_report(report, "zh")
    assert "往下多推了一层调用的猜测" in chinese and "one call deeper" not in chinese
    assert report_json(report)["extracted"]["cut_inside"]["callee"] == "_unscale_grads_"


def test_cut_in_a_caller_running_another_line_stays_silent() -> None:
    header = (
        'Traceback (most recent call last):\n  File "/srv/train.py", line 9, in <module>\n    scaler.unscale_(opt)\n'
        '  File "/usr/lib/python3.11/site-packages/torch/amp/grad_scaler.py", line 338, in unscale_\n'
    )
    assert explain(header + "    optimizer_state = self._per_optimizer_states[id(optimizer)]\n").incident.cut is None
    calling = header + '    optimizer_state["found_inf_per_device"] = self._unscale_grads_(\n'
    assert explain(calling).incident.cut is not None  # the call of the callee itself
    assert explain(header).incident.cut is not None  # a header alone at the line torch 2.5.1 makes that call
    elsewhere = header.replace("line 338, in unscale_", "line 331, in unscale_")
    assert explain(elsewhere).incident.cut is None  # a header alone at a line where no release calls it
    own = header.replace("/usr/lib/python3.11/site-packages/torch/amp/", "/home/user/project/")
    assert explain(own).incident.cut is None  # the user's own file of that name


def test_look_alike_paths_and_a_complete_traceback_get_nothing() -> None:
    header = 'Traceback (most recent call last):\n  File "/home/user/myproject/worker.py", line 12, in <module>\n'
    own = header + '  File "/home/user/myproject/worker.py", line 231, in _check_if_gpu_supports_dtype\n'
    assert explain(own).incident.cut is None  # the user's own function of that name, not vLLM's
    vllm = header + (
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 231, in '
        "_check_if_gpu_supports_dtype\n"
    )
    assert explain(vllm).incident.cut is not None
    calling = vllm + "    compute_capability = torch.cuda.get_device_capability()\n"
    assert explain(calling).incident.cut is None  # the frame was in a call: the error may be the callee's
    raising = vllm + "    raise ValueError(\n"
    assert explain(raising).incident.cut is not None  # the raise itself, its message on the lines below
    complete = vllm + "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0.\n"
    assert explain(complete).incident.cut is None  # the error line is there: nothing to guess


def test_a_frame_cut_after_in_takes_its_function_from_the_callers_line() -> None:
    """tests/blind28b/swift-5718 stops inside its last frame line, after "in": `grad_scaler.py", line 337, in`. The
    frame is kept, and its function is the one function of that file the caller's line calls
    (`self.scaler.unscale_(opt)`). The callee guess then needs the line: torch 2.3.1 (mined from its wheel) makes
    the `_unscale_grads_` call at line 337, which census/calls.json lists."""
    (stream,) = [s for s in from_text(_log("blind28b/swift-5718")).streams if s.label == "rank5"]
    stack = parse_stacks(stream.text, stream.label)[-1]
    assert (stack.frames[-1].line, stack.frames[-1].function, stack.error_line) == (337, "", False)
    calls = load_calls()
    assert 337 in calls["torch/amp/grad_scaler.py"]["unscale_"][2]
    cut = cut_inside(stack, calls=calls)
    assert cut is not None and (cut.function, cut.callee, cut.message) == (
        "unscale_",
        "_unscale_grads_",
        "Attempting to unscale FP16 gradients.",
    )
    # two functions of that file called on the caller's line: which one was entered, nothing says
    both = stack.frames[-2].code + " or self.scaler._check_inf_per_device(opt)"
    frames = (*stack.frames[:-2], replace(stack.frames[-2], code=both), stack.frames[-1])
    assert cut_inside(replace(stack, frames=frames), calls=calls) is None
