"""Errors read the way people paste them (issue 14, section 3).

Every input below is a real paste from a public report (URL above it), trimmed and anonymised; where a test
damages one (cuts it, wraps it), it says how. None comes from the held-out sample (tests/heldout/).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from dtypefix.cli import keep
from dtypefix.cli.inputs import _read_bounded
from dtypefix.matcher import build_incident, explain
from dtypefix.matcher.recover import recover_error_lines, variants
from dtypefix.matcher.result import Confidence
from dtypefix.matcher.traceback import parse_stacks


def _first(text: str) -> tuple[str, str] | None:
    report = explain(text)
    return (report.matches[0].entry.id, report.matches[0].confidence) if report.matches else None


# https://github.com/Comfy-Org/ComfyUI/issues/6907 (the title: the message as a UI shows it, no type)
MESSAGE_ALONE = "mat1 and mat2 must have the same dtype, but got Float and Half"
# https://github.com/zjukg/KoPA/issues/11 (its title, without the "RuntimeError: " the traceback printed)
MESSAGE_ALONE_2 = "expected mat1 and mat2 to have the same dtype, but got: float != c10::Half"


@pytest.mark.parametrize("text", [MESSAGE_ALONE, MESSAGE_ALONE_2])
def test_message_without_its_type_is_read_as_the_error(text: str) -> None:
    typed = _first("RuntimeError: " + text)
    assert typed is not None
    assert _first(text) == typed  # the same answer as with the type
    incident = build_incident(text)
    assert incident.primary is not None and incident.primary.exc_type == ""  # the type stays unknown
    assert not incident.has_own_exception


def test_type_on_its_own_line_then_the_message() -> None:
    # The KoPA #11 error as a terminal shows it when the message is long: "RuntimeError:" then the text.
    text = "RuntimeError:\n" + MESSAGE_ALONE_2
    (line,) = [e for e in build_incident(text).error_lines if e.exc_type == "RuntimeError"]
    assert line.message == MESSAGE_ALONE_2
    assert _first(text) == _first("RuntimeError: " + MESSAGE_ALONE_2)


# https://github.com/Comfy-Org/ComfyUI/issues/6907 (ComfyUI's error report: type and message on labelled lines)
COMFY_REPORT = """# ComfyUI Error Report
## Error Details
- **Node ID:** 20
- **Node Type:** KSampler
- **Exception Type:** RuntimeError
- **Exception Message:** mat1 and mat2 must have the same dtype, but got Float and Half
## Stack Trace
"""


def test_labelled_type_and_message_of_an_error_report() -> None:
    lines = build_incident(COMFY_REPORT).error_lines
    assert ("RuntimeError", MESSAGE_ALONE) in [(e.exc_type, e.message) for e in lines]
    assert _first(COMFY_REPORT) == _first("RuntimeError: " + MESSAGE_ALONE)


# https://github.com/kijai/ComfyUI-Marigold/issues/22 (ComfyUI's error dialog: the node, a blank line, the message
# without its type, then the frames flush left)
COMFY_DIALOG = """Error occurred when executing MarigoldDepthEstimation:

Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use float32 instead.

