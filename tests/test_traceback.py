"""Tracebacks as models: frames, chained exceptions, headerless pastes, loose error lines."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dtypefix.matcher.traceback import find_error_lines, parse_stacks

ROOT = Path(__file__).resolve().parents[1]

CHAINED = """Traceback (most recent call last):
  File "/home/user/train.py", line 10, in step
    loss.backward()
RuntimeError: Found dtype Float but expected Half

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/home/user/train.py", line 20, in <module>
    main()
    ^^^^^^
  File "/home/user/train.py", line 18, in main
    raise TrainingFailed("step failed") from exc
__main__.TrainingFailed: step failed
"""


def test_chained_exceptions_are_separate_stacks() -> None:
    stacks = parse_stacks(CHAINED)
    assert [s.exc_type for s in stacks] == ["RuntimeError", "__main__.TrainingFailed"]
    assert stacks[0].chained_to_next == "cause"
    assert stacks[0].frames[0].function == "step" and stacks[0].frames[0].code == "loss.backward()"
    assert [f.function for f in stacks[1].frames] == ["<module>", "main"]


def test_context_chain_marker() -> None:
    text = CHAINED.replace(
        "The above exception was the direct cause of the following exception:",
        "During handling of the above exception, another exception occurred:",
    )
    assert parse_stacks(text)[0].chained_to_next == "context"


def test_multiline_message_is_kept() -> None:
    text = """Traceback (most recent call last):
  File "x.py", line 1, in <module>
