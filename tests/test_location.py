"""Where it broke (issue 20): owners of frames, the call site, operands tied to expressions, log hints, and how the
first screen and the JSON word them."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from dtypefix.cli.markdown import format_report
from dtypefix.cli.where_words import location_json, location_schema, readable_value, where_lines
from dtypefix.matcher import explain
from dtypefix.matcher.hints import find_hints
from dtypefix.matcher.incident import build_incident
from dtypefix.matcher.location import locate, read_operands
from dtypefix.matcher.owner import OwnerKind, owner_of
from dtypefix.matcher.packages import parse_versions
from dtypefix.matcher.traceback import parse_stacks

RECORDINGS = Path(__file__).parent / "data" / "where"
# The H100 recordings replayed by test_recorded.py (real output, torch 2.11.0+cu130; see each .yaml beside it).
H100 = Path(__file__).parent / "data" / "recorded"


def _line(screen: str, label: str) -> str:
    """The text of a first-screen line (``**Where:** ...``), without its hard line break."""
    found = re.search(rf"^\*\*{label}[:：]\*\* (.*?)\\?$", screen, re.MULTILINE)
    return found.group(1) if found else ""


def _sample_log(name: str) -> str:
    """A real report of a development sample (tests/<sample>/<id>.yaml)."""
    return str(yaml.safe_load((Path(__file__).parent / f"{name}.yaml").read_text(encoding="utf-8"))["log"])


# The example, with the frames Python 3.12 prints (carets under each call).
LINEAR = """Traceback (most recent call last):
  File "/home/user/train.py", line 88, in forward
    logits = self.score(pooled)
             ^^^^^^^^^^^^^^^^^^
  File "/home/user/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1790, in _call_impl
    return forward_call(*args, **kwargs)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/user/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", line 125, in forward
    return F.linear(input, self.weight, self.bias)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: mat1 and mat2 must have the same dtype, but got Float and BFloat16
"""


@pytest.mark.parametrize(
    ("path", "kind", "name", "rest"),
    [
        ("/usr/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", OwnerKind.PACKAGE, "flash-attn",
         "flash_attn_interface.py"),
        ("C:\\py\\Lib\\site-packages\\transformers\\models\\qwen2\\modeling_qwen2.py", OwnerKind.PACKAGE,
         "transformers", "models/qwen2/modeling_qwen2.py"),
        ("/root/.cache/huggingface/modules/transformers_modules/Baichuan2-7B-base/modeling_baichuan.py",
         OwnerKind.REMOTE, "Baichuan2-7B-base", "modeling_baichuan.py"),
        ("/data/code/diffusers/src/diffusers/models/unet_2d_condition.py", OwnerKind.PACKAGE, "diffusers",
         "models/unet_2d_condition.py"),
        ("<cell>", OwnerKind.NOTEBOOK, "", ""),
        ("/tmp/ipykernel_1973/988926859.py", OwnerKind.NOTEBOOK, "", ""),
        ("<frozen runpy>", OwnerKind.INTERNAL, "", ""),
        # the standard library: a macOS framework build, a conda env, Windows
        ("/Library/Developer/CommandLineTools/Library/Frameworks/Python3.framework/Versions/3.9/lib/python3.9/"
         "threading.py", OwnerKind.INTERNAL, "", "threading.py"),
        ("/opt/conda/lib/python3.10/concurrent/futures/thread.py", OwnerKind.INTERNAL, "", "thread.py"),
        ("C:\\Python311\\Lib\\threading.py", OwnerKind.INTERNAL, "", "threading.py"),
        # a Windows conda env's standard library (no python3.x folder), pip's console-script launchers
        ("G:\\CondaEnvs\\whisperx\\lib\\runpy.py", OwnerKind.INTERNAL, "", "runpy.py"),
        ("G:\\CondaEnvs\\whisperx\\Scripts\\whisperx.exe\\__main__.py", OwnerKind.INTERNAL, "", "__main__.py"),
        ("/Library/Frameworks/Python.framework/Versions/3.11/bin/whisperx", OwnerKind.INTERNAL, "", "whisperx"),
        # a ComfyUI custom node is a third-party project, not the user's code (ComfyUI-IPAdapter-Flux, DTF668)
        ("/home/user/ComfyUI/custom_nodes/ComfyUI-IPAdapter-Flux/attention_processor.py", OwnerKind.PACKAGE,
         "ComfyUI-IPAdapter-Flux", "attention_processor.py"),
        ("D:\\ComfyUI\\custom_nodes\\ComfyUI-AnimateDiff-Evolved\\animatediff\\motion_module.py", OwnerKind.PACKAGE,
         "ComfyUI-AnimateDiff-Evolved", "animatediff/motion_module.py"),
        ("C:\\proj\\lib\\utils.py", OwnerKind.USER, "", "utils.py"),
        ("/home/user/lib/python3/mine.py", OwnerKind.USER, "", "mine.py"),
        ("/home/user/project/train.py", OwnerKind.USER, "", "train.py"),
    ],
)  # fmt: skip
def test_owner_of(path: str, kind: OwnerKind, name: str, rest: str) -> None:
    owner = owner_of(path)
    assert (owner.kind, owner.name) == (kind, name)
    if rest:
        assert owner.path == rest


def test_owner_carries_the_installed_version() -> None:
    packages = parse_versions("transformers==4.57.1\nflash-attn==2.8.3\n")
    owner = owner_of("/x/site-packages/flash_attn/flash_attn_interface.py", packages)
    assert owner.version == "2.8.3"


def test_carets_are_kept_on_the_frame() -> None:
    frame = parse_stacks(LINEAR)[0].frames[0]
    assert (frame.code, frame.marked) == ("logits = self.score(pooled)", "self.score(pooled)")


def test_module_call_in_user_code() -> None:
    location = locate(build_incident(LINEAR))
    assert location is not None and location.site is not None
    assert (location.site.file, location.site.line, location.site.owner.kind) == (
        "/home/user/train.py",
        88,
        OwnerKind.USER,
    )
    assert (location.call, location.module, location.op) == ("self.score(pooled)", "score", "linear")
    assert [(o.argument, o.value, o.expression) for o in location.operands] == [
        ("mat1", "Float", "pooled"),
        ("mat2", "BFloat16", "self.score.weight"),
    ]


def test_first_screen_words_the_location_in_both_languages() -> None:
    location = locate(build_incident(LINEAR))
    en = "\n".join(where_lines(location, "en"))
    assert "`train.py:88` in `forward` — your code" in en
    assert "`pooled` (mat1, float32) · `self.score.weight` (mat2, bfloat16)" in en
    assert "`pooled = pooled.to(self.score.weight.dtype)`" in en
    zh = "\n".join(where_lines(location, "zh"))
    assert "**出错位置：**" in zh and "你的代码" in zh and "`pooled = pooled.to(self.score.weight.dtype)`" in zh
    assert "Where" not in zh and "your code" not in zh


def test_functional_call_ties_positional_arguments() -> None:
    text = """Traceback (most recent call last):
  File "/GitHub/COLD-Attack/bleuloss.py", line 47, in batch_log_bleulosscnn_ae
    term = nn.functional.conv2d(out, eye_filter)/ngram
RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same
"""
    location = locate(build_incident(text))
    assert location is not None
    assert [(o.argument, o.expression) for o in location.operands] == [("input", "out"), ("weight", "eye_filter")]
    assert readable_value(location.operands[0].value) == "float16 (cuda)"


def test_library_line_names_the_package_and_the_user_caller() -> None:
    location = locate(build_incident((RECORDINGS / "dev_llama_cuda_input_cpu.log").read_text()))
    assert location is not None and location.site is not None and location.caller is not None
    assert (location.site.owner.kind, location.site.owner.name) == (OwnerKind.PACKAGE, "transformers")
    assert location.caller.file.endswith("dev_llama_cuda_input_cpu.py")
    assert [(o.role, o.value, o.expression) for o in location.operands] == [
        ("input", "cpu", "input_ids"),
        ("others", "cuda:0", "self.embed_tokens.weight"),
    ]
    step = "\n".join(where_lines(location, "en"))
    assert "`input_ids` on cpu is what your code hands it from `dev_llama_cuda_input_cpu.py:" in step


def test_remote_code_gets_the_revision_step() -> None:
    text = """Traceback (most recent call last):
  File "/root/.cache/huggingface/modules/transformers_modules/Baichuan2-7B-base/modeling_baichuan.py", line 205, in forward
    proj = self.W_pack(hidden_states)
  File "/usr/local/lib/python3.8/site-packages/torch/nn/modules/linear.py", line 114, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: mat1 and mat2 must have the same dtype, but got Half and Float
