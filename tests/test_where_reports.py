"""Where it broke, on real reports of the earlier blind samples (development data since they were measured): the
shapes their misses showed, each fixed by a general change (issue 20)."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from dtypefix.cli.markdown import format_report
from dtypefix.cli.where_words import location_json, location_schema, where_lines
from dtypefix.matcher import explain
from dtypefix.matcher.hardware import parse_hardware
from dtypefix.matcher.location import Location, read_operands
from dtypefix.matcher.owner import OwnerKind, owner_of

TESTS = Path(__file__).parent


def _log(name: str) -> str:
    return str(yaml.safe_load((TESTS / f"{name}.yaml").read_text(encoding="utf-8"))["log"])


def _line(screen: str, label: str) -> str:
    found = re.search(rf"^\*\*{label}[:：]\*\* (.*?)\\?$", screen, re.MULTILINE)
    return found.group(1) if found else ""


@pytest.mark.parametrize(
    ("name", "where"),
    [
        # the innermost line outside torch the paste reaches, and whose it is
        ("blind28b/deepspeed-4885", "`peft/tuners/lora/layer.py:509` in `forward` — peft: an installed package"),
        ("blind27/pytorch-119162", "`bug_report_model.py:15` in `forward` — your code"),
    ],
)
def test_a_paste_cut_before_its_error_line_names_the_last_line_it_reaches(name: str, where: str) -> None:
    report = explain(_log(name))
    assert not report.matches and report.incident.error_line_missing
    en, zh = format_report(report, "en"), format_report(report, "zh")
    assert where in _line(en, "Where") and "the paste ends here, before the error line" in _line(en, "Where")
    assert "粘贴的内容到这里就断了" in _line(zh, "出错位置")


def test_a_paste_cut_in_a_caller_of_the_raise_still_names_the_last_line_it_reaches() -> None:
    # stops in GradScaler.unscale_ before _unscale_grads_ raised: the guess (tests/test_cut.py) is low, and the line
    # shown is still accelerate's call
    report = explain(_log("blind28b/qwenvl-ft-184"))
    assert report.matches and all(m.confidence == "low" for m in report.matches) and report.incident.error_line_missing
    assert "`accelerate/accelerator.py:2548` in `unscale_gradients`" in _line(format_report(report, "en"), "Where")
    assert "`accelerate/accelerator.py:2548`" in _line(format_report(report, "zh"), "出错位置")


def test_a_library_called_by_another_package_names_that_line() -> None:
    """InvokeAI calls diffusers' UNet with float64 timesteps on MPS: no frame of the user's own code is shown, so the
    line that called diffusers is InvokeAI's, and the sides are the float64 tensor and the MPS device."""
    report = explain(_log("blind28a/invokeai-4017"))
    where = _line(format_report(report, "en"), "Where")
    assert where.startswith("`diffusers/models/unet_2d_condition.py:793` in `forward` — diffusers")
    assert "called from invokeai at `invokeai/app/invocations/sdxl.py:340`" in where
    assert "由 invokeai 的 `invokeai/app/invocations/sdxl.py:340` 调用" in _line(
        format_report(report, "zh"), "出错位置"
    )
    operands = _line(format_report(report, "en"), "Operands")
    assert operands == "`timesteps[None]` (tensor, float64) · compute device (mps)"


def test_a_check_names_the_call_that_handed_it_the_value() -> None:
    """vLLM's ``_check_if_gpu_supports_dtype`` raises on what ``init_model`` passed it (``self.model_config.dtype``)."""
    location = explain(_log("blind27/qanything-128")).location
    assert location is not None and location.site is not None and location.caller is not None
    assert (location.site.function, location.caller.line) == ("_check_if_gpu_supports_dtype", 71)


def test_inside_torch_names_no_caller() -> None:
    """FSDP's own validation called by FSDP: nothing outside torch is shown, and the screen says so, alone."""
    location = explain(_log("blind27/axolotl-1589")).location
    assert location is not None and location.in_torch and location.caller is None