File "/Users/user/ComfyUI/execution.py", line 151, in recursive_execute
output_data, output_ui = get_output_data(obj, input_data_all)
File "/Users/user/ComfyUI/custom_nodes/ComfyUI-Marigold/marigold/util/ensemble.py", line 82, in ensemble_depths
s = torch.from_numpy(s).to(device)
"""


def test_message_of_comfyuis_error_dialog() -> None:
    message = (
        "Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. "
        "Please use float32 instead."
    )
    assert message in [e.message for e in build_incident(COMFY_DIALOG).error_lines]
    dialog, typed = _first(COMFY_DIALOG), _first("TypeError: " + message)
    assert dialog is not None and typed is not None and dialog[0] == typed[0]  # the same entry as the typed message
    # No blank line under the node's line (the IPAdapter plus #413 quote), and a frame header there is no message.
    quoted = "Error occurred when executing IPAdapter:\n\"addmm_cuda\" not implemented for 'Float8_e4m3fn'\n"
    assert "\"addmm_cuda\" not implemented for 'Float8_e4m3fn'" in [
        e.message for e in build_incident(quoted).error_lines
    ]
    framed = (
        'Error occurred when executing KSampler:\n\n  File "/ComfyUI/execution.py", line 151, in recursive_execute\n'
    )
    assert recover_error_lines(framed, "main") == []


# https://github.com/guandeh17/Self-Forcing/issues/10 (an application's own prefix, no type, no traceback)
APP_PREFIX = """📡 Frame sender thread started
Moving DynamicSwap_WanTextEncoder to cuda:0 with preserved memory: 24.423619747161865 GB
🔄 Processing block 1/7
❌ Generation failed: mat1 and mat2 must have the same dtype, but got BFloat16 and Half
📡 Frame sender thread stopped
"""

# https://github.com/kijai/ComfyUI-KJNodes/issues/503 (ComfyUI's prefix, then a traceback the paste cut short)
COMFY_PREFIX = """!!! Exception during processing !!! expected mat1 and mat2 to have the same dtype, but got: float != struct c10::BFloat16
Traceback (most recent call last):
  File "E:\\Comfy\\ComfyUI_windows_portable\\ComfyUI\\execution.py", line 518, in execute
    output_data, output_ui, has_subgraph, has_pending_tasks = await get_output_data(prompt_id, unique_id, obj, input_data_all)