ValueError: Please correct the following DeepSpeed config values that mismatch TrainingArguments values:
- ds fp16.enabled=True vs hf fp16|bf16=False
The easiest method is to set these DeepSpeed config values to 'auto'.
"""
    (stack,) = parse_stacks(text)
    assert stack.message.splitlines() == [
        "Please correct the following DeepSpeed config values that mismatch TrainingArguments values:",
        "- ds fp16.enabled=True vs hf fp16|bf16=False",
        "The easiest method is to set these DeepSpeed config values to 'auto'.",
    ]


def test_headerless_paste_starting_at_a_frame() -> None:
    text = """  File "/site-packages/deepspeed/runtime/zero/stage3.py", line 2117, in unscale_and_clip_grads
    self.fp32_partitioned_groups_flat[sub_group_id].grad.mul_(1. / combined_scale)
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cpu!"""
    (stack,) = parse_stacks(text)
    assert stack.frames[0].function == "unscale_and_clip_grads"
    assert stack.message.startswith("Expected all tensors")


def test_bare_exception_type_and_dotted_types() -> None:
    text = 'Traceback (most recent call last):\n  File "a.py", line 1, in f\nException: Current loss scale already at minimum'
    assert parse_stacks(text)[0].exc_type == "Exception"
    text = (
        'Traceback (most recent call last):\n  File "a.py", line 1, in f\ntorch.OutOfMemoryError: CUDA out of memory.'
    )
    assert parse_stacks(text)[0].short_type == "OutOfMemoryError"


def test_error_lines_outside_tracebacks() -> None:
    lines = find_error_lines("some log\nRuntimeError: expected scalar type Float but found Half\nmore")
    assert [(e.exc_type, e.message.splitlines()[0]) for e in lines] == [
        ("RuntimeError", "expected scalar type Float but found Half")
    ]


RICH = """╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮
│ /home/user/ChatGLM-Tuning/finetune.py:115 in main                                                │
│                                                                                                  │
│   112 │   )                                                                                      │
│ ❱ 115 │   trainer.train()                                                                        │
│                                                                                                  │
│ /home/user/.local/lib/python3.8/site-packages/torch/autograd/__init__.py:197 in backward         │
│                                                                                                  │
│ ❱ 197 │   Variable._execution_engine.run_backward(                                               │
╰──────────────────────────────────────────────────────────────────────────────────────────────────╯
RuntimeError: expected scalar type Half but found Float
"""


def test_rich_boxed_traceback() -> None:
    (stack,) = parse_stacks(RICH)
    assert [f.function for f in stack.frames] == ["main", "backward"]
    assert stack.frames[1].file.endswith("torch/autograd/__init__.py") and stack.frames[1].line == 197
    assert stack.complete and stack.message == "expected scalar type Half but found Float"


def test_rich_frames_cut_out_of_their_box_are_read() -> None:
    """A paste of rich's frame lines without the box's top border and header (a report quotes the part it thinks
    matters) still has frames."""
    lines = RICH.splitlines()
    cut = "\n".join(line for line in lines if "Traceback (most recent call last)" not in line and "╭" not in line)
    frames = [f for stack in parse_stacks(cut) for f in stack.frames]
    assert [f.function for f in frames] == ["main", "backward"]


IPYTHON = """---------------------------------------------------------------------------
RuntimeError                              Traceback (most recent call last)
Cell In[7], line 3
      1 inputs = tokenizer("hi", return_tensors="pt")
----> 3 model.generate(**inputs)
File ~/miniconda3/envs/llm/lib/python3.10/site-packages/torch/nn/modules/module.py:1501, in Module._call_impl(self, *args, **kwargs)
   1497 # If we don't have any hooks, we want to skip the rest of the logic in
-> 1501     return forward_call(*args, **kwargs)
File ~/miniconda3/envs/llm/lib/python3.10/site-packages/torch/nn/modules/linear.py:114, in Linear.forward(self, input)
    113 def forward(self, input: Tensor) -> Tensor:
--> 114     return F.linear(input, self.weight, self.bias)
RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Half
"""


def test_ipython_traceback() -> None:
    (stack,) = parse_stacks(IPYTHON)
    assert [f.function for f in stack.frames] == ["<module>", "_call_impl", "forward"]
    assert stack.frames[2].file.endswith("torch/nn/modules/linear.py") and stack.frames[2].line == 114
    assert stack.exc_type == "RuntimeError" and stack.message.startswith("mat1 and mat2 must have")


def test_ipython_frames_pasted_without_their_header_are_read() -> None:
    """A paste cut from a notebook's output below IPython's header (and often above the error line) still has
    frames: IPython's ``File path:line, in function`` lines with their ``-->`` arrows."""
    headless = IPYTHON.split("\n", 4)[4].rsplit("RuntimeError:", 1)[0]  # from the first File line, no error line
    (stack,) = parse_stacks(headless)
    assert [f.function for f in stack.frames] == ["_call_impl", "forward"]
    assert stack.frames[-1].code == "return F.linear(input, self.weight, self.bias)"


# Jupyter (pegasi-ai/reins#6) and rich (HarderThenHarder/transformers_tasks#62) tracebacks, trimmed; the rich box's
# top and bottom border are rich's fixed frame around the lines the report shows.
_JUPYTER = """RuntimeError                              Traceback (most recent call last)
Cell In[16], line 3
      1 generate_text = InstructionTextGenerationPipeline(model=model, tokenizer=tokenizer)
----> 3 generate_text("Look up the boiling point of water.")

File /opt/conda/envs/textgen/lib/python3.10/site-packages/accelerate/hooks.py:165, in add_hook_to_module.<locals>.new_forward(*args, **kwargs)
    163         output = old_forward(*args, **kwargs)
    164 else:
--> 165     output = old_forward(*args, **kwargs)
    166 return module._hf_hook.post_forward(module, output)

RuntimeError: expected scalar type BFloat16 but found Float
"""
_RICH = """╭───────────────────── Traceback (most recent call last) ──────────────────────╮
│ /ml/temp/envs/llm_env/lib/python3.8/site-packages/torch/nn/modules/module.py:1501 in _call_impl  │
│                                                                                                  │
│   1498 │   │   if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks   │
│   1499 │   │   │   │   or _global_backward_pre_hooks or _global_backward_hooks                   │
│   1500 │   │   │   │   or _global_forward_hooks or _global_forward_pre_hooks):                   │
│ ❱ 1501 │   │   │   return forward_call(*args, **kwargs)                                          │
│   1502 │   │   # Do not call functions when jit is used                                          │
╰──────────────────────────────────────────────────────────────────────────────╯
RuntimeError: self and mat2 must have the same dtype
"""


def test_jupyter_and_rich_frames_keep_the_line_that_raised() -> None:
    """The marked line is the frame's source line: it says which release a library file is from."""
    (jupyter,) = parse_stacks(_JUPYTER)
    assert [(f.line, f.function, f.code) for f in jupyter.frames] == [
        (3, "<module>", 'generate_text("Look up the boiling point of water.")'),
        (165, "new_forward", "output = old_forward(*args, **kwargs)"),
    ]
    (rich,) = parse_stacks(_RICH)
    assert [(f.line, f.function, f.code) for f in rich.frames] == [
        (1501, "_call_impl", "return forward_call(*args, **kwargs)")
    ]


def _kb_log(path: str) -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parents[1] / "kb" / path).read_text(encoding="utf-8")