def test_sides_printed_above_the_frames() -> None:
    """ComfyUI prints the message above its frames, and the frames stop before torch: the sides are still read."""
    report = explain(_log("blind20/comfyui-3550"))
    operands = _line(format_report(report, "en"), "Operands")
    assert operands == "`input` (cuda, not on the line) · `weight` (cpu, not on the line)"


@pytest.mark.parametrize(
    ("name", "operands"),
    [
        ("blind28a/chatterbox-93", "tensor (float64, not on the line) · compute device (mps)"),
        # torch's bf16 check passes a GPU of compute capability 8.0 and up; the log names no GPU
        ("blind27/supir-1", "autocast dtype (bfloat16, not on the line) · compute device (cuda: needs sm_80+)"),
        ("blind28b/llama3-110", "tensor (bfloat16, not on the line) · compute device (cuda)"),
        # Triton names fp8e4nv for NVIDIA GPUs of compute capability 8.9 and up; vLLM checks the GPU before a bf16 model
        ("blind27/pytorch-167082", "tensor (fp8e4nv, not on the line) · compute device (cuda: needs sm_89+)"),
        ("blind27/qanything-128", "model dtype (bfloat16, not on the line) · compute device (cuda: needs sm_80+)"),
        # a Triton kernel variable with another dtype in each branch of an `if`
        ("blind29a/unsloth-3728", "then branch (bfloat16, not on the line) · else branch (float32, not on the line)"),
        # source lines pasted without indentation are read: F.linear(x, w) in peft, the query in unsloth's call to
        # flash_attn_func (flash-attn's own frame shows no line; its check reads the query alone)
        (
            "blind20/llamafactory-961",
            "`x` (expected, float32) · `transpose(self.weight, self.fan_in_fan_out)` (found, float16)",
        ),
        ("blind29a/unsloth-933", "`Q` (q, not float16 or bfloat16) · dtypes the operator takes (float16, bfloat16)"),
        # the message names the dtype the parameter must have, not its own
        (
            "blind20/animatediff-535",
            "`latents` (input) · `self.norm2.weight` (parameter, not float32) · expected (float32)",
        ),
        # torch.where(mask, att_weights, big_neg): the scalar is converted to the tensor's dtype
        ("blind20/lerobot-710", "`att_weights` (self, float16) · `big_neg` (value)"),
        # a logger's "ERROR main <message>": the message's own clause is no application prefix
        ("blind28a/hidream-54", "`mat1` (float16, not on the line) · `mat2` (bfloat16, not on the line)"),
        # an index dtype: the message names what the index must be, so the index is shown not to be it; PyG's
        # `scatter_add_(dim, index, src)` ties it, Genesis's frame shows no line
        ("blind30b/pyg-8740", "`index` (not int64) · expected (int64)"),
        ("blind30b/genesis-2035", "`index` (not int64, not on the line) · expected (int64)"),
        # torch 2.0's CPU LayerNorm asked the input to be bf16 after its float32 parameters passed their check
        (
            "blind31a/chatglm-efficient-tuning-23",
            "`hidden_states` (input, not bfloat16) · `self.input_layernorm.weight` (parameter, float32) · expected (bfloat16)",
        ),
        # "LayerNormKernelImpl" refuses Half only on the CPU; the line calls three modules, and no caret says which
        # one entered LayerNorm: no expression is guessed
        ("blind30b/roma-26", "`input` (float16, not on the line) · compute device (cpu)"),
        # CUDA's device guard built for a tensor that is not on a CUDA device (AutoGPTQ's CUDA kernel on the CPU)
        ("blind30a/qwen-461", "tensor (not cuda, not on the line) · compute device (cuda)"),
        # the message wrapped at 80 columns ("but g" / "ot attn_mask.dtype: float ..."): read joined back
        ("blind30a/xtuner-289", "`attn_mask` (float32, not on the line) · `query` (float16, not on the line)"),
        # flash-attn's Triton rotary assert and torch.stft's window check name both sides
        ("blind30a/vlm-r1-331", "`x` (float32, not on the line) · `cos/sin` (bfloat16, not on the line)"),
        ("blind31b/torchaudio-3446", "`self` (cuda:0, not on the line) · `window` (cpu, not on the line)"),
        # IPython's numbered lines under the arrow are the rest of the call: `_flash_attn_forward(q, k, v, ...)`
        ("blind30a/unsloth-1154", "`q` (not float16 or bfloat16) · dtypes the operator takes (float16, bfloat16)"),
        # the Windows builds name int64 by MSVC's type name
        ("blind32b/yolov7-186", "result (float32, not on the line) · output (int64, not on the line)"),
    ],
)
def test_one_sided_refusals_and_scalars_name_both_sides(name: str, operands: str) -> None:
    assert _line(format_report(explain(_log(name)), "en"), "Operands") == operands


