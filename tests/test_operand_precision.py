"""Operands that must not be shown wrong (issue 20, precision audit): each case is a real log whose first screen
once tied a side to the wrong expression, gave it a value the input does not establish, or worded it wrongly.
A side the input cannot settle is shown without the tie or the value, never guessed."""

from __future__ import annotations

from pathlib import Path

import yaml

from dtypefix.cli.where_words import where_lines
from dtypefix.matcher.incident import build_incident
from dtypefix.matcher.location import Location, locate
from dtypefix.matcher.owner import OwnerKind, owner_of

ROOT = Path(__file__).resolve().parents[1]


def _log(name: str) -> str:
    """A real log: a development sample's report (``blind20/lightrag-249``) or a KB example (``kb/...log``)."""
    path = ROOT / name if name.startswith("kb/") else ROOT / "tests" / f"{name}.yaml"
    text = path.read_text(encoding="utf-8")
    return str(yaml.safe_load(text)["log"]) if path.suffix == ".yaml" else text


def _located(name: str) -> Location:
    return _located_text(_log(name))


def _located_text(text: str) -> Location:
    location = locate(build_incident(text))
    assert location is not None
    return location


def _sides(name: str) -> list[tuple[str, str, str]]:
    """``(argument, expression, value)`` of each side."""
    return [(o.argument, o.expression, o.value) for o in _located(name).operands]


def test_aten_embedding_takes_its_weight_first() -> None:
    """``torch.embedding(weight, input, ...)`` in torch's functional.py: the index checked is ``input``, not ``weight``
    (``F.embedding(input, weight)`` has the other order)."""
    assert ("index", "input", "cuda:0") in _sides("blind20/lightrag-249")
    assert _sides("heldout/msswift-5565")[0][:2] == ("indices", "input")


def test_a_named_parameter_is_not_also_the_other_tensors() -> None:
    """The message names the weight of ``self.conv1(input)`` ("for argument #2 'weight'"), so the other tensors are
    the input; likewise a loss module whose class weights are the argument named."""
    assert _sides("kb/devices/conv-input-and-weights-on-different-devices/faceforensics-25.log") == [
        ("other tensors", "input", "CPU"),
        ("weight", "self.conv1.weight", "CUDA"),
    ]
    sides = _sides("kb/devices/loss-class-weights-on-other-device/pt-150750.log")
    assert sides == [("weight", "loss_fn.weight", "cpu"), ("other tensors", "model_output", "cuda:0")]


def test_torch_1_9s_misspelt_device_message_names_its_argument() -> None:
    """torch 1.9 and 1.10 printed "when checking arugment for argument target": the target differs, not the weight."""
    sides = _sides("kb/devices/loss-class-weights-on-other-device/wrench-4.log")
    assert sides == [("other tensors", "", "cuda:0"), ("target", "target.long()", "cpu")]


def test_an_index_argument_is_expected_to_be_int64_by_its_signature() -> None:
    """TH's "Expected object of scalar type Long ... for argument #3 'index'": int64 is what the index must be, not the
    dtype of the other tensors (scatter's source is float)."""
    for name, expression in (
        ("kb/torch/int32-index-to-scatter-gather-before-torch-2-8/brain-tumour-3.log", "input"),
        ("kb/torch/loss-target-not-long/maml-45.log", "y_spt[i]"),
    ):
        operands = _located(name).operands
        assert [(o.expression, o.value) for o in operands] == [(expression, "Int"), ("", "Long")]
        assert operands[1].role == "required"
        assert "other tensors" not in "\n".join(where_lines(_located(name), "en"))


def test_a_loss_modules_integer_dtype_is_its_target() -> None:
    """``criterion(outputs, labels)``: an integer dtype found is the labels', and int64 expected is what the target
    must be; the criterion's class weights are no side of it."""
    location = _located("kb/torch/loss-target-not-long/pvr-71.log")
    assert [(o.role, o.expression, o.value) for o in location.operands] == [
        ("required", "", "Long"),
        ("found", "labels", "Int"),
    ]
    assert _sides("kb/torch/float-loss-given-integer-targets/pt-45373.log") == [
        ("found", "label", "Long"),
        ("expected", "output", "Float"),
    ]


def test_inductors_kernel_module_is_no_operand() -> None:
    """``extern_kernels.mm(arg0_1, arg1_1, out=buf0)``: the two arguments are mat1 and mat2, not the kernel module."""
    assert [s[1] for s in _sides("kb/compile/inductor-generated-mm-with-mixed-dtypes/cpu-repro-compile-mm.log")] == [
        "arg0_1",
        "arg1_1",
    ]
    sides = _sides("kb/compile/inductor-generated-mm-with-mixed-dtypes/cpu-repro-compile-linear.log")
    assert [s[1] for s in sides] == ["primals_3", "reinterpret_tensor(primals_1, (16, 16), (1, 16), 0)"]