def test_ipython7_and_colab_frames_take_their_line_from_the_arrow() -> None:
    """IPython 7 / Colab name a frame without its line (``[path](https://localhost:8080/#) in f(args)``); the
    ``---->`` arrow below gives it. Real Colab output (open-mmlab/mmdetection3d#1631)."""
    (stack,) = parse_stacks(_kb_log("devices/adam-cuda-step-after-resume-on-torch-1-12-0/mmdet3d-1631.log"))
    assert [(f.file, f.line, f.function) for f in stack.frames] == [
        ("<ipython-input-23-7336b75a740f>", 8, "<module>"),
        ("/usr/local/lib/python3.7/dist-packages/torch/optim/adam.py", 255, "_single_tensor_adam"),
    ]
    assert stack.frames[1].code.startswith("assert not step_t.is_cuda")
    assert stack.complete and stack.exc_type == "AssertionError"


def test_an_ipython7_frame_cut_before_its_arrow_is_left_out_and_the_traceback_is_not_whole() -> None:
    """The paste stops inside peft's frame, above its arrow line (huggingface/autotrain-advanced#324): that frame's
    line is unknown, so it is left out, and the traceback no longer counts as whole (an absent frame is unknown)."""
    (stack,) = parse_stacks(_kb_log("peft/lora-merge-into-bnb-model-on-old-peft/autotrain-324.log"))
    assert [(f.line, f.code) for f in stack.frames] == [(2, "model = model.merge_and_unload()")]
    assert not stack.complete and stack.message.startswith("Cannot merge LORA layers")


def _sample_log(name: str) -> str:
    path = Path(__file__).parent / f"{name}.yaml"
    return str(yaml.safe_load(path.read_text(encoding="utf-8"))["log"])


def test_a_paste_that_lost_its_indentation_keeps_each_frames_source_line() -> None:
    """A forum paste with ``File "..."`` and the code both at column 0 (here behind torchrun's ``[rank0]:``): the line
    under a frame is its code when the next line shows it was one; the last frame, followed by the message, has none
    (real output, tests/blind29a)."""
    text = "\n".join(line.removeprefix("[rank0]: ") for line in _sample_log("blind29a/unsloth-933").splitlines())
    (stack,) = parse_stacks(text)
    frames = {f.line: f.code for f in stack.frames}
    assert frames[393] == "A = flash_attn_func(Q, K, V, causal = True)"
    assert frames[52] == ""


def test_an_error_pasted_above_its_frames_ends_before_the_first_frame() -> None:
    """The report puts the error block first and the frames after it, with no header (tests/blind30a,
    mistral-inference-215): the message's indented continuation lines are its own, the ``File`` lines are not."""
    (line,) = [e for e in find_error_lines(_sample_log("blind30a/mistral-inference-215")) if e.exc_type == "ValueError"]
    assert line.message.endswith("attn_bias   : cuda:0")
    assert "File " not in line.message


_UNTYPED = """\
  File "/opt/venv/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", line 546, in forward
    out = _flash_attn_forward(q, k, v)
"""


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        # the message without its type, as an issue title or a notebook's last line gives it
        ("FlashAttention only support fp16 and bf16 data type", "FlashAttention only support fp16 and bf16 data type"),
        # code (whole, or cut at an open bracket), a progress bar, a launcher's exit line: not a message
        ("return torch.mm(a, b)", ""),
        ("out = f(x,", ""),
        ("45%|████▌     | 9/20 [00:01<00:02, 4.1it/s]", ""),
        ("Process finished with exit code 1", ""),
        # a log line after a cut traceback
        ("[2024-05-11 23:30:33] worker 3 stopped", ""),
        ("2024-05-11 23:30:33 worker 3 stopped", ""),
        ("INFO worker 3 stopped", ""),
        # two paragraphs after the frames are not one message
        ("some words here\n\nmore words there", ""),
    ],
)
def test_a_final_line_after_the_frames_is_the_untyped_message(tail: str, message: str) -> None:
    (stack,) = parse_stacks(_UNTYPED + tail + "\n")
    assert (stack.exc_type, stack.message, stack.error_line) == ("", message, bool(message))


def test_footers_and_prefixed_typed_lines_after_frames_are_not_an_untyped_message() -> None:
    """torch.compile's footer under the user-code frames of its message (a KB example log), and Ray's prefixed
    lines whose typed exception the error-line reader takes (tests/blind30a/lmm-r1-43)."""
    dynamo = (ROOT / "kb/compile/dynamo-fake-tensor-dtype-mismatch/cpu-repro-compiled-ema.log").read_text(
        encoding="utf-8"
    )
    ray = yaml.safe_load((ROOT / "tests/blind30a/lmm-r1-43.yaml").read_text(encoding="utf-8"))["log"]
    for text in (dynamo, ray):
        assert not [s for s in parse_stacks(text) if not s.exc_type and s.message]


