"""Operand roles (census/operands.yaml) against every census row with an example: each rule reads some row, and what
it reads are values the example really prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from dtypefix.cli.where_words import readable_value
from dtypefix.kbtools.census import census_dir, load_census
from dtypefix.matcher.location import c10_spelling, load_rules, read_operands

ROWS = load_census(census_dir(Path(__file__).resolve().parent.parent / "kb"))
READ = [(row, *read_operands(row.example)) for row in ROWS]
FIXED = {spec["value"] for rule in load_rules().rules for spec in rule.operands if "value" in spec}


def test_every_rule_reads_a_census_row() -> None:
    used = {rule.id for rule in load_rules().rules for row in ROWS if rule.pattern.search(row.example)}
    assert [rule.id for rule in load_rules().rules if rule.id not in used] == []


@pytest.mark.parametrize(("row", "op", "operands"), [r for r in READ if r[2]], ids=lambda v: getattr(v, "where", ""))
def test_operands_read_from_a_row_are_in_its_example(row, op, operands) -> None:
    assert len(operands) >= 2, row.where
    for operand in operands:
        assert operand.argument and operand.role and operand.kind in ("dtype", "device"), row.where
        # A value is part of the example as printed (c10:: prefixes removed), what the rule says the op requires
        # (the `expected` side of GradScaler or nll_loss), or, for legacy tensor types, the device they imply; C++
        # type names (``unsigned char``) as c10 spells them.
        known = operand.value in c10_spelling(row.example) or operand.value in FIXED or operand.kind == "device"
        assert not operand.value or known, (row.where, operand)


def test_two_sided_dtype_rows_are_read() -> None:
    """Rows whose template names two dtypes or two devices of the families issue 20 lists have roles."""
    families = ("mat1 and mat2", "m1 and m2", "mat1 and mat2", "query, key", "Input type (", "Index put", "for `end`",
                "for `weight`", "masked_scatter", "Expected all tensors", "expected scalar type", "attn_mask dtype")  # fmt: skip
    unread = [row.where for row, _, operands in READ if any(f in row.template for f in families) and not operands]
    assert unread == []


def test_rows_of_the_h100_stack_are_read() -> None:
    """The wordings of FSDP/FSDP2, FlexAttention, _scaled_mm, AOTInductor, Triton, collectives, GradScaler and the
    nll_loss kernels (issue 20's H100 stack) all have roles, on every census row that prints them."""
    wordings = ("Must flatten tensors", "FSDP expects uniform", "FlatParameter` requires uniform", "Expect q/k/v and",
                "Expected both inputs to be fp8", "unmatched dtype, expected", "First input (", "Both operands must be",
                "No backend type associated", "expected self and mask", "Attempting to unscale FP16",
                "_amp_foreach_non_finite", "nll_loss_forward", "Query/Key/Value should", "Inconsistent compute device",
                "FSDP only supports single device", "device_ids and output_device")  # fmt: skip
    unread = [row.where for row, _, operands in READ if any(w in row.example for w in wordings) and not operands]
    assert unread == []
    assert {w for w in wordings if any(w in row.example for row in ROWS)} == set(wordings)


def test_linear_sides() -> None:
    op, (mat1, mat2) = read_operands("mat1 and mat2 must have the same dtype, but got Float and BFloat16")
    assert op == "linear"
    assert (mat1.role, mat1.value, mat2.role, mat2.value) == ("input", "Float", "weight", "BFloat16")


def test_device_argument_and_method() -> None:
    op, operands = read_operands(
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
        "(when checking argument for argument index in method wrapper_CUDA__index_select)"
    )
    assert op == "embedding"
    assert [(o.argument, o.role, o.value) for o in operands] == [
        ("other tensors", "others", "cuda:0"),
        ("index", "input", "cpu"),
    ]


def test_expected_side_of_check_type() -> None:
    _, (expected, found) = read_operands("expected scalar type Half but found Float")
    assert (expected.role, expected.value, found.role, found.value) == ("expected", "Half", "found", "Float")


def test_legacy_types_on_two_devices_are_devices() -> None:
    _, operands = read_operands(
        "Input type (torch.cuda.HalfTensor) and weight type (torch.HalfTensor) should be the same"
    )
    assert [(o.kind, o.value) for o in operands] == [("device", "cuda"), ("device", "cpu")]


def test_message_without_operands() -> None:
    assert read_operands("CUDA out of memory. Tried to allocate 2.00 GiB") == ("", ())


@pytest.mark.parametrize(
    ("message", "sides"),
    [
        # census torch-compile[11]: AOTInductor prints the ScalarType numbers (15 = BFloat16, 6 = Float).
        ("input_handles[0]: unmatched dtype, expected: 15(at::kBFloat16), but got: 6",
         [("compiled for", "BFloat16"), ("input_handles[0]", "Float")]),
        # census torch-distributed[18]: a set of torch.device reprs.
        ("FSDP only supports single device modules but got params on {device(type='cuda', index=0), "
         "device(type='cuda', index=1)}", [("one parameter", "cuda:0"), ("another parameter", "cuda:1")]),
        # census torch-distributed[43]: DDP's device_ids are CUDA device indices.
        ("DistributedDataParallel device_ids and output_device arguments only work with single-device/multiple-device "
         "GPU modules or CPU modules, but got device_ids [0], output_device 0, and module parameters "
         "{device(type='cpu')}.", [("device_ids", "cuda:0"), ("parameters", "cpu")]),
        # census torch-distributed[39] with the process group's backend read from the NCCL log line.
        ("No backend type associated with device type cpu", [("tensor", "cpu"), ("process group", "")]),
        # census torch-compile[3]: FlexAttention's block mask on another GPU.
        ("Expect q/k/v and block_mask to be on the same device but got cuda:1 and cuda:0.",
         [("q/k/v", "cuda:1"), ("block_mask", "cuda:0")]),
        # census torch-compile[8]: _scaled_mm's meta check under torch.compile.
        ("Expected both inputs to be fp8 or fp4 types but got self.dtype=torch.bfloat16 and "
         "mat2.dtype=torch.float8_e4m3fn", [("self", "torch.bfloat16"), ("mat2", "torch.float8_e4m3fn")]),
        # census triton[4]: tl.dot's operands.
        ("First input (fp16) and second input (fp32) must have the same dtype!",
         [("first input", "fp16"), ("second input", "fp32")]),
        # census ctranslate2[0]: the compute type against the device (which the line may give).
        ("Requested float16 compute type, but the target device or backend do not support efficient float16 "
         "computation.", [("compute_type", "float16"), ("compute device", "")]),
        # census torch-npu[1]: CANN's aclnn check, the parameter as CANN names it and the dtypes the op takes.
        ("call aclnnCast failed, detail:EZ1001: The param dtype not implemented for DT_BFLOAT16, should be in dtype "
         "support list [DT_FLOAT16,DT_FLOAT,DT_BOOL,].", [("dtype", "DT_BFLOAT16"), ("dtype support list",
         "DT_FLOAT16,DT_FLOAT,DT_BOOL,")]),
    ],
)  # fmt: skip
def test_sides_of_more_wordings(message: str, sides: list[tuple[str, str]]) -> None:
    _, operands = read_operands(message)
    assert [(o.argument, o.value) for o in operands] == sides


def test_readable_values_of_older_and_triton_names() -> None:
    from dtypefix.cli.where_words import readable_value

    names = (
        "CUDA",
        "fp16",
        "bf16",
        "unsigned char",
        "Bool",
        "torch.float8_e4m3fn",
        "Float8_e5m2",
        "DT_BFLOAT16",
        "DT_FLOAT16,DT_FLOAT,DT_DOUBLE,DT_INT64,",
    )
    assert [readable_value(v) for v in names] == [
        "cuda", "float16", "bfloat16", "uint8", "bool", "float8_e4m3fn", "float8_e5m2", "bfloat16",
        "float16, float32, float64, int64",
    ]  # fmt: skip


def test_a_refused_dtype_against_the_list_printed_beside_it() -> None:
    """vLLM's quantization check (the example of vllm-project/vllm#1823) and its ROCm check: the list is kept as
    printed, and read as torch's names, each once (``half`` and ``float16`` are one dtype)."""
    _, (dtype, supported) = read_operands(
        "torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]"
    )
    assert (readable_value(dtype.value), supported.role, readable_value(supported.value)) == (
        "bfloat16",
        "required",
        "float16",
    )
    _, (_, rocm) = read_operands(
        "dtype 'float32' is not supported in ROCm. Supported dtypes are ['half', 'float16', 'bfloat16']"
    )
    assert (rocm.value, readable_value(rocm.value)) == ("'half', 'float16', 'bfloat16'", "float16, bfloat16")


@pytest.mark.parametrize(
    ("message", "sides"),
    [
        # MSVC's name of int64 (tests/blind32b/yolov7-186) and GCC's, and the unsigned ones no longer cut at a space
        ("result type Float can't be cast to the desired output type __int64", ["float32", "int64"]),
        ("result type Float can't be cast to the desired output type long int", ["float32", "int64"]),
        ("result type Float can't be cast to the desired output type unsigned __int64", ["float32", "uint64"]),
        ("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char", ["uint8", "bool"]),
        ("Expected out tensor to have dtype struct c10::Half, but got float instead", ["float16", "float32"]),
    ],
)
def test_cxx_type_names(message: str, sides: list[str]) -> None:
    _, operands = read_operands(message)
    assert [readable_value(o.value) for o in operands] == sides


def test_set_source_names_the_source_first() -> None:
    """``self.set_(source)`` prints the source's dtype first, in C++ type names (``c10::BFloat16``, ``long long``)."""
    _, (source, self_) = read_operands("Could not set tensor of type long long to a tensor of type c10::BFloat16")
    assert [(o.role, readable_value(o.value)) for o in (source, self_)] == [("source", "int64"), ("self", "bfloat16")]


@pytest.mark.parametrize(
    ("message", "sides"),
    [
        # the census examples of these rows (triton's from bytedance/Protenix#211)
        ("A must be float16, bfloat16, or float32, got torch.float64", ["float64", "float16, bfloat16, float32"]),
        (
            "ZeRO-3 supports only float16 or bfloat16 communication_data_type with reduce scatter enabled. Got: "
            "'torch.float32'",
            ["float32", "float16, bfloat16"],
        ),
        ("For XPU device only but got: cuda:0", ["cuda:0", "xpu"]),
        ("Unsupported conversion from bf16 to f16", ["bfloat16", "float16"]),
    ],
)
def test_lists_and_names_of_one_sided_refusals(message: str, sides: list[str]) -> None:
    """The refused dtype or device against what the check takes, in torch's names ("or" and commas both separate)."""
    _, operands = read_operands(message)
    assert [readable_value(o.value) for o in operands] == sides


@pytest.mark.parametrize(
    ("message", "sides"),
    [
        # census torch[73] and [75]: a dispatch name that says no device, placed by the file it is built in
        ("\"add_stub\" not implemented for 'Float8_e4m3fn'", [("tensor", "float8_e4m3fn"), ("add_stub", "cpu")]),
        ("\"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
         [("tensor", "int64"), ("softmax_lastdim_kernel_impl", "cpu")]),
        # stas00/ml-engineering#91: TunableOp's scaled GEMM (aten/src/ATen/native/cuda/Blas.cpp)
        ("\"_tunable_scaled_gemm\" not implemented for 'Float8_e4m3fn'",
         [("tensor", "float8_e4m3fn"), ("_tunable_scaled_gemm", "cuda")]),
        # a name built for several devices keeps no device
        ("\"upsample_nearest2d_out_frame\" not implemented for 'BFloat16'",
         [("tensor", "bfloat16"), ("upsample_nearest2d_out_frame", "")]),
        # census flashinfer[0]: flashinfer's kernels are CUDA kernels
        ("BatchPrefillWithPagedKVCache failed to dispatch with dtype Half",
         [("tensor", "float16"), ("BatchPrefillWithPagedKVCache", "cuda")]),
        # census aiter[0]: a printed condition names both sides and no value
        ("gating_output.dtype() == correction_bias.dtype()", [("gating_output", ""), ("correction_bias", "")]),
        # census torch[155]: without a torch_npu line in the log, the build is a CPU build
        ("Torch not compiled with CUDA enabled", [("device asked for", "cuda"), ("torch build", "cpu")]),
        # census torch-distributed[13]: all the message says of the parameter is that it is not floating point
        ("Cannot flatten integer dtype tensors",
         [("parameters", "not floating point"), ("flat parameter", "floating point")]),
        # capability checks: the format asked for against the CUDA device
        ("torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, or ROCm MI300+",
         [("_scaled_mm", "float8"), ("compute device", "cuda")]),
        ("MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet.",
         [("recipe", "MXFP8"), ("compute device", "cuda")]),
        ("Device compute capability 8.9 or higher required for FP8 execution.",
         [("recipe", "float8"), ("compute device", "cuda")]),
        ("fp8e4nv data type is not supported on CUDA arch < 89", [("tensor", "fp8e4nv"), ("compute device", "cuda")]),
        # torchao's check fails on a machine without CUDA too: no device
        ("Float8 dynamic quantization requires CUDA compute capability ≥8.9 or MI300+.",
         [("quantization", "float8"), ("compute device", "")]),
        # MPS's refusals by op, and an input left on the CPU
        ("MPS does not support cumsum op with int64 input", [("input", "int64"), ("compute device", "mps")]),
        ("Operation 'neg_out_mps()' does not support input type 'int64' in MPS backend.",
         [("input", "int64"), ("compute device", "mps")]),
        ("MPS device does not support mm for non-float inputs",
         [("input", "not floating point"), ("compute device", "mps")]),
        ("Tensor for argument input is on cpu but expected on mps", [("input", "cpu"), ("compute device", "mps")]),
        ("Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking arguments for addmm)",
         [("mat1", "cpu"), ("compute device", "cuda")]),
        ("Expected a cuda device, but got: cpu", [("device", "cpu"), ("expected", "cuda")]),
        ("Required aspect fp64 is not supported on the device", [("tensor", "float64"), ("compute device", "xpu")]),
        # the 4-bit and dequantize paths of bitsandbytes' blockwise check, and FlashAttention-3's list
        ("Blockwise 4bit dequantization only supports 16/32-bit floats, but got torch.uint8",
         [("tensor", "uint8"), ("expected", "16/32-bit floats")]),
        # ops that take one dtype or one class of dtypes, and CUDA asked for where there is none
        ("mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",
         [("input", "int64"), ("expected", "floating point or complex")]),
        ("tensors used as indices must be long, byte or bool tensors",
         [("indices", "not int64, uint8, bool"), ("expected", "int64, uint8, bool")]),
        ("Parameter layers.0.attn.q_proj.weight has dtype torch.float32, but expected torch.bfloat16",
         [("layers.0.attn.q_proj.weight", "float32"), ("expected", "bfloat16")]),
        ("Parameter layers.0.attn.q_proj.weight has dtype torch.float8_e5m2fnuz",
         [("layers.0.attn.q_proj.weight", "float8_e5m2fnuz"), ("expected", "")]),
        ("CUDA error: invalid device ordinal", [("device asked for", "cuda"), ("this machine", "")]),
        ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running "
         "on a CPU-only machine, please use torch.load with map_location='cpu' to map your storages to the CPU.",
         [("saved storage", "cuda"), ("this machine", "not cuda")]),
        ("fp16 mixed precision requires a GPU (not 'mps').", [("mixed_precision", "float16"), ("compute device", "mps")]),
        ("Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)",
         [("tensor", "not cuda"), ("Triton kernel", "cuda")]),
        # a legacy type string names MPS too: one dtype on two devices is a device mismatch
        ("Input type (MPSBFloat16Type) and weight type (CPUBFloat16Type) should be the same",
         [("input", "mps"), ("weight", "cpu")]),
        # accelerate names the tensor; the meta side is the fixed value, not the tensor's name
        ("model.layers.0.self_attn.q_proj.weight is on the meta device, we need a `value` to put in on 0.",
         [("model.layers.0.self_attn.q_proj.weight", "meta"), ("destination", "0")]),
        # precision flags against the device: what the message says of it
        ("FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation "
         "(`--fp16_full_eval`) can only be used on CUDA devices.", [("fp16", "float16"), ("compute device", "not cuda")]),
        ("bf16 requested, but AMP is not supported on this GPU. Requires Ampere series or above.",
         [("bf16", "bfloat16"), ("compute device", "cuda")]),
        ("Cannot use fp16 without accelerator.", [("fp16", "float16"), ("this machine", "cpu")]),
        ("FSDP parameters should be materialized from meta device before training, but the following were still on "
         "meta device: ['lm_head.weight']", [("parameters", "meta"), ("expected", "not meta")]),
        # the dtypes a check names are its side's value, however it lists them
        ("gather(): Expected dtype int32/int64 for index", [("index", "not int32, int64"), ("expected", "int32, int64")]),
        ("Flash Attention 2 only supports torch.float16 and torch.bfloat16 dtypes, but the current dype in "
         "Qwen3ForCausalLM is torch.float32.", [("model", "float32"), ("expected", "float16, bfloat16")]),
        ("FlashAttention-3 only support fp16, bf16, or fp8 e4m3 data type",
         [("q", "not float16, bfloat16, float8_e4m3fn"), ("dtype support list", "float16, bfloat16, float8_e4m3fn")]),
    ],
)  # fmt: skip
def test_one_sided_refusals_name_what_refuses(message: str, sides: list[tuple[str, str]]) -> None:
    """A message that prints one dtype or device: the other side is the kernel, device, build or setting that refuses
    it, with the value the message or the op establishes, and none where neither does."""
    _, operands = read_operands(message)
    read = [(o.argument, readable_value(o.value) if o.value else f"not {readable_value(o.unlike)}" if o.unlike else "")
            for o in operands]  # fmt: skip
    assert read == sides


def test_the_torch_npu_line_names_the_build() -> None:
    """Ascend/pytorch#16: ``import torch, torch_npu`` before a CUDA call; the build's device is the NPU."""
    from dtypefix.matcher.hints import find_hints

    log = ">>> import torch, torch_npu\n>>> torch.ones(2).to(3)\nAssertionError: Torch not compiled with CUDA enabled\n"
    _, (asked, build) = read_operands("Torch not compiled with CUDA enabled", find_hints(log))
    assert (asked.value, build.value, build.origin) == ("cuda", "npu", "log")