def test_a_method_of_self_does_not_take_a_torch_functions_roles() -> None:
    """T5's ``self.layer_norm(hidden_states)`` calls apex's module, not ``F.layer_norm``: ``self`` is no tensor."""
    location = _located("kb/torch/t5-apex-fused-rmsnorm-dtype-mismatch/xdit-226.log")
    assert [o.expression for o in location.operands] == ["", ""]


def test_a_device_glued_to_a_log_prefix_is_read_alone() -> None:
    """The device in "but got: cpuRank(3)" is cpu: "Rank(3)" is the rank prefix of the next log line, glued on."""
    assert _sides("blind22/dtf205-0")[0] == ("device", "", "cpu")


def test_shortened_paths_keep_their_owners() -> None:
    """A reporter's shortened paths: ``torch/__init__.py`` is torch's (the line above it, peft's, is where it broke)
    and ``site-packages\\safetensors\\torch.py`` is safetensors'."""
    site = _located("blind22c/peft-3158").site
    assert site is not None and (site.owner.name, site.line) == ("peft", 2170)
    owner = owner_of("site-packages\\safetensors\\torch.py")
    assert (owner.kind, owner.name, owner.path) == (OwnerKind.PACKAGE, "safetensors", "torch.py")


def test_chinese_words_for_device_sides_and_classes() -> None:
    """An expected device is 期望的设备 (not 期望的类型), and "not a floating-point dtype" reads without a space between
    Chinese words."""
    assert "期望的设备（cuda）" in "\n".join(where_lines(_located("blind22/dtf205-1"), "zh"))
    assert "参数张量（不是浮点 dtype）" in "\n".join(where_lines(_located("blind27/axolotl-1589"), "zh"))
    # a legacy tensor type's device in Chinese words, not in English brackets inside full-width ones
    zh = "\n".join(where_lines(_located("kb/torch/embedding-indices-not-integer/ccsmeth-57.log"), "zh"))
    assert "`kmer.int()`（indices，cuda 上的 int32）" in zh


def test_the_cast_goes_to_the_parameter() -> None:
    """``self.wq(x)`` with the weight on the "found" side: cast ``x``; a Parameter is never reassigned by a cast."""
    en = "\n".join(where_lines(_located("blind29a/llamacpu-1"), "en"))
    assert "`x = x.to(self.wq.weight.dtype)`" in en and "self.wq.weight = " not in en


def test_a_nested_operation_may_be_the_one_that_raised() -> None:
    """``h.t() @ (dY @ downB.t())`` and ``a * b + c * d`` without carets: the inner operation runs first and may have
    raised, so neither side is tied; an in-place update's cast error can only be the update's own."""
    assert [
        o.expression for o in _located("kb/devices/int8-lora-on-pre-turing-gpu-in-mixed-box/unsloth-212.log").operands
    ] == ["", ""]
    corpus = yaml.safe_load((ROOT / "tests" / "corpus" / "internvl-132.yaml").read_text(encoding="utf-8"))
    assert [o.expression for o in _located_text(corpus["log"]).operands] == ["", ""]
    assert [
        o.expression for o in _located("kb/torch/inplace-float-update-of-integer-buffer/hierfl-1.log").operands
    ] == [
        "torch.mul(w[i][k], s_num[i]/temp_sample_num)",
        "w_avg[k]",
    ]


def test_an_indexing_message_ties_the_indexing_on_the_line() -> None:
    """``self.logvar[t].to(self.device)``: the indexed tensor is ``self.logvar`` and the indices ``t`` (not the
    result of the indexing, which ``.to()`` is called on); a line indexing by two tensors stays untied."""
    sides = _sides("kb/devices/diffusion-schedule-table-on-cpu-indexed-by-gpu-timesteps/instruct-pix2pix-131.log")
    assert sides == [("indexed tensor", "self.logvar", "cpu"), ("indices", "t", "")]
    sides = _sides("kb/devices/cpu-tensor-indexed-with-gpu-indices/shape-guided-11.log")
    assert [s[1] for s in sides] == ["", ""]


def test_a_module_taken_from_a_dict_is_a_nested_module_call() -> None:
    """``self.lora_A[name](self.lora_dropout[name](x))`` without carets: either module call may have entered torch's
    module, so neither the input nor the weight is tied."""
    location = _located("kb/peft/lora-8bit-forward-upcasts-input-to-fp32/lf-1303-8bit-lora-fp16.log")
    assert [o.expression for o in location.operands] == ["", ""]