"""


def test_message_behind_an_applications_prefix() -> None:
    lines = [e.message for e in build_incident(APP_PREFIX).error_lines if not e.exc_type]
    assert "mat1 and mat2 must have the same dtype, but got BFloat16 and Half" in lines
    assert _first(APP_PREFIX) == _first(
        "RuntimeError: mat1 and mat2 must have the same dtype, but got BFloat16 and Half"
    )
    incident = build_incident(COMFY_PREFIX)
    assert "expected mat1 and mat2 to have the same dtype, but got: float != struct c10::BFloat16" in [
        e.message for e in incident.error_lines
    ]
    assert not incident.error_line_missing  # the prefix line holds the error the cut traceback lost
    first = _first(COMFY_PREFIX)
    assert first is not None and first[0] == _first("RuntimeError: " + MESSAGE_ALONE_2)[0]  # type: ignore[index]


# https://github.com/huggingface/text-generation-inference/issues/1104 (the router's log: the Python error quoted,
# escaped, inside a Rust Debug value; the timestamp and the logger's prefix left as printed)
TGI_WARMUP = """2023-10-05T12:01:28.190295Z ERROR warmup{max_input_length=1024 max_prefill_tokens=4096}:warmup: text_generation_client: router/client/src/lib.rs:33: Server error: "addmm_impl_cpu_" not implemented for 'Half'
Error: Warmup(Generation("\\"addmm_impl_cpu_\\" not implemented for 'Half'"))
2023-10-05T12:01:28.210989Z ERROR text_generation_launcher: Webserver Crashed
2023-10-05T12:01:28.211005Z  INFO text_generation_launcher: Shutting down shards
Error: WebserverFailed
"""

# https://github.com/nlzy/vllm-gfx906/issues/58 (vLLM's engine log: the worker's error quoted in another one)
VLLM_QUOTED = """(EngineCore_DP0 pid=122) ERROR 12-19 17:42:58 [core.py:842]   File "/opt/torchenv/lib/python3.12/site-packages/vllm/v1/executor/multiproc_executor.py", line 341, in get_response
(EngineCore_DP0 pid=122) ERROR 12-19 17:42:58 [core.py:842]     raise RuntimeError(
(EngineCore_DP0 pid=122) ERROR 12-19 17:42:58 [core.py:842] RuntimeError: Worker failed with error 'expected mat1 and mat2 to have the same dtype, but got: float != c10::Half', please check the stack trace above for the root cause
"""


def test_message_quoted_in_a_servers_log() -> None:
    messages = [e.message for e in build_incident(TGI_WARMUP).error_lines]
    assert "\"addmm_impl_cpu_\" not implemented for 'Half'" in messages  # unescaped from the Debug value
    typed = _first("RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'")
    assert typed is not None and _first(TGI_WARMUP) == typed
    messages = [e.message for e in build_incident(VLLM_QUOTED).error_lines]
    assert MESSAGE_ALONE_2 in messages
    assert "raise RuntimeError(" not in messages  # a source line behind the logger's prefix is no message
    assert _first(VLLM_QUOTED) == _first("RuntimeError: " + MESSAGE_ALONE_2)


def test_message_behind_a_logging_prefix_without_a_type() -> None:
    # The TGI #1104 router line alone: "ERROR ...: Server error: <message>".
    line = TGI_WARMUP.splitlines()[0]
    assert "\"addmm_impl_cpu_\" not implemented for 'Half'" in [e.message for e in build_incident(line).error_lines]
    assert _first(line) == _first("RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'")


def test_json_escaped_and_repr_messages() -> None:
    # The TGI #1104 message as a JSON body and as a Python repr carry it (escaped quotes, \n).
    body = (
        '{"error": "RuntimeError: \\"addmm_impl_cpu_\\" not implemented for \'Half\'\\n", "error_type": "generation"}'
    )
    found = [(e.exc_type, e.message) for e in build_incident(body).error_lines]
    assert ("RuntimeError", "\"addmm_impl_cpu_\" not implemented for 'Half'") in found
    shown = "task failed: RuntimeError('\"addmm_impl_cpu_\" not implemented for \\'Half\\'')"
    found = [(e.exc_type, e.message) for e in build_incident(shown).error_lines]
    assert ("RuntimeError", "\"addmm_impl_cpu_\" not implemented for 'Half'") in found


def test_cut_and_wrapped_lines() -> None:
    typed = _first("RuntimeError: " + MESSAGE_ALONE_2)
    # A missing closing quote: the TGI #1104 message cut before its last character.
    cut = 'RuntimeError: "addmm_impl_cpu_" not implemented for \'Half'
    assert "\"addmm_impl_cpu_\" not implemented for 'Half'" in [e.message for e in build_incident(cut).error_lines]
    assert _first(cut) == _first(cut + "'")
    # Wrapped at an 80-column terminal, at a space and inside a word.
    line = "RuntimeError: " + MESSAGE_ALONE_2
    assert _first(line[:52] + "\n" + line[52:]) == typed  # "...same dtype," / "but got..." at a space
    assert _first(line[:60] + "\n" + line[60:]) == typed  # broken in the middle of a word
    assert variants("expected mat1 and mat2 to have the same dt\nype") == [
        "expected mat1 and mat2 to have the same dt ype",
        "expected mat1 and mat2 to have the same dtype",
    ]


# https://github.com/facebookresearch/detectron2/issues/460 (the frame and its raise; the paste is cut before the
# final "AssertionError: ..." line, as a copy that stops one line short leaves it)
RAISE_NO_FINAL_LINE = """Traceback (most recent call last):
  File "/home/user/train.py", line 12, in <module>
    model.cuda()
  File "/home/user/anaconda3/envs/tf-gpu/lib/python3.7/site-packages/torch/cuda/__init__.py", line 95, in _check_driver
    raise AssertionError("Torch not compiled with CUDA enabled")
"""


def test_raise_shown_as_source_when_the_final_line_is_missing() -> None:
    (stack,) = parse_stacks(RAISE_NO_FINAL_LINE)
    assert (stack.exc_type, stack.message, stack.error_line) == (
        "AssertionError",
        "Torch not compiled with CUDA enabled",
        False,
    )
    report = explain(RAISE_NO_FINAL_LINE)
    assert report.incident.error_line_missing
    assert report.matches and all(m.confidence == "low" for m in report.matches)  # proposed, never confidently
    with_line = explain(RAISE_NO_FINAL_LINE + "AssertionError: Torch not compiled with CUDA enabled\n")
    assert with_line.matches[0].entry.id == report.matches[0].entry.id
    assert not with_line.incident.error_line_missing


def test_final_line_cut_mid_word_is_completed_from_the_raise() -> None:
    cut = RAISE_NO_FINAL_LINE + "AssertionError: Torch not compiled with CU"
    (stack,) = parse_stacks(cut)
    assert stack.message == "Torch not compiled with CUDA enabled" and stack.error_line
    full = explain(RAISE_NO_FINAL_LINE + "AssertionError: Torch not compiled with CUDA enabled")
    assert _first(cut) == (full.matches[0].entry.id, full.matches[0].confidence)


# https://github.com/locuslab/TCN/issues/67 (frames only: the paste stops inside the last frame's source line)
FRAMES_ONLY = """Traceback (most recent call last):
  File "D:\\user\\TCN\\adding_problem\\add_test.py", line 63, in <module>
    model.cuda()
  File "D:\\anaconda3\\envs\\script\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 688, in cuda
    return self._apply(lambda t: t.cuda(device))
  File "D:\\anaconda3\\envs\\script\\lib\\site-packages\\torch\\cuda\\__init__.py", line 210, in _lazy_init
"""


def test_traceback_without_its_final_line_says_so() -> None:
    report = explain(FRAMES_ONLY)
    incident = report.incident
    assert incident.error_line_missing
    (stack,) = incident.stacks
    assert stack.frames and not stack.error_line and stack.exc_type == ""
    assert not incident.has_complete_traceback  # the frames nearest the error are gone: absence proves nothing
    assert all(m.confidence == "low" for m in report.matches)
    # A whole traceback, and a one-line error, are not "missing" anything.
    assert not explain("RuntimeError: " + MESSAGE_ALONE_2).incident.error_line_missing
    assert not explain(MESSAGE_ALONE_2).incident.error_line_missing


def test_error_line_missing_is_reported_in_both_languages() -> None:
    from dtypefix.cli.i18n import t
    from dtypefix.cli.json_output import report_json
    from dtypefix.cli.markdown import format_report

    report = explain(RAISE_NO_FINAL_LINE)
    for lang in ("en", "zh"):
        assert t("read.error_line_missing", lang) in format_report(report, lang)
        assert t("read.error_line_missing", lang) not in format_report(explain(COMFY_REPORT), lang)
    assert report_json(report)["extracted"]["error_line_missing"] is True


# https://github.com/zjukg/KoPA/issues/11 (the traceback, trimmed), buried in a log of any size.
KOPA = """Traceback (most recent call last):
  File "/home/user/pymp_kopa/inference_kopa.py", line 78, in <module>
    generate_ids = model.generate(
  File "/home/user/anaconda3/envs/alpaca/lib/python3.9/site-packages/peft/peft_model.py", line 1034, in generate
    outputs = self.base_model.generate(**kwargs)
  File "/home/user/anaconda3/envs/alpaca/lib/python3.9/site-packages/torch/nn/modules/linear.py", line 114, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::Half
"""


def _noise(size: int) -> bytes:
    line = b"[rank3]: {'loss': 0.4312, 'grad_norm': 1.27, 'learning_rate': 2e-05, 'epoch': 0.41}\n"
    return line * (size // len(line))


def test_an_error_followed_by_20_mb_of_output_is_kept() -> None:
    data = _noise(3 << 20) + KOPA.encode() + _noise(20 << 20)
    kept, dropped = _read_bounded(io.BytesIO(data), "log")
    assert dropped and KOPA.encode() in kept
    assert len(kept) < 8 << 20  # head, tail and a window around the error: bounded
    assert _first(kept.decode()) == _first(KOPA)


def test_windows_are_bounded_and_the_first_errors_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keep, "MIDDLE_BYTES", 1 << 20)
    first = b"ValueError: the first one\n"
    data = _noise(2 << 20) + first + b"".join(b"RuntimeError: again\n" + _noise(200_000) for _ in range(100))
    data += _noise(6 << 20)
    keeper = keep.Keeper(1 << 20)
    for start in range(0, len(data), 65536):  # the chunk size `dtypefix run` reads
        keeper.add(data[start : start + 65536])
    kept, dropped = keeper.value()
    assert dropped and first in kept
    assert len(kept) < keep.HEAD_BYTES + (1 << 20) + keep.MIDDLE_BYTES + keep.AFTER + (1 << 20)


def test_small_input_is_kept_whole() -> None:
    kept, dropped = _read_bounded(io.BytesIO(KOPA.encode()), "log")
    assert kept == KOPA.encode() and not dropped


def test_a_flood_of_tracebacks_reads_the_first_and_the_last_and_counts_the_middle() -> None:
    """A loop that logs an exception and goes on: the cost is bounded, the real error (last) still decides."""
    from dtypefix.matcher import explain
    from dtypefix.matcher.incident import MAX_TRACEBACKS, build_incident

    flood = 'Traceback (most recent call last):\n  File "train.py", line 7, in <module>\n    step()\nKeyError: {i}\n'
    last = (
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    loss = model(x)\n'
        "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16\n"
    )
    count = MAX_TRACEBACKS + 500
    text = "".join(flood.format(i=i) for i in range(count)) + last
    incident = build_incident(text)
    assert incident.skipped_tracebacks == count + 1 - MAX_TRACEBACKS
    messages = [s.message for s in incident.stacks]
    assert messages[0] == "0" and "mat1 and mat2" in messages[-1]
    assert explain(text).matches[0].entry.id == "DTF001"


# --- issue 21, section 5: progress bars, healthy runs, bare messages, the user's own assertions ---

UNSCALE = """Traceback (most recent call last):
  File "/home/user/train.py", line 40, in <module>
    trainer.train()
  File "/home/user/.venv/lib/python3.12/site-packages/torch/amp/grad_scaler.py", line 283, in _unscale_grads_
    raise ValueError("Attempting to unscale FP16 gradients.")
ValueError: Attempting to unscale FP16 gradients.
"""


@pytest.mark.parametrize(
    "bar",
    [
        "  0%|          | 0/100 [00:00<?, ?it/s]",
        "\r  3%|▎         | 3/100 [00:01<00:40,  2.41it/s]",
        " 3%|▎ | 3/100 [00:04<02:10,  1.52s/it]\r 4%|▍ | 4/100 [00:06<02:08,  1.50s/it]",
    ],
    ids=["glued", "carriage-return-first", "redrawn-then-glued"],
)
def test_a_progress_bar_glued_before_the_header_leaves_the_traceback_whole(bar: str) -> None:
    """tqdm prints no newline before a crash: the header must still start a whole traceback (not a partial one that
    asks for "the full traceback" and lets frames absent from it prove nothing)."""
    report = explain(bar + UNSCALE)
    assert report.incident.has_complete_traceback
    assert [s.exc_type for s in report.incident.stacks] == ["ValueError"]
    assert report.matches[0].entry.id == explain(UNSCALE).matches[0].entry.id


def test_a_progress_bar_is_never_the_error() -> None:
    bars = "\n".join(
        [
            "Casting the dataset to bf16: 100%|██████████| 10/10 [00:00<00:00, 50.1it/s]",
            "Map (num_proc=4): 100%|██████████| 1000/1000 [00:01<00:00, 812.44 examples/s]",
            "{'loss': 2.31, 'grad_norm': 1.02, 'learning_rate': 5e-05, 'epoch': 1.0}",
        ]
    )
    report = explain(bars)
    assert report.matches == () and report.incident.exceptions == ()


AUTOCAST_NOTICE = (
    "/home/user/train.py:46: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. "
    "Please use `torch.amp.autocast('cuda', args...)` instead.\n"
    "  with torch.cuda.amp.autocast(dtype=torch.bfloat16):\n"
)


def test_a_healthy_runs_deprecation_notice_gets_no_answer() -> None:
    """A run that printed the notice and went on to finish: nothing failed, nothing to explain."""
    log = "step 10 loss 2.31\n" + AUTOCAST_NOTICE + "step 20 loss 2.05\n{'train_runtime': 12.1, 'epoch': 2.0}\ndone\n"
    assert explain(log).matches == ()


def test_the_notice_pasted_alone_is_still_explained() -> None:
    """Pasted on its own, the notice is a question about it, and the entry that explains it answers — at low
    confidence: a notice is not a failure, so it is never offered as a likely cause of one."""
    report = explain(AUTOCAST_NOTICE)
    assert report.matches and report.matches[0].entry.id == "DTF009"
    assert {m.confidence.value for m in report.matches} == {"low"}


def test_a_notice_before_a_real_failure_does_not_hide_it() -> None:
    assert explain(AUTOCAST_NOTICE + UNSCALE).matches[0].entry.family == "unscale-fp16-gradients"


# Real output (a UNet training script on a machine without CUDA): GradScaler's warning, then a failure of its own
# that has nothing to do with it ("autocast_mode" is a module, not the context manager).
SCALER_WARNING_THEN_TYPEERROR = """\
C:\\Users\\user\\Python310\\lib\\site-packages\\torch\\cuda\\amp\\grad_scaler.py:118: UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.
  warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
Traceback (most recent call last):
  File "c:\\Users\\user\\trainunet.py", line 39, in train_fn
    with torch.cuda.amp.autocast_mode():
TypeError: 'module' object is not callable
"""


def test_a_warning_printed_before_another_failure_is_context_not_its_cause() -> None:
    """The traceback ends in an exception of its own: an answer that stands on a warning printed on the way is low
    at most; pasted alone, the same warning is answered as before."""
    report = explain(SCALER_WARNING_THEN_TYPEERROR)
    assert report.matches and {m.confidence.value for m in report.matches} == {"low"}
    alone = explain(SCALER_WARNING_THEN_TYPEERROR.split("Traceback")[0])
    assert alone.matches[0].entry.id == "DTF009" and alone.matches[0].confidence.value != "low"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Attempting to unscale FP16 gradients.", "unscale-fp16-gradients"),
        ("value cannot be converted to type at::Half without overflow", "DTF105"),
        ("Input type (float) and bias type (c10::Half) should be the same", "input-weight-type"),
        ("No backend type associated with device type cpu", "collective-device-backend"),
        # a message that ends by suggesting a flag is not a command line
        (
            "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute"
            " capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example:"
            " --dtype=half.",
            "DTF150",
        ),
    ],
)
def test_a_bare_message_reaches_entries_whose_patterns_name_a_type(message: str, expected: str) -> None:
    """Each of these entries' patterns names the exception type; the message pasted without it still reaches them."""
    best = explain(message + "\n").matches[0].entry
    assert expected in (best.id, best.family)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Unknown mixed_precision mode", "DTF032"),
        ("addmv input tensors must have the same dtype", "DTF007"),
        ("Embedding layer is not quantized", "DTF309"),
        ("Blockwise quantization only supports 16/32-bit floats", "DTF331"),
    ],
)
def test_a_bare_message_cut_after_its_first_clause_reaches_its_entry(message: str, expected: str) -> None:
    """Issue 21, section 5: pasted without its type and cut after its first clause, the message is the start of
    the entry's pattern; it still reaches the entry."""
    assert explain(message + "\n").matches[0].entry.id == expected


