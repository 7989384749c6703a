"""A specific cause needs its own evidence: real look-alikes from other code must not rank it first or offer it at all.

Issue 14, section 4: DTF204 (DeepSpeed Muon resume) used to win `lerp_` dtype errors from EMA code, and DTF300 (PEFT
8-bit LoRA) was offered on Float/BFloat16 matmuls that involve neither PEFT nor bitsandbytes.
"""

from __future__ import annotations

from dtypefix.matcher import explain
from dtypefix.matcher.catalog import builtin_kb_dir


def _ids(name: str) -> list[str]:
    text = (builtin_kb_dir() / name).read_text(encoding="utf-8")
    return [m.entry.id for m in explain(text).matches]


def test_ema_lerp_without_deepspeed_frames_is_not_the_muon_resume_bug() -> None:
    # lucidrains/ema-pytorch#36: the same `lerp_` message from an EMA update; the DeepSpeed frame is required.
    assert "DTF204" not in _ids("deepspeed/muon-momentum-fp32-after-resume/ema-pytorch-36.log")


def test_muon_resume_needs_its_own_evidence_for_medium_confidence() -> None:
    # The bare message alone stays low: only the reporter's DeepSpeed config (optimizer: Muon) raises it.
    text = (builtin_kb_dir() / "deepspeed/muon-momentum-fp32-after-resume/ds-pr8433.log").read_text(encoding="utf-8")
    best = explain(text).matches[0]
    assert (best.entry.id, best.confidence) == ("DTF204", "low")


def test_plain_linear_float_bf16_is_explained_by_the_family_not_peft_8bit() -> None:
    # hpcaitech/ColossalAI#6169: nn.Linear in a ColossalAI SFT run, no PEFT/bitsandbytes frame, no 8-bit warning.
    ids = _ids("peft/lora-8bit-forward-upcasts-input-to-fp32/colossalai-6169-plain-linear.log")
    assert ids[0] == "DTF001"


def test_eager_matmul_traceback_without_a_compiler_frame_does_not_offer_the_compiler_stage_cause() -> None:
    # zjukg/KoPA#11: a whole traceback of an eager nn.Linear; DTF691 needs a torch.compile frame to be offered.
    assert "DTF691" not in _ids("family/mat1-mat2-dtype/kopa-11.log")


def test_user_dtype_bug_found_by_dynamo_fake_tensor_run_is_not_blamed_on_the_compiler() -> None:
    # pytorch#157657 reproduction (a bf16 Conv1d given float32): Dynamo's fake-tensor run names the user's op;
    # that is DTF621, never DTF691.
    ids = _ids("compile/dynamo-fake-tensor-dtype-mismatch/cpu-repro-compile-conv.log")
    assert ids[0] == "DTF621"
    assert "DTF691" not in ids