def test_chinese_where_lines_have_no_english_labels() -> None:
    for name in ("blind28a/invokeai-4017", "blind28b/deepspeed-4885", "blind28a/chatterbox-93"):
        report = explain(_log(name))
        zh = "\n".join(where_lines(report.location, "zh", cut=report.incident.error_line_missing))
        assert not re.search(r"\b(?:called|from|paste|tensor|compute device|installed|package)\b", zh), zh


def test_examples_in_a_package_checkout_are_the_users_code() -> None:
    path = "/home/user/repositories/lightning/examples/pytorch/bug_report/bug_report_model.py"
    assert owner_of(path).kind is OwnerKind.USER
    assert owner_of("/home/user/repositories/lightning/src/lightning/fabric/fabric.py").kind is OwnerKind.PACKAGE


def test_pytorchs_own_checkout_is_torchs_code() -> None:
    """tests/blind30b/pytorch-99629: a maintainer's reproduction runs torch from its checkout (`repos/pytorch/torch/`);
    those frames are torch's, while the checkout's tests and tools stay the developer's own."""
    owner = owner_of("/scratch/user/work/repos/pytorch/torch/nn/modules/conv.py")
    assert (owner.kind, owner.name, owner.path) == (OwnerKind.PACKAGE, "torch", "nn/modules/conv.py")
    assert owner_of("/home/user/pytorch/test/test_nn.py").kind is OwnerKind.USER
    where = _line(format_report(explain(_log("blind30b/pytorch-99629")), "en"), "Where")
    assert where.startswith("`torch/nn/modules/conv.py:459` in `_conv_forward` — torch: an installed package")


def test_the_frame_that_raised_is_kept_even_when_it_passes_its_arguments_on() -> None:
    """``torch._C._nn._parse_to(*args, **kwargs)`` is the last frame: the call into C raised there."""
    location = explain(_log("blind22c/torchao-698")).location
    assert location is not None and location.site is not None
    assert (location.site.function, location.site.line) == ("_get_to_kwargs", 277)


def test_a_projects_checkout_is_its_distributions_code() -> None:
    """``faster-whisper/faster_whisper/transcribe.py`` is faster-whisper's code; the script run beside it is the
    user's, and its line (``compute_type="float16"`` on the CPU) is named as the caller."""
    assert owner_of("/home/user/faster-whisper/faster_whisper/transcribe.py").name == "faster-whisper"
    assert owner_of("/home/user/faster-whisper/test_transcription.py").kind is OwnerKind.USER
    assert owner_of("/home/user/models/diffrhythm2/diffrhythm2/backbones/dit.py").kind is OwnerKind.USER
    where = _line(format_report(explain(_log("blind28a/fasterwhisper-14")), "en"), "Where")
    assert where.startswith("`faster_whisper/transcribe.py:71` in `__init__` — faster-whisper")
    assert where.endswith("called from your code at `test_transcription.py:8`")


def test_a_message_printed_over_lines_is_shown_with_its_lines_side_by_side() -> None:
    """xformers prints its device check over three lines, above frames (tests/blind30a, mistral-inference-215): the
    Error line keeps the words apart, as printed, not the wrap-joined reading ("devicequery.device")."""
    report = explain(_log("blind30a/mistral-inference-215"))
    for lang, label in (("en", "Error"), ("zh", "报错")):
        error = _line(format_report(report, lang), label)
        assert "same device query.device: cuda:7 attn_bias : cuda:0" in error, error
        assert "devicequery" not in error