@pytest.mark.parametrize("message", ["Unknown mixed", "RuntimeError: Unknown mixed_precision mode"])
def test_a_cut_too_short_or_typed_is_not_read_as_a_cut_message(message: str) -> None:
    """Fewer than three words say no message; a typed line is the message as printed, not a cut paste."""
    assert all(m.entry.id != "DTF032" for m in explain(message + "\n").matches)


TE_ASSERT = """Traceback (most recent call last):
  File "/home/user/train_fp8.py", line 52, in <module>
    assert has_transformer_engine_layers(model.module){message}
AssertionError{colon}
"""
FP8_DEEPSPEED = ("accelerate.yaml", "distributed_type: DEEPSPEED\nmixed_precision: fp8\n")


@pytest.mark.parametrize("said", ["", "model was not converted to TE layers"], ids=["bare", "with-message"])
def test_the_users_own_assertion_lets_the_entry_about_it_decide(said: str) -> None:
    """`assert has_transformer_engine_layers(model)` failing in the user's script is about DTF250 (fp8 silently
    not applied): its config and version evidence decide, high with an fp8 DeepSpeed config on an affected version."""
    text = TE_ASSERT.format(message=f', "{said}"' if said else "", colon=f": {said}" if said else "")
    report = explain(text, configs=[FP8_DEEPSPEED], freeze="accelerate==0.34.2\n")
    assert (report.matches[0].entry.id, report.matches[0].confidence) == ("DTF250", "high")
    fixed = explain(text, configs=[FP8_DEEPSPEED], freeze="accelerate==1.11.0\n")
    assert not fixed.matches or fixed.matches[0].confidence != "high"