"""
    location = locate(build_incident(text))
    assert location is not None and location.site is not None
    assert location.site.owner.kind is OwnerKind.REMOTE
    words = "\n".join(where_lines(location, "en"))
    assert "trust_remote_code" in words and "revision=" in words


def test_subscript_assignment_is_index_put() -> None:
    location = locate(build_incident((RECORDINGS / "torch_index_put_dtype.log").read_text()))
    assert location is not None
    assert [(o.argument, o.expression) for o in location.operands] == [("destination", "buf"), ("source", "scores")]


def test_first_step_of_an_in_place_write_does_not_offer_autocast() -> None:
    """Autocast never casts in-place ops: for `dst[idx] = src` the first step is the cast alone, while an op that
    autocast does cast (a matmul in the user's line) still offers it."""
    write = locate(build_incident((RECORDINGS / "torch_index_put_dtype.log").read_text()))
    assert write is not None
    step = "\n".join(where_lines(write, "en"))
    assert "`scores = scores.to(buf.dtype)` (an in-place write: `torch.autocast` does not cast it)" in step
    assert "原地写入" in "\n".join(where_lines(write, "zh"))
    matmul = locate(
        build_incident(
            '  File "/home/user/train.py", line 3, in <module>\n'
            "    y = x @ w\n"
            "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16\n"
        )
    )
    assert matmul is not None
    assert "or run that call under `torch.autocast`" in "\n".join(where_lines(matmul, "en"))


def test_only_torch_frames_say_so() -> None:
    text = """  File "/venv/lib/python3.12/site-packages/torch/nn/modules/conv.py", line 456, in _conv_forward
    return F.conv2d(input, weight, bias, self.stride,
RuntimeError: Input type (float) and bias type (c10::Half) should be the same
"""
    location = locate(build_incident(text))
    assert location is not None and location.in_torch
    assert "the line that called it is not in the paste" in "\n".join(where_lines(location, "en"))


def test_no_location_without_frames_or_operands() -> None:
    assert locate(build_incident("RuntimeError: CUDA error: an illegal memory access was encountered")) is None


def test_hints_from_library_warnings() -> None:
    text = (
        "UserWarning: You are calling .generate() with the `input_ids` being on a device type different than your "
        "model's device. `input_ids` is on cpu, whereas the model is on cuda. You may experience unexpected behaviors\n"
        "Some parameters are on the meta device because they were offloaded to the cpu.\n"
    )
    hints = find_hints(text)
    assert [(h.key, h.value, h.other_value) for h in hints] == [
        ("input-ids-device", "cpu", "cuda"),
        ("offload", "cpu", ""),
    ]


def test_the_silent_cast_warning_names_the_dtype_the_query_is_cast_to() -> None:
    """transformers' flash-attention path warns before the kernel, naming the dtype it casts the float32 query to
    (real output, tests/heldout/funmusic-18): flash-attn's check reads that query, and the warning gives its dtype."""
    text = _sample_log("heldout/funmusic-18")
    (hint,) = [h for h in find_hints(text) if h.key == "hidden-states-float32"]
    assert (hint.value, hint.other_value) == ("float32", "torch.float32")
    location = locate(build_incident(text))
    assert location is not None
    (query,) = [o for o in location.operands if o.role == "query"]
    assert (readable_value(query.value), query.origin) == ("float32", "log")
    cast = find_hints(text.replace("in torch.float32.", "in torch.bfloat16."))
    assert [h.other_value for h in cast if h.key == "hidden-states-float32"] == ["torch.bfloat16"]
    seen = [
        _line(format_report(explain(text), lang), label)
        for lang, label in (("en", "Seen in the log"), ("zh", "日志里的提示"))
    ]
    assert seen[0].endswith("and casts them to torch.float32 before the kernel")
    assert seen[1].endswith("并会在调用算子前把它们转成 torch.float32")


def test_json_location_shape() -> None:
    data = location_json(locate(build_incident(LINEAR)))
    assert data is not None
    assert data["site"]["owner"] == {"kind": "user", "name": None, "version": None, "path": "train.py"}
    assert data["operands"][1] == {
        "argument": "mat2",
        "role": "weight",
        "kind": "dtype",
        "value": "BFloat16",
        "readable": "bfloat16",
        "unlike": None,
        "expression": "self.score.weight",
        "origin": "message",
        "said": None,
        "said_at": None,
        "gpu": None,
    }
    assert data["first_step"]["en"].startswith("make both sides one dtype")


# Each H100 recording, and the sides the first screen should name: (argument, readable value, expression, origin).
SIDES = {
    # SDPA printed the dtypes in a warning at the same line before "No available kernel".
    "torch-sdpa-flash-fp32": [
        ("query", "float32", "q", "warning"),
        ("key", "float32", "k", "warning"),
        ("value", "float32", "v", "warning"),
    ],
    "dev-mask-created-in-forward": [("self", "cuda:0", "att", "message"), ("mask", "cpu", "mask == 0", "message")],
    # nn.LSTM called as a module: its second positional argument is the hidden state.
    "dev-tensor-created-in-forward": [
        ("input", "cuda:0", "self.emb(idx)", "message"),
        ("hidden", "cpu", "(h0, c0)", "message"),
    ],
    # A loss module's forward(input, target); the int64 the kernel needs is a requirement, tied to nothing.
    "torch-ce-float-labels": [("target", "float32", "labels", "message"), ("expected", "int64", "", "message")],
    # The NCCL backend's own log line says which device the process group takes.
    "dev-nccl-allreduce-cpu-tensor": [("tensor", "cpu", "loss_for_logging", "message"), ("process group", "cuda", "", "log")],
    "dev-meta-forward": [("tensor", "meta", "next_tokens", "message"), ("destination", "cpu", "next_tokens.tolist()", "line")],
    # transformers' `to` only forwards *args/**kwargs: the user's `model.to("cuda")` is tied instead.
    "dev-meta-to-cuda": [("tensor", "meta", "model", "message"), ("destination", "cuda", '"cuda"', "line")],
    "torch-gradscaler-fp16-params": [("gradients", "float16", "", "message"), ("expected", "float32", "", "message")],
    "torch-gradscaler-bf16-params": [("gradients", "bfloat16", "", "message"), ("expected", "float32", "", "message")],
    "dev-optimizer-state-wrong-device": [("first tensor", "cuda:0", "", "message"), ("second tensor", "cpu", "", "message")],
    "trainer-fp16-and-bf16": [("fp16", "float16", "", "message"), ("bf16", "bfloat16", "", "message")],
    # NumPy has no bfloat16: the floating dtypes it has are what the tensor can be converted to.
    "torch-bf16-numpy": [
        ("tensor", "bfloat16", "logits.detach().cpu()", "message"),
        ("numpy floating dtypes", "float16, float32, float64", "", "message"),
    ],
    # view_as_complex takes half, float and double tensors: the list is the side that refuses a bf16 tensor.
    "torch-bf16-view-as-complex": [
        ("tensor", "bfloat16", "xq.reshape(*xq.shape[:-1], -1, 2)", "message"),
        ("dtype support list", "float16, float32, float64", "", "message"),
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", list(SIDES))
def test_sides_of_h100_recordings(name: str) -> None:
    location = locate(build_incident((H100 / f"h100-{name}.log").read_text(encoding="utf-8")))
    assert location is not None
    got = [(o.argument, readable_value(o.value) if o.value else "", o.expression, o.origin) for o in location.operands]
    assert got == SIDES[name]
    data = location_json(location)
    jsonschema.validate(data, location_schema())


@pytest.mark.parametrize(("count", "devices"), [("0", "cpu"), ("1", "cuda:0"), ("2", "cuda:0,cuda:1")])
def test_the_devices_a_machine_has(count: str, devices: str) -> None:
    """``device_count() is N``: the machine's side is the devices it has, so the saved index can be mapped onto one."""
    message = f"Attempting to deserialize object on CUDA device 3 but torch.cuda.device_count() is {count}."
    _, (saved, machine) = read_operands(message)
    assert (saved.value, machine.value, machine.role) == ("cuda:3", devices, "required")


def test_a_triton_branch_mismatch_of_shape_only_names_no_dtypes() -> None:
    """Triton prints the same wording when the two branches differ in shape only: that is no dtype mismatch."""
    message = "Mismatched type for k_offs between then block (<['128'], int32>) and else block (<['32'], int32>)"
    assert read_operands(message) == ("", ())
    _, (then, other) = read_operands(message.replace("int32>)", "fp16>)", 1))
    assert (then.value, other.value) == ("fp16", "int32")


def test_a_list_of_dtypes_in_both_languages() -> None:
    """The dtypes an op takes, as torch names them; in Chinese joined as Chinese lists are."""
    report = explain((H100 / "h100-torch-bf16-view-as-complex.log").read_text(encoding="utf-8"))
    en = format_report(report, "en")
    zh = format_report(report, "zh")
    assert "dtypes the operator takes (float16, float32, float64)" in en
    assert "算子支持的 dtype（float16、float32、float64）" in zh


def test_torch_internal_frames_are_not_the_site() -> None:
    """torch.load fails deep in torch/_weights_only_unpickler.py: the line to fix is the user's torch.load call."""
    location = locate(build_incident((H100 / "h100-dev-torch-load-cuda1.log").read_text(encoding="utf-8")))
    assert location is not None and location.site is not None
    assert (location.site.file.rsplit("/", 1)[-1], location.site.line) == ("dev_torch_load_cuda1.py", 11)
    assert [(o.argument, o.value) for o in location.operands] == [
        ("saved storage", "cuda:1"),
        ("this machine", "cuda:0"),
    ]


def test_the_call_the_next_frame_entered() -> None:
    """``nn.Linear(16, 4).to(device)`` failed in Module.to (the next frame), not in the constructor."""
    location = locate(build_incident((H100 / "h100-dev-invalid-device-ordinal.log").read_text(encoding="utf-8")))
    assert location is not None and location.call == "nn.Linear(16, 4).to(device)"


def test_a_cause_screen_names_the_sides_under_the_where_line() -> None:
    """A specific cause (DTF465) answers; the sides still show, in the same paragraph as the line, in both
    languages, and nothing English is left in the Chinese."""
    from dtypefix.cli.markdown import format_report
    from dtypefix.matcher import explain

    report = explain((H100 / "h100-dev-optimizer-state-wrong-device.log").read_text(encoding="utf-8"))
    assert not report.matches[0].entry.is_family
    en = format_report(report, "en")
    assert (
        "your code (not an installed package)\\\n**Operands:** first tensor (cuda:0, not on the line) · second " in en
    )
    zh = format_report(report, "zh")
    assert "**两侧张量：** 第一个张量（cuda:0，这一行看不出是哪个表达式） · 第二个张量（cpu，" in zh


def test_a_value_from_a_warning_says_so() -> None:
    from dtypefix.cli.markdown import format_report
    from dtypefix.matcher import explain

    report = explain((H100 / "h100-torch-sdpa-flash-fp32.log").read_text(encoding="utf-8"))
    said = "`q` (query, float32) · `k` (key, float32) · `v` (value, float32) — from the warning at this line"
    assert said in format_report(report, "en")
    assert "`v`（value，float32）（均来自这一行先打印的警告）" in format_report(report, "zh")


def test_augmented_assignment_writes_into_its_target() -> None:
    """kb/torch/inplace-float-update-of-integer-buffer/hierfl-1.log: a float product added in place into a Long
    buffer; the sides keep the line's own spelling."""
    kb = Path(__file__).resolve().parents[1] / "kb" / "torch" / "inplace-float-update-of-integer-buffer"
    location = locate(build_incident((kb / "hierfl-1.log").read_text(encoding="utf-8")))
    assert location is not None
    assert [(o.argument, o.value, o.expression) for o in location.operands] == [
        ("result", "Float", "torch.mul(w[i][k], s_num[i]/temp_sample_num)"),
        ("output", "Long", "w_avg[k]"),
    ]


@pytest.mark.parametrize(
    ("line", "key", "value", "other_value"),
    [
        # The NCCL backend's own warning line (H100 recording dev_nccl_allreduce_cpu_tensor).
        ("[rank0]:[W1123 00:34:59.278767509 ProcessGroupNCCL.cpp:1575] Warning: WARNING: destroy_process_group() was "
         "not called before program exit, which can leak resources.", "process-group-backend", "cuda", "nccl"),
        # transformers' check before quantized models are dispatched (census transformers[31]).
        ("Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized "
         "model.", "offload", "cpu or disk", ""),
        # FSDP2's policy dataclass as Python prints it, and AcceleratorState's repr line.
        ("MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, output_dtype=None, "
         "cast_forward_inputs=True)", "fsdp-param-dtype", "torch.bfloat16", "torch.float32"),
        ("Mixed precision type: bf16", "accelerate-precision", "bf16", ""),
        # Both printed by accelerate before a crash in a public report (older accelerate's "meta device device").
        ("WARNING:root:Some parameters are on the meta device device because they were offloaded to the cpu.",
         "offload", "cpu", ""),
        ("WARNING:accelerate.big_modeling:You shouldn't move a model that is dispatched using accelerate hooks.",
         "dispatched-model-moved", "device_map", ""),
        # The dtype a model is loaded or run in, as real logs set it: a traceback's from_pretrained line
        # (kb/peft/quantized-model-spilled-to-cpu-or-disk/llama-chinese-123.log), an arguments repr
        # (kb/accelerate/trainer-apex-fp16-backend-without-apex-amp/apex-4.57.6.log), a launcher's flags
        # (kb/frameworks/deepseek-moe-remote-code-index-put-dtype/lf-2639.log, tests/blind28b/llava-774).
        ("model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path,device_map='auto',"
         "torch_dtype=torch.float16,load_in_8bit=True)", "model-dtype", "float16", ""),
        ('args = TrainingArguments(output_dir="out", fp16=True, half_precision_backend="apex")', "model-dtype",
         "float16", ""),
        ("    --fp16 True \\", "model-dtype", "float16", ""),
    ],
)  # fmt: skip
def test_more_hints(line: str, key: str, value: str, other_value: str) -> None:
    assert [(h.key, h.value, h.other_value) for h in find_hints(line)] == [(key, value, other_value)]


def test_a_required_side_is_not_missing_from_the_line() -> None:
    location = locate(build_incident((H100 / "h100-torch-ce-float-labels.log").read_text(encoding="utf-8")))
    en = "\n".join(where_lines(location, "en"))
    assert "`labels` (target, float32) · expected (int64)\n" in en + "\n"


BLIND = Path(__file__).parent


def _blind(name: str) -> str:
    """The log of a report of an earlier blind sample (development data now)."""
    import yaml

    return str(yaml.safe_load((BLIND / f"{name}.yaml").read_text(encoding="utf-8"))["log"])


def test_a_library_line_with_devices_gets_a_device_step() -> None:
    """accelerate's hook only hands on ``(*args, **kwargs)``: the line is transformers' embedding call above it. Which
    device the message prints first is the embedding kernel's order (its weight before the ids), not the order of
    ``self.embed_tokens(input_ids)``: the two devices are shown untied, not given to the call's argument and weight."""
    location = locate(build_incident(_blind("blind20/peft-776")))
    assert location is not None and location.site is not None
    assert (location.site.owner.name, location.site.line) == ("transformers", 651)
    en = "\n".join(where_lines(location, "en"))
    assert "first tensor (cuda:1, not on the line) · second tensor (cuda:0, not on the line)" in en
    assert "`input_ids` (" not in en
    assert "keep what you hand it on one device" in en and "one dtype" not in en
    assert "让你传给它的东西都在同一个设备上" in "\n".join(where_lines(location, "zh"))


def test_a_wrapper_that_forwards_its_arguments_is_not_the_line() -> None:
    """transformers' ``to`` only passes ``model.to("cuda")`` on to torch: the user's line is the call."""
    location = locate(build_incident((H100 / "h100-dev-meta-to-cuda.log").read_text(encoding="utf-8")))
    assert location is not None and location.site is not None
    assert location.site.owner.kind is OwnerKind.USER and location.site.line == 10
    assert [(o.expression, o.value) for o in location.operands] == [("model", "meta"), ('"cuda"', "cuda")]


def test_a_settings_check_gets_no_generic_library_step() -> None:
    location = locate(build_incident((H100 / "h100-trainer-fp16-and-bf16.log").read_text(encoding="utf-8")))
    assert location is not None and location.op == "config"
    assert not any("First step here" in line for line in where_lines(location, "en"))


def test_caret_markers_pick_the_binary_operation() -> None:
    """Python 3.12 underlines ``grad_y.t() @ h`` (``~~~^~~``) on a line that also holds an assignment and a comment."""
    text = (H100 / "h100-autograd-fn-autocast-no-custom-fwd.log").read_text(encoding="utf-8")
    location = locate(build_incident(text))
    assert location is not None and location.call == "grad_y.t() @ h"
    assert [(o.argument, readable_value(o.value), o.expression) for o in location.operands] == [
        ("mat1", "float32", "grad_y.t()"),
        ("mat2", "bfloat16", "h"),
    ]


def test_no_cast_towards_a_device_literal() -> None:
    """kb/family/meta-tensor/lora-scripts-529.log: ``unet.to("cpu")`` on a meta model; the literal is where the data
    should go, not a tensor to cast the model towards."""
    kb = Path(__file__).resolve().parents[1] / "kb" / "family" / "meta-tensor" / "lora-scripts-529.log"
    location = locate(build_incident(kb.read_text(encoding="utf-8")))
    assert location is not None
    assert [(o.argument, o.value, o.expression) for o in location.operands] == [
        ("tensor", "meta", "unet"),
        ("destination", "cpu", '"cpu"'),
    ]
    assert ".to(" not in "\n".join(where_lines(location, "en"))


@pytest.mark.parametrize(
    ("log", "cast"),
    [
        # A process group, a Python scalar and an LSTM's (h0, c0) tuple have no .to(): no cast is offered.
        ("kb/fsdp/fsdp2-cpu-offload-grad-norm-on-nccl-only-group/hyper-parallel-612.log", ""),
        ("tests/data/recorded/h100-torch-fp16-masked-fill-overflow.log", ""),
        ("tests/data/recorded/h100-dev-tensor-created-in-forward.log", ""),
        # An operation as the side to cast towards keeps its brackets before .dtype.
        (
            "kb/frameworks/openai-clip-fp16-model-meets-float32-tensors/modelmetamers-12.log",
            "self.zeroshot_weights = self.zeroshot_weights.to((100. * image_features).dtype)",
        ),
    ],
)
def test_casts_only_between_tensors(log: str, cast: str) -> None:
    from dtypefix.cli.where_words import _cast

    path = Path(__file__).resolve().parents[1] / log
    location = locate(build_incident(path.read_text(encoding="utf-8")))
    assert location is not None and _cast(location) == cast


def test_hint_values_in_chinese_have_no_english_joins() -> None:
    """transformers' "Some modules are dispatched on the CPU or the disk" (census transformers[31])."""
    from dtypefix.matcher.location import Location

    hints = find_hints("Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit")
    zh = "\n".join(where_lines(Location(None, False, None, "", "", "", (), hints), "zh"))
    assert "accelerate 把部分参数卸载到了 cpu或disk" in zh and " or " not in zh


def test_a_stack_of_standard_library_frames_names_no_line() -> None:
    """A trace cut after Python's own threading frames (a web UI's loader thread) shows no line of anybody's code to
    fix: no Where line, rather than "threading.py — your code"."""
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/threading.py", line 1016, in _bootstrap_inner\n'
        "    self.run()\n"
        '  File "/usr/lib/python3.10/threading.py", line 953, in run\n'
        "    self._target(*self._args, **self._kwargs)\n"
        "TypeError: Trying to convert BFloat16 to the MPS backend but it does not have support for that dtype.\n"
    )
    from dtypefix.matcher import explain

    location = explain(log).location
    assert location is None or location.site is None


def test_a_shortened_torch_path_is_torch_not_the_users_code() -> None:
    """``torch/utils/_device.py`` as a reporter shortened it: the failing line is the caller's, not torch's."""
    from dtypefix.matcher import explain

    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/chat.py", line 12, in <module>\n'
        "    out = model(pixel_values)\n"
        '  File "torch/utils/_device.py", line 78, in __torch_function__\n'
        "    return func(*args, **kwargs)\n"
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
    )
    site = explain(log).location.site
    assert (site.file, site.line) == ("/home/user/chat.py", 12)


@pytest.mark.parametrize(
    ("log", "node", "line", "code", "backward"),
    [
        (H100 / "h100-torch-fp16-overflow-nan-anomaly.log", "PowBackward0", 13, "loss = ((model(x) - y) ** 2).mean()",
         "loss.backward()"),
        (RECORDINGS / "cpu_inplace_anomaly.log", "SigmoidBackward0", 6, "h = torch.sigmoid(x @ w)", "loss.backward()"),
        (RECORDINGS / "cpu_invalid_grad_anomaly.log", "ScaleBackward", 16, "y = Scale.apply(x.half())",
         "y.float().sum().backward()"),
        (RECORDINGS / "cpu_module_nan_anomaly.log", "SqrtBackward0", 12, "return torch.sqrt(h.float() - 100.0)",
         "out.nan_to_num().sum().backward()"),
    ],
)  # fmt: skip
def test_anomaly_mode_forward_trace_is_the_line(log: Path, node: str, line: int, code: str, backward: str) -> None:
    """Anomaly mode prints the forward call that built the failing backward node before the traceback, which ends in
    ``.backward()``: the Where line names the forward line and keeps the backward call as context."""
    location = locate(build_incident(log.read_text()))
    assert location is not None and location.site is not None and location.backward is not None
    assert (location.traced, location.site.line, location.site.code) == (node, line, code)
    assert location.site.owner.kind is OwnerKind.USER
    assert location.backward.code == backward
    en, zh = ("\n".join(where_lines(location, lang)) for lang in ("en", "zh"))
    assert f":{line}` in `" in en and f"anomaly mode (`set_detect_anomaly`) traced for `{node}`" in en
    assert f"(`{backward}`)" in en
    assert f":{line}` 函数" in zh and f"为 `{node}` 追溯到的前向调用" in zh and f"（`{backward}`）发起" in zh
    document = location_json(location)
    jsonschema.validate(document, location_schema())
    assert document is not None and document["site"]["line"] == line
    assert document["anomaly"]["node"] == node and document["anomaly"]["backward"]["code"] == backward


def test_anomaly_trace_of_the_node_the_message_names() -> None:
    """Two warnings in one log (two failing runs, two ranks): the trace of the node the final message names."""
    text = (RECORDINGS / "cpu_inplace_anomaly.log").read_text() + (
        H100 / "h100-torch-fp16-overflow-nan-anomaly.log"
    ).read_text()
    location = locate(build_incident(text))
    assert location is not None and location.site is not None
    assert (location.traced, location.site.line) == ("PowBackward0", 13)


def test_no_forward_trace_keeps_the_traceback_line() -> None:
    """Without anomaly mode's warning the backward call is the line; a forward-pass error ignores an earlier trace."""
    text = (H100 / "h100-torch-fp16-overflow-nan-anomaly.log").read_text()
    start, end = text.index("/opt/torch"), text.index("Traceback (most recent call last)")
    plain = text[:start] + text[end:]
    assert "Error detected" not in plain and plain.count("File ") == 4
    location = locate(build_incident(plain))
    assert location is not None and location.site is not None
    assert (location.traced, location.backward, location.site.code) == ("", None, "loss.backward()")
    forward_error = (RECORDINGS / "cpu_inplace_anomaly.log").read_text() + LINEAR
    location = locate(build_incident(forward_error))
    assert location is not None and location.site is not None
    assert (location.traced, location.site.file) == ("", "/home/user/train.py")
    assert location_json(location)["anomaly"] is None  # type: ignore[index]


# RVC-Boss/GPT-SoVITS#526, as posted (a GTX 1050 Ti: no fp16 tensor cores); the user's line gives both settings.
CTRANSLATE2 = r"""loading faster whisper model: large-v3 large-v3
Traceback (most recent call last):
  File "D:\tools\ai\GPT-SoVITS-beta0217\tools\asr\fasterwhisper_asr.py", line 49, in execute_asr
    model = WhisperModel(model_path, device="cuda", compute_type=precision)
  File "D:\tools\ai\GPT-SoVITS-beta0217\runtime\lib\site-packages\faster_whisper\transcribe.py", line 130, in __init__
    self.model = ctranslate2.models.Whisper(
ValueError: Requested float16 compute type, but the target device or backend do not support efficient float16 computation.
"""


def test_a_setting_refused_in_a_library_is_tied_on_the_users_call() -> None:
    """CTranslate2 refuses the compute type inside faster-whisper's line, which only shows ``Whisper(``: the two
    settings are the keywords of the user's call above it."""
    location = locate(build_incident(CTRANSLATE2))
    assert location is not None and location.site is not None and location.caller is not None
    assert location.site.owner.name == "faster-whisper" and location.caller.line == 49
    assert [(o.argument, o.value, o.expression, o.origin) for o in location.operands] == [
        ("compute_type", "float16", "precision", "message"),
        ("compute device", "cuda", '"cuda"', "line"),
    ]
    assert '`precision` (compute_type, float16) · `"cuda"` (compute device, cuda)' in "\n".join(
        where_lines(location, "en")
    )
    assert '`precision`（compute_type，float16） · `"cuda"`（计算设备，cuda）' in "\n".join(where_lines(location, "zh"))


@pytest.mark.parametrize(
    ("code", "message", "index"),
    [
        # PyG's scatter (tests/blind30b/pyg-8740): Tensor.scatter_add_(dim, index, src)
        (
            "return src.new_zeros(size).scatter_add_(dim, index, src)",
            "scatter(): Expected dtype int64 for index",
            "index",
        ),
        ("out = torch.scatter_reduce(x, 0, ids, vals, 'sum')", "scatter(): Expected dtype int64 for index", "ids"),
        ("rows = table.index_select(0, idx)", "index_select(): Expected dtype int32 or int64 for index", "idx"),
        ("x.index_fill_(1, positions, 0.0)", "index_fill_(): Expected dtype int64 for index", "positions"),
    ],
)
def test_index_methods_tie_the_index_and_show_it_is_not_the_required_dtype(code: str, message: str, index: str) -> None:
    text = f'Traceback (most recent call last):\n  File "/home/user/train.py", line 9, in f\n    {code}\nRuntimeError: {message}\n'
    location = locate(build_incident(text))
    assert location is not None
    side = next(o for o in location.operands if o.role == "index")
    assert (side.expression, side.value) == (index, "")
    assert side.unlike in ("int64", "int32 or int64")


def test_flash_attn_rotary_call_ties_input_and_cos() -> None:
    """flash-attn's apply_rotary_emb(x, cos, sin) as transformers' vision rotary path calls it (the call of
    tests/blind30a/vlm-r1-331's report, one frame up from flash-attn's assert)."""
    text = (
        'Traceback (most recent call last):\n  File "/home/user/vision.py", line 12, in apply_rotary_pos_emb_flashatt\n'
        "    q_embed = apply_rotary_emb(q.float(), cos, sin).type_as(q)\n"
        "AssertionError: Input and cos/sin must have the same dtype, got torch.float32 and torch.bfloat16\n"
    )
    location = locate(build_incident(text))
    assert location is not None
    assert [(o.role, o.expression, readable_value(o.value)) for o in location.operands] == [
        ("input", "q.float()", "float32"),
        ("cos", "cos", "bfloat16"),
    ]


def test_a_call_inside_an_augmented_assignment_is_the_op() -> None:
    """PEFT 0.2's ``result += self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling`` with torch's linear
    below it: a module call on the right raised before anything was added, so ``result`` is no side of it; which of
    the nested module calls it was, the frames do not say (no carets), so the sides stay untied."""
    kb = Path(__file__).resolve().parents[1] / "kb" / "peft" / "lora-branch-without-input-cast-on-peft-before-0-3"
    location = locate(build_incident((kb / "promptcblue-19.log").read_text(encoding="utf-8")))
    assert location is not None
    assert [(o.argument, readable_value(o.value), o.expression) for o in location.operands] == [
        ("expected", "float16", ""),
        ("found", "float32", ""),
    ]


def test_an_augmented_assignment_that_raised_itself_keeps_its_sides() -> None:
    """``total += loss.float()`` with no frame below: the in-place add raised, its sides are the target and value."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/train.py", line 40, in <module>\n'
        "    total += loss.float()\n"
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!\n"
    )
    location = locate(build_incident(text))
    assert location is not None
    assert [(o.value, o.expression) for o in location.operands] == [("cpu", "total"), ("cuda:0", "loss.float()")]


def test_torch_2_0_bare_self_and_mat2_names_the_sides_without_values() -> None:
    """tests/blind31a/textgen-4074: torch 2.0 printed "self and mat2 must have the same dtype" with no dtypes; PEFT's
    ``F.linear(x, transpose(self.weight, ...), bias=self.bias)`` runs addmm(bias, x, weight.t()): self is the bias."""
    location = locate(build_incident(_sample_log("blind31a/textgen-4074")))
    assert location is not None
    assert [(o.argument, o.value, o.expression) for o in location.operands] == [
        ("self", "", "self.bias"),
        ("mat2", "", "transpose(self.weight, self.fan_in_fan_out)"),
    ]
    assert "`self.bias` (self) · `transpose(self.weight, self.fan_in_fan_out)` (mat2)" in _line(
        format_report(explain(_sample_log("blind31a/textgen-4074"))), "Operands"
    )


def test_a_wrapper_another_package_calls_directly_is_the_line() -> None:
    """tests/blind29b/darts-2326: Lightning's ``self.model.to(self.root_device)`` calls lightning_fabric's ``to``,
    whose ``super().to(*args, **kwargs)`` raised in torch: fabric's line is named, the user's cell as its caller,
    and the sides are what Lightning's line handed on."""
    location = locate(build_incident(_sample_log("blind29b/darts-2326")))
    assert location is not None and location.site is not None and location.caller is not None
    assert (location.site.owner.name, location.site.line) == ("lightning-fabric", 54)
    assert location.caller.owner.kind is OwnerKind.NOTEBOOK
    first = location.operands[0]
    assert (first.expression, readable_value(first.value)) == ("self.model", "float64")


def test_self_of_addmm_is_the_bias_f_linear_passes() -> None:
    """tests/blind27/joycaption-50: ``linear(attn_output, out_proj_weight, out_proj_bias)`` inside
    ``multi_head_attention_forward`` runs addmm(bias, input, weight.t()), whose check compares self (the bias) with mat2
    (the weight) before the input: "self and mat2 ... Half and Byte" names the bias and the packed weight."""
    location = locate(build_incident(_sample_log("blind27/joycaption-50")))
    assert location is not None
    assert [(o.argument, readable_value(o.value), o.expression) for o in location.operands] == [
        ("self", "float16", "out_proj_bias"),
        ("mat2", "uint8", "out_proj_weight"),
    ]


def test_carets_under_the_inner_module_call_of_an_augmented_assignment() -> None:
    """kb/.../peft-0.2.0-fp16-generate.log (Python 3.11 carets under ``self.lora_A(self.lora_dropout(x))``): the
    float16 side is what goes into ``lora_A``, and its float32 weight the other, not the ``result`` being added to."""
    kb = Path(__file__).resolve().parents[1] / "kb" / "peft" / "lora-branch-without-input-cast-on-peft-before-0-3"
    location = locate(build_incident((kb / "peft-0.2.0-fp16-generate.log").read_text(encoding="utf-8")))
    assert location is not None
    assert [(readable_value(o.value), o.expression) for o in location.operands] == [
        ("float16", "self.lora_dropout(x)"),
        ("float32", "self.lora_A.weight"),
    ]


# PEFT's later LoRA forward takes the adapter's modules out of their dicts into local names first.
LORA_LOCALS = """Traceback (most recent call last):
  File "/usr/lib/python3.10/site-packages/peft/tuners/lora/layer.py", line 509, in forward
    result = result + lora_B(lora_A(dropout(x))) * scaling
  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1568, in _call_impl
    result = forward_call(*args, **kwargs)
  File "/usr/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 114, in forward
    return F.linear(input, self.weight, self.bias)
RuntimeError: expected scalar type Float but found BFloat16
"""


def test_a_sum_around_nested_module_calls_is_not_the_op() -> None:
    """Without carets, which of ``lora_B`` / ``lora_A`` entered torch's linear the frames do not say: neither the sum's
    sides nor the outer module's are named."""
    location = locate(build_incident(LORA_LOCALS))
    assert location is not None
    assert [(readable_value(o.value), o.expression) for o in location.operands] == [("float32", ""), ("bfloat16", "")]


@pytest.mark.parametrize(
    ("expression", "kind", "value"),
    [
        ("x.half()", "dtype", "float16"),
        ("x.half()", "device", ""),
        ("x.half().cuda()", "device", "cuda"),
        ("x.half().to(self.device)", "dtype", "float16"),
        ("x[0].view(-1).float()", "dtype", "float32"),
        ("x.to(torch.bfloat16)", "dtype", "torch.bfloat16"),
        ("x.to('cuda:1')", "device", "cuda:1"),
        ("x.cuda(1)", "device", "cuda:1"),
        ("x.to(device='cpu', dtype=torch.float16)", "device", "cpu"),
        ("torch.tensor([1, 2], dtype=torch.long)", "dtype", "torch.long"),
        ("torch.zeros(3, device=torch.device('cuda', 1))", "device", "cuda:1"),
        # what the code does not settle: a factory's default, another tensor's dtype, a dtype variable
        ("torch.zeros(3)", "dtype", ""),
        ("x.half().to(other)", "dtype", ""),
        ("x.to(dtype=y.dtype)", "dtype", ""),
        ("x.to(self.device)", "device", ""),
        ("pooled", "dtype", ""),
    ],
)
def test_the_value_an_expressions_own_code_fixes(expression: str, kind: str, value: str) -> None:
    from dtypefix.matcher.literal import fixed_value

    assert fixed_value(expression, kind) == value


@pytest.mark.parametrize(
    "log",
    [
        "kb/torch/embedding-indices-not-integer/ccsmeth-57.log",
        "kb/torch/loss-class-weights-dtype-differs-from-logits/cpu-repro-ce_weight_half_buffer.log",
        "kb/torch/view-as-complex-on-bf16-tensor/pytorch-95100.log",
    ],
)
def test_a_literal_on_the_line_agrees_with_the_message_where_both_give_the_value(log: str) -> None:
    """Real output whose message prints the dtype of a side tied to ``kmer.int()`` / ``logits.float()`` /
    ``torch.rand(32, 2).bfloat16()``: the literal alone gives the same dtype (what it gives when the message is bare)."""
    from dtypefix.matcher.literal import fixed_value

    path = Path(__file__).resolve().parents[1] / log
    location = locate(build_incident(path.read_text(encoding="utf-8")))
    assert location is not None
    read = [(readable_value(o.value).split(" ")[0], fixed_value(o.expression, o.kind)) for o in location.operands]
    pairs = [(value, readable_value(fixed)) for value, fixed in read if fixed]
    assert pairs and all(value == fixed for value, fixed in pairs)


def test_a_bare_message_takes_a_sides_value_from_its_literal() -> None:
    """torch 2.0's "mat1 and mat2 must have the same dtype" prints no dtypes; ``self.score(pooled.half())`` still says
    what mat1 is, and the weight stays without a value."""
    log = LINEAR.replace("self.score(pooled)", "self.score(pooled.half())").replace(", but got Float and BFloat16", "")
    location = locate(build_incident(log))
    assert location is not None
    assert [(o.argument, o.value, o.expression, o.origin) for o in location.operands] == [
        ("mat1", "float16", "pooled.half()", "line"),
        ("mat2", "", "self.score.weight", "message"),
    ]
    assert (
        _line(format_report(explain(log)), "Operands") == "`pooled.half()` (mat1, float16) · `self.score.weight` (mat2)"
    )


def test_item_on_a_meta_tensor_copies_to_the_host() -> None:
    """kb/family/meta-tensor/qwen25omni-110.log: generate's ``.item()`` on a tensor left on the meta device after
    accelerate offloaded parameters; item() reads into a Python number, so the destination is the CPU."""
    kb = Path(__file__).resolve().parents[1] / "kb" / "family" / "meta-tensor" / "qwen25omni-110.log"
    screen = format_report(explain(kb.read_text(encoding="utf-8")))
    assert _line(screen, "Operands") == "tensor (meta) · destination (cpu)"


@pytest.mark.parametrize(
    "text",
    [
        "python train.py --fp16 False",  # a flag switched off
        "x = torch.zeros(3, dtype=torch.float16)",  # a tensor's dtype, not the model's
        # two models in two dtypes: the log sets neither
        "a = A.from_pretrained(p, torch_dtype=torch.float16)\nb = B.from_pretrained(q, torch_dtype=torch.bfloat16)",
    ],
)
def test_no_model_dtype_where_the_log_does_not_set_one(text: str) -> None:
    assert [h for h in find_hints(text) if h.key == "model-dtype"] == []


def _sampling(setting: str) -> str:
    """tests/blind32a/gptq-for-llama-36 (a real sampling failure in transformers' ``sample``), its first line replaced
    by another command line."""
    log = _sample_log("blind32a/gptq-for-llama-36")
    return setting + "\n" + log.split("\n", 1)[1]


def test_sampling_names_the_probabilities_and_the_precision_the_log_sets() -> None:
    """``torch.multinomial(probs, ...)``: the probabilities are its first argument; the message names no dtype, and the
    precision the command line sets is shown with its words."""
    log = _sampling("python llama_inference.py decapoda-research/llama-7b-hf --fp16 --text 'this is llama'")
    en, zh = format_report(explain(log), "en"), format_report(explain(log), "zh")
    assert _line(en, "Operands") == "`probs` (probabilities) · precision (float16, from `--fp16` in the log)"
    assert _line(zh, "两侧张量") == "`probs`（概率张量） · 精度设置（float16，来自日志里的 `--fp16`）"
    # shown through the side it gives a value to, not again as a log hint
    assert not _line(en, "Seen in the log")
    operand = location_json(explain(log).location)["operands"][1]  # type: ignore[index]
    assert (operand["said"], operand["said_at"], operand["origin"]) == ("--fp16", None, "log")


def test_sampling_without_a_precision_in_the_log_says_so() -> None:
    screen = format_report(explain(_sample_log("blind32a/gptq-for-llama-36")), "en")
    assert _line(screen, "Operands") == "`probs` (probabilities) · precision (not in the log)"


def test_a_setting_on_a_traceback_line_is_shown_at_that_line() -> None:
    """The from_pretrained line of kb/peft/quantized-model-spilled-to-cpu-or-disk/llama-chinese-123.log as the outer
    frame of a sampling failure: the setting is shown at its file and line."""
    frame = (
        'Traceback (most recent call last):\n  File "C:\\Llama2-Chinese\\examples\\chat_gradio.py", line 86, in <module>\n'
        "    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path,device_map='auto',"
        "torch_dtype=torch.float16,load_in_8bit=True)\n"
    )
    log = _sample_log("blind32a/gptq-for-llama-36").replace("Traceback (most recent call last):\n", frame)
    location = explain(log).location
    assert location is not None
    assert location.operands[1].said_at.endswith("chat_gradio.py:86")
    assert _line(format_report(explain(log), "en"), "Operands") == (
        "`probs` (probabilities) · precision (float16, from `torch_dtype=torch.float16` at `chat_gradio.py:86`)"
    )


def test_the_bench_counts_a_value_shown_with_where_it_was_set() -> None:
    """bench/where_eval.py reads the Operands line: a value followed by its source, and code in brackets, count."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[1] / "bench" / "where_eval.py"
    spec = importlib.util.spec_from_file_location("where_eval", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # dataclasses look their module up by name
    spec.loader.exec_module(bench)
    assert bench._sides("`probs` (probabilities) · precision (float16, from `--fp16` in the log)") == 1
    assert bench._sides("`x.half()` (mat1, float16) · precision (bfloat16, from `bf16=True` at `run.py:3`)") == 2
    assert bench._sides("`probs` (probabilities) · precision (not in the log)") == 0


def test_an_allgather_of_two_types_names_the_output_and_input_tensors() -> None:
    """kb/deepspeed/zero3-allgather-params-of-mixed-dtypes/firefly-127.log: DeepSpeed's ``all_gather_into_tensor`` hands
    ``output_tensor=output_tensor`` on; the message names neither dtype, and the input is on a line the paste cut."""
    kb = Path(__file__).resolve().parents[1] / "kb" / "deepspeed" / "zero3-allgather-params-of-mixed-dtypes"
    location = locate(build_incident((kb / "firefly-127.log").read_text(encoding="utf-8")))
    assert location is not None
    assert [(o.argument, o.value, o.expression) for o in location.operands] == [
        ("output tensor", "", "output_tensor"),
        ("input tensor", "", ""),
    ]


def test_a_call_on_a_constructed_value_is_a_method_call() -> None:
    """``nn.Linear(16, 4).to(device)`` (recordings/h100-2026-11, dev_invalid_device_ordinal): the receiver is a module
    built with ``nn.``, not the ``nn`` namespace, so ``device`` is the device argument of ``to``."""
    log = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/run.py", line 6, in <module>\n'
        "    model = nn.Linear(16, 4).to(device)\n"
        '  File "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1384, in to\n'
        "    return self._apply(convert)\n"
        "torch.AcceleratorError: CUDA error: invalid device ordinal\n"
    )
    location = locate(build_incident(log))
    assert location is not None
    assert [(o.expression, o.value) for o in location.operands] == [("device", "cuda"), ("", "")]


def test_a_dtype_the_line_spells_is_tied_to_it() -> None:
    """tests/blind29a/sglang-5869: ``torch.finfo(torch.float8_e4m3fn)`` on a torch that predates the dtype."""
    log = (
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.10/site-packages/sglang/srt/utils.py", line 119, in <module>\n'
        "    FP8_E4M3_MAX = torch.finfo(torch.float8_e4m3fn).max\n"
        "AttributeError: module 'torch' has no attribute 'float8_e4m3fn'\n"
    )
    location = locate(build_incident(log))
    assert location is not None
    assert [(o.argument, o.expression, o.value) for o in location.operands] == [
        ("dtype asked for", "torch.float8_e4m3fn", "float8_e4m3fn"),
        ("installed torch", "", ""),
    ]