def test_a_notebook_traceback_ending_in_its_message_without_a_type_is_not_cut() -> None:
    """blind30a/unsloth-1154: IPython frames, then the message as the issue title gives it (no exception type): the
    last unindented line that is not code is the message, and the paste is not read as cut before its error line."""
    report = explain(_log("blind30a/unsloth-1154"))
    assert not report.incident.error_line_missing
    assert report.incident.primary is not None
    assert report.incident.primary.message == "FlashAttention only support fp16 and bf16 data type"
    assert report.matches and report.matches[0].entry.id == "DTF020"


def test_a_side_shown_not_to_have_the_required_dtype_reads_in_chinese() -> None:
    """The negated value of a one-sided message, worded for a Chinese reader (no English "not")."""
    lines = {
        name: _line(format_report(explain(_log(name)), "zh"), "两侧张量")
        for name in ("blind30b/pyg-8740", "blind30a/unsloth-1154")
    }
    assert lines["blind30b/pyg-8740"] == "`index`（不是 int64） · 期望的类型（int64）"
    assert lines["blind30a/unsloth-1154"] == "`q`（不是 float16 或 bfloat16） · 算子支持的 dtype（float16、bfloat16）"


def test_the_gpu_a_check_refused_is_named_where_the_log_names_it() -> None:
    """sglang's check_env names the GPU (kb/compile/triton-fp8e4nv-on-gpu-below-sm89/sglang-5871.log) and vLLM's
    refusal names it itself (blind28b/xinference-1804): the CUDA side says which GPU, its compute capability, and the
    capability the check needs, in both languages and in the JSON."""
    sglang = (TESTS.parent / "kb/compile/triton-fp8e4nv-on-gpu-below-sm89/sglang-5871.log").read_text(encoding="utf-8")
    report = explain(sglang)
    assert _line(format_report(report, "en"), "Operands") == (
        "tensor (fp8e4nv) · compute device (cuda: NVIDIA A10, sm_86; needs sm_89+)"
    )
    assert _line(format_report(report, "zh"), "两侧张量") == (
        "张量（fp8e4nv） · 计算设备（cuda：NVIDIA A10，sm_86；需要 sm_89 及以上）"
    )
    assert report.location is not None
    document = location_json(report.location)
    jsonschema.validate(document, location_schema())
    (gpu,) = [o for o in document["operands"] if o["gpu"]]
    assert gpu["gpu"] == {
        "models": [{"name": "NVIDIA A10", "compute_capability": 8.6}],
        "needs": 8.9,
        "falls_short": True,
    }
    vllm = explain(_log("blind28b/xinference-1804"))
    assert _line(format_report(vllm, "en"), "Operands").endswith(
        "compute device (cuda: NVIDIA GeForce RTX 2080 Ti, sm_75; needs sm_80+)"
    )


def test_a_gpu_that_meets_the_requirement_is_named_without_it() -> None:
    """transformers' bf16 check also fails where torch sees no GPU, on a card that has bf16: the card is named, and the
    requirement is not said to be what it lacks; a mixed machine names every model."""
    message = "Your setup doesn't support bf16/gpu. You need Ampere+ GPU with cuda>=11.0"
    for env, shown, short in (
        ("- GPU type: NVIDIA GeForce RTX 4090", "cuda: NVIDIA GeForce RTX 4090, sm_89", False),
        ("- GPU type: Tesla T4", "cuda: Tesla T4, sm_75; needs sm_80+", True),
        ("GPU 0: NVIDIA A100-SXM4-80GB\nGPU 1: Tesla T4", "cuda: NVIDIA A100-SXM4-80GB sm_80, Tesla T4 sm_75; needs sm_80+", None),
    ):  # fmt: skip
        op, operands = read_operands(message, (), parse_hardware(env))
        assert operands[1].short is short
        location = Location(None, False, None, "", "", op, operands, ())
        assert f"compute device ({shown})" in where_lines(location, "en", family=False)[0]