def test_a_librarys_assertion_is_not_read_as_the_users() -> None:
    text = TE_ASSERT.replace("/home/user/train_fp8.py", "/home/user/.venv/lib/python3.12/site-packages/x/y.py")
    assert not any(m.entry.id == "DTF250" for m in explain(text.format(message="", colon="")).matches)


@pytest.mark.parametrize("name", ["h100-trainer-fp16-on-bf16-model", "h100-trainer-fp16-on-fp16-model"])
def test_a_real_trainer_log_with_tqdm_glued_to_the_header_reads_whole(name: str) -> None:
    """Real H100 output (tests/data/recorded): Trainer's tqdm bar has no newline before `Traceback (most recent call
    last):`; the traceback is read whole, with its one exception, and no answer asks for the full traceback."""
    text = (Path(__file__).parent / "data" / "recorded" / f"{name}.log").read_text(encoding="utf-8")
    assert "it/s]Traceback (most recent call last):" in text
    report = explain(text)
    assert report.incident.has_complete_traceback
    assert len(report.incident.stacks) == 1


def test_a_library_assertion_that_compares_dtypes_is_read_as_a_dtype_check() -> None:
    """Real output (LLaMA-Factory issue 2774, tests/blind21, as posted: the assert line and a bare AssertionError),
    then the same inside a library frame: a bare AssertionError whose only words are a condition on dtypes gets the
    dtype safety net, at low confidence; a library's bare assertion about anything else stays unread."""
    posted = "    assert len(set(t.dtype for t in tensors)) == 1\n\n  AssertionError\n\n"
    assert [(m.entry.id, m.confidence.value) for m in explain(posted).matches] == [("DTF050", "low")]
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/.venv/lib/python3.10/site-packages/torch/distributed/fsdp/_flat_param.py", line 728,'
        " in _validate_tensors_to_flatten\n"
        "    assert len(set(t.dtype for t in tensors)) == 1\n"
        "AssertionError\n"
    )
    assert [(m.entry.id, m.confidence.value) for m in explain(text).matches] == [("DTF050", "low")]
    other = text.replace("len(set(t.dtype for t in tensors)) == 1", "self._is_initialized")
    assert explain(other).matches == ()


