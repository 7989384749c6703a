"""Where it broke (issue 20): owners of frames, the call site, operands tied to expressions, log hints, and how the
first screen and the JSON word them."""

from __future__ import annotations

from pathlib import Path

import pytest

from dtypefix.cli.where_words import location_json, readable_value, where_lines
from dtypefix.matcher.hints import find_hints
from dtypefix.matcher.incident import build_incident
from dtypefix.matcher.location import locate
from dtypefix.matcher.owner import OwnerKind, owner_of
from dtypefix.matcher.packages import parse_versions
from dtypefix.matcher.traceback import parse_stacks

RECORDINGS = Path(__file__).parent / "data" / "where"

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
        "expression": "self.score.weight",
    }
    assert data["first_step"]["en"].startswith("make both sides one dtype")