@pytest.mark.parametrize(
    ("path", "name", "inside"),
    [
        # paths as the dev reports print them
        (r"D:\ComfyUI_windows_portable\ComfyUI\execution.py", "ComfyUI", "execution.py"),
        ("/home/user/Documents/ComfyUI/comfy/ldm/ideogram4/model.py", "ComfyUI", "comfy/ldm/ideogram4/model.py"),
        ("/ComfyUI/comfy_extras/nodes_audio.py", "ComfyUI", "comfy_extras/nodes_audio.py"),
        (r"C:\Users\user\AppData\Roaming\StabilityMatrix\Packages\ComfyUI\comfy\ldm\flux\layers.py", "ComfyUI", None),
        (r"E:\ComfyUI-aki-v1-2\execution.py", "ComfyUI", "execution.py"),
        (r"C:\Users\user\stable-diffusion-webui\modules\scripts.py", "stable-diffusion-webui", "modules/scripts.py"),
        ("/sd/stable-diffusion-webui/extensions-builtin/Lora/networks.py", "stable-diffusion-webui", None),
        (
            r"C:\webui_forge_cu121_torch231\webui\modules\devices.py",
            "stable-diffusion-webui-forge",
            "modules/devices.py",
        ),
        (r"J:\oobabooga_windows\text-generation-webui\modules\training.py", "text-generation-webui", None),
        (r"F:\AI\G\text-generation-webui-main\modules\models.py", "text-generation-webui", "modules/models.py"),
        ("/workspace/kohya_ss/sd-scripts/flux_train_network.py", "sd-scripts", "flux_train_network.py"),
        (r"J:\aistuff\LoRA_Easy_Training_Scripts\backend\sd_scripts\train_network.py", "sd-scripts", None),
        (r"D:\LoRA Creation\kohya_ss\library\train_util.py", "kohya_ss", "library/train_util.py"),
        (r"D:\Stuff\OneTrainer\modules\trainer\GenericTrainer.py", "OneTrainer", "modules/trainer/GenericTrainer.py"),
    ],
)
def test_an_application_run_from_its_checkout_is_its_own_code(path: str, name: str, inside: str | None) -> None:
    owner = owner_of(path)
    assert (owner.kind, owner.name) == (OwnerKind.APPLICATION, name)
    assert inside is None or owner.path == inside


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        # the folder's name without the application's layout, or the layout without the folder
        ("/home/user/ComfyUI/my_workflow_test.py", OwnerKind.USER),
        ("/home/user/project/modules/utils.py", OwnerKind.USER),
        (r"comfy\ops.py", OwnerKind.USER),
        (r"E:\ai\framepack_cu126_torch26\webui\demo_gradio.py", OwnerKind.USER),
        ("/home/user/stable-diffusion-webui/my_script.py", OwnerKind.USER),
        # what is cloned into the application is its author's project
        ("/root/ComfyUI/custom_nodes/ComfyUI-KJNodes/nodes/model_optimization_nodes.py", OwnerKind.PACKAGE),
        (
            r"C:\sd\stable-diffusion-webui\extensions\sd-webui-additional-networks\scripts\lora_compvis.py",
            OwnerKind.PACKAGE,
        ),
        ("/root/ComfyUI/venv/lib/python3.11/site-packages/torch/nn/modules/conv.py", OwnerKind.PACKAGE),
    ],
)
def test_an_application_is_known_by_its_folder_and_its_layout_together(path: str, kind: OwnerKind) -> None:
    assert owner_of(path).kind is kind


def test_a_line_of_comfyuis_own_code_gets_comfyuis_first_step() -> None:
    """tests/blind27/ipadapterplus-183 stops in ComfyUI's ``comfy/samplers.py``: the line is ComfyUI's, not the
    user's, so the first step is updating ComfyUI rather than a cast at a line the user does not own."""
    report = explain(_log("blind27/ipadapterplus-183"))
    en, zh = format_report(report, "en"), format_report(report, "zh")
    assert _line(en, "Where") == (
        "`comfy/samplers.py:285` in `forward` — ComfyUI's own code, run from a checkout (not an installed package)"
    )
    assert _line(en, "First step here").startswith(
        "the failing line is in ComfyUI's own code, not in yours: first update ComfyUI"
    )
    assert "ComfyUI 自己的代码（从源码目录直接运行" in _line(zh, "出错位置")
    assert _line(zh, "先在这里做").startswith("出错的是 ComfyUI 自己的代码，不是你的：先更新 ComfyUI")
    assert report.location is not None
    document = location_json(report.location)
    jsonschema.validate(document, location_schema())
    assert document["site"]["owner"] == {
        "kind": "application",
        "name": "ComfyUI",
        "version": None,
        "path": "comfy/samplers.py",
    }