def test_please_ensure_is_a_check_word_of_the_dtype_safety_net() -> None:
    """Real output (torch 2.13.0 CPU: ``t.grad = torch.zeros(2)`` then ``t.grad_dtype = torch.bfloat16``): a check
    that names two dtypes and asks to "ensure" they match; no entry knows it, and it is not "no known cause". (The
    gradient-assignment wording of pytorch issue 111317 used to be the example; DTF007 and DTF707 read it now.)"""
    message = (
        "RuntimeError: Cannot set grad_dtype to 'BFloat16' because there is already a gradient with dtype 'float'."
        " Please clear the gradient (.grad = None) before changing grad_dtype, or ensure the new grad_dtype matches"
        " the existing gradient's dtype.\n"
    )
    assert explain(message).matches[0].entry.id == "DTF050"


def test_a_check_that_says_a_tensor_has_a_dtype_is_a_dtype_check() -> None:
    """Real output (torchtune's recipe refusing an NF4 weight that a torchao nightly reported as float8): the raise
    names the dtype it refused and no check word; "has dtype" in an exception is the refusal itself."""
    text = (
        '  File "/home/user/torchtune/torchtune/utils/precision.py", line 161, in validate_expected_param_dtype\n'
        '    raise ValueError(f"Parameter {name} has dtype {param.dtype}")\n'
        "ValueError: Parameter layers.0._checkpoint_wrapped_module.attn.q_proj.weight has dtype "
        "torch.float8_e5m2fnuz\n"
    )
    assert [(m.entry.id, m.confidence.value) for m in explain(text).matches] == [("DTF050", "low")]