def test_a_final_untyped_line_followed_by_more_log_is_not_the_message() -> None:
    """Only the very end of the paste: a line with more output after it is not known to be the message."""
    text = _UNTYPED + 'some words here\n  File "/x/y.py", line 3, in g\n    h()\n'
    assert all(not s.message for s in parse_stacks(text))


def test_ipython_numbered_lines_continue_the_arrow_lines_call() -> None:
    """IPython prints the whole statement; a call left open on the arrow line goes on on the numbered lines below
    it (blind30a/unsloth-1154), until its brackets close."""
    text = (
        "File /opt/venv/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py:546, in FlashAttnFunc.forward(ctx, q)\n"
        "    544 if softmax_scale is None:\n"
        "--> 546 out, q = _flash_attn_forward(\n"
        "    547     q,\n"
        "    548     k,\n"
        "    549 )\n"
        "    550 x = 1\n"
        "RuntimeError: FlashAttention only support fp16 and bf16 data type\n"
    )
    (stack,) = parse_stacks(text)
    assert stack.frames[-1].code == "out, q = _flash_attn_forward(q, k, )"


def test_a_frame_line_wrapped_inside_its_path_is_joined() -> None:
    """tests/blind30a/xtuner-289: the terminal cut the frame line at 80 columns, inside the file name."""
    text = (
        'File "/opt/conda/lib/python3.10/site-packages/xtuner/model/modules/dispatch/in\n'
        'ternlm.py", line 66, in internlm_attn_forward\n'
        "    attn_output = F.scaled_dot_product_attention(\n"
        "RuntimeError: Expected attn_mask dtype to be bool or to match query dtype, but g\n"
    )
    (stack,) = parse_stacks(text)
    frame = stack.frames[0]
    assert (frame.file, frame.line, frame.function) == (
        "/opt/conda/lib/python3.10/site-packages/xtuner/model/modules/dispatch/internlm.py",
        66,
        "internlm_attn_forward",
    )
    assert frame.code == "attn_output = F.scaled_dot_product_attention("


def test_vscode_exception_widget_is_read_outermost_first() -> None:
    """VS Code's debugger shows "Exception has occurred: T" (in Chinese "发生异常: T"), the message, then the frames
    innermost first (tests/blind29a/timellm-101): read as Python prints a traceback, the innermost frame last."""
    log = yaml.safe_load((ROOT / "tests/blind29a/timellm-101.yaml").read_text(encoding="utf-8"))["log"]
    (stack,) = parse_stacks(log)
    assert (stack.exc_type, stack.message) == ("RuntimeError", "expected scalar type BFloat16 but found Float")
    assert [(Path(f.file).name, f.line) for f in stack.frames][-2:] == [("Embed.py", 185), ("Embed.py", 43)]
    english = 'Exception has occurred: ValueError\nbad dtype\n  File "/x/a.py", line 3, in f\n    g()\n'
    english += '  File "/x/b.py", line 9, in <module>\n    f()\n'
    (stack,) = parse_stacks(english)
    assert (stack.exc_type, [f.line for f in stack.frames]) == ("ValueError", [9, 3])
    # a banner with no frames below it is left as it is
    assert parse_stacks("Exception has occurred: ValueError\nbad dtype\n") == []


def test_a_rich_frame_whose_path_the_box_wrapped_is_read_whole() -> None:
    """Real output (tests/blind32a, Huatuo-Llama-Med-Chinese issue 75, Windows): rich wraps a long path at the box's
    width, so the frame line starts inside the file name ("odeling.py:355"); read alone it is a file of the user's."""
    log = (
        "│ C:\\Users\\user\\AppData\\Local\\Programs\\Python\\Python310\\lib\\site-packages\\accelerate\\big_m │\n"
        "│ odeling.py:355 in dispatch_model                                                                 │\n"
        "│                                                                                                  │\n"
        "│   353 │   ):                                                                                     │\n"
        "NotImplementedError: Cannot copy out of meta tensor; no data!\n"
    )
    (stack,) = parse_stacks(log)
    assert [(f.file.rsplit("\\", 2)[-2:], f.line, f.function) for f in stack.frames] == [
        (["accelerate", "big_modeling.py"], 355, "dispatch_model")
    ]