@pytest.mark.parametrize(
    ("name", "where", "caller"),
    [
        # ComfyUI's attention called from a custom node: the node's line is the caller
        (
            "blind20/instantid-97",
            "`comfy/ldm/modules/attention.py:345` in `attention_pytorch` — ComfyUI's own code",
            "called from ComfyUI_InstantID at `ComfyUI_InstantID/InstantID.py:161`",
        ),
        # a custom node called by ComfyUI's executor
        (
            "blind20/wanvideo-1448",
            "`ComfyUI_WanVideoWrapper/nodes_sampler.py:2680` in `process` — ComfyUI-WanVideoWrapper",
            "called from ComfyUI's own code at `execution.py:332`",
        ),
        # a webui extension called by the webui's script runner
        (
            "blind30b/additionalnetworks-127",
            "`sd_webui_additional_networks/scripts/lora_compvis.py:131` in `create_network_and_apply_compvis`",
            "called from stable-diffusion-webui's own code at `modules/scripts.py:395`",
        ),
        # diffusers called by sd-scripts through accelerate's wrapper, which hands its arguments on unchanged
        (
            "blind20/sdscripts-407",
            "`diffusers/models/unet_2d_condition.py:375` in `forward` — diffusers",
            "called from sd-scripts's own code at `fine_tune.py:314`",
        ),
    ],
)
def test_the_caller_of_a_line_inside_an_application_is_named_like_a_packages(
    name: str, where: str, caller: str
) -> None:
    line = _line(format_report(explain(_log(name)), "en"), "Where")
    assert line.startswith(where) and line.endswith(caller)


def test_the_bench_counts_every_owner_the_where_line_names() -> None:
    """bench/where_eval.py counts a Where line that says whose code the line is: each kind of owner the renderer
    words (the interpreter's frames are never a site) has its words in the bench's list."""
    import importlib.util
    import sys

    from dtypefix.cli.where_words import site_words
    from dtypefix.matcher.location import Site
    from dtypefix.matcher.owner import Owner

    path = TESTS.parent / "bench" / "where_eval.py"
    spec = importlib.util.spec_from_file_location("where_eval", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    for kind in OwnerKind:
        if kind is OwnerKind.INTERNAL:
            continue
        words = site_words(Site("/x/a.py", 3, "f", "", Owner(kind, "ComfyUI", "", "a.py")), "en")
        own = [w for w in bench._OWNER_WORDS if w in words.replace("(not an installed package)", "")]
        assert own, (kind, words)


def test_an_applications_version_comes_from_the_line_it_prints_at_launch() -> None:
    """ComfyUI prints ``ComfyUI version: …`` as it starts; the Where line then names the version it runs."""
    from dtypefix.cli.where_words import site_words
    from dtypefix.matcher.location import Site
    from dtypefix.matcher.packages import parse_versions

    path = "/root/ComfyUI/comfy/ops.py"
    owner = owner_of(path, parse_versions("ComfyUI version: 0.3.43\n"))
    assert (owner.kind, owner.name, owner.version) == (OwnerKind.APPLICATION, "ComfyUI", "0.3.43")
    words = site_words(Site(path, 156, "forward_comfy_cast_weights", "", owner), "en")
    assert words.endswith("ComfyUI 0.3.43's own code, run from a checkout (not an installed package)")
    assert site_words(Site(path, 156, "f", "", owner), "zh").endswith(
        "ComfyUI 0.3.43 自己的代码（从源码目录直接运行，不是已安装的包）"
    )