# https://github.com/vllm-project/vllm/issues/1284 (both lines as the description quotes them, no traceback): vLLM
# printed its bf16 refusal, then raised a hardware-floor RuntimeError no entry lists.
BF16_REFUSAL_ABOVE_A_TYPED_ERROR = (
    "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla P100-PCIE-16GB GPU has "
    "compute capability 6.0.\n"
    "RuntimeError: GPUs with compute capability below 7.0 are not supported.\n"
)


def test_short_paste_reads_the_message_above_an_unknown_typed_error() -> None:
    incident = build_incident(BF16_REFUSAL_ABOVE_A_TYPED_ERROR)
    assert incident.primary is not None and incident.primary.exc_type == "RuntimeError"
    assert not any(line.message.startswith("Bfloat16") for line in incident.error_lines)  # prose while it is known
    report = explain(BF16_REFUSAL_ABOVE_A_TYPED_ERROR)
    assert report.matches and report.matches[0].entry.id == "DTF150"  # bf16 on a GPU older than Ampere
    assert report.incident.primary is not None and report.incident.primary.exc_type == "RuntimeError"  # still shown
    # the answer stands on the line above the exception the paste ends in, not on that exception: medium at most
    assert report.matches[0].confidence is Confidence.MEDIUM
    # the typed line alone stays unknown; in a traceback the lines around it are never read this way
    assert _first(BF16_REFUSAL_ABOVE_A_TYPED_ERROR.splitlines()[1]) is None
    logged = (
        BF16_REFUSAL_ABOVE_A_TYPED_ERROR.splitlines()[0]
        + '\nTraceback (most recent call last):\n  File "/srv/app/main.py", line 3, in <module>\n    run()\n'
        + BF16_REFUSAL_ABOVE_A_TYPED_ERROR.splitlines()[1]
    )
    assert not explain(logged).matches


def test_an_error_printed_before_later_log_output_keeps_its_own_lines_and_its_printed_reading() -> None:
    """Real output (tests/blind32a, accelerate issue 1620): one rank prints the FSDP refusal, then PEFT's trainable
    parameter line, a dated INFO record and a FutureWarning, and only then another rank's traceback. The log records
    are not lines of the message, and the glued reading variants() adds ("torch.float32trainable") stays a candidate
    for matching, never the error shown or the one whose operands are read."""
    import yaml

    log = yaml.safe_load((Path(__file__).parent / "blind32a" / "accelerate-1620.yaml").read_text("utf-8"))["log"]
    primary = build_incident(log).primary
    assert primary is not None and primary.message.split("\n")[0].endswith("but got torch.float16 and torch.float32")
    assert "INFO" not in primary.message and "FutureWarning" not in primary.message
    report = explain(log)
    location = report.location
    assert location is not None and [o.value for o in location.operands] == ["torch.float16", "torch.float32"]
