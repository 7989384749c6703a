"""The message census: every row's example fits its template and is recognised by the entries it names."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
import yaml

from dtypefix.kbtools.census import (
    OUT_OF_SCOPE,
    MinedRow,
    census_dir,
    instantiate,
    load_census,
    load_mined,
    mined_answered,
    mined_summary,
    recognised_by,
    template_regex,
    triage,
)
from dtypefix.kbtools.miner import main, mine_artifact, speaks_of_dtype_or_device
from dtypefix.matcher.explain import answers, explain

CENSUS = census_dir(Path(__file__).resolve().parent.parent / "kb")
ROWS = load_census(CENSUS)
_FIELDS = {"template", "type", "kind", "example", "source", "report", "versions", "entries", "note"}


def test_census_covers_the_stack() -> None:
    assert len(ROWS) >= 1
    assert {r.library for r in ROWS} >= {"torch"}


def test_rows_use_only_documented_fields() -> None:
    for path in CENSUS.glob("*.yaml"):
        if path.name == "operands.yaml":  # the operand roles (matcher/location.py), not a census of messages
            continue
        for index, row in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))["rows"]):
            assert set(row) <= _FIELDS, f"{path.stem}[{index}]: unknown fields {set(row) - _FIELDS}"


@pytest.mark.parametrize("row", ROWS, ids=[r.where for r in ROWS])
def test_row_is_well_formed(row) -> None:
    assert row.kind in ("error", "warning")
    assert row.source or row.report, f"{row.where}: needs a source (repo@tag:path:line) or a report URL"
    if row.source:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[\w.+-]+:[\w./+-]+:L?\d+(-L?\d+)?", row.source), row.source
    if row.report:
        assert row.report.startswith("https://"), row.report
    assert row.entries, f"{row.where}: names no entry"
    assert template_regex(row.template).fullmatch(row.example), f"{row.where}: example does not fit the template"


@pytest.mark.parametrize("row", ROWS, ids=[r.where for r in ROWS])
def test_row_is_recognised(row, catalog) -> None:
    top = recognised_by(row, catalog)
    assert top is not None, f"{row.where}: no entry recognises {row.text!r}"
    assert top in row.entries, f"{row.where}: {top} ranks first, the census names {list(row.entries)}"


TYPED = [r for r in ROWS if r.type]


@pytest.mark.parametrize("row", TYPED, ids=[r.where for r in TYPED])
def test_row_pasted_without_its_type_is_recognised(row, catalog) -> None:
    """Issue 21, section 5: the message pasted bare, without its exception type, still reaches the entries the
    census names (most of their patterns name the type)."""
    report = explain(row.example + "\n", catalog=catalog)
    top = report.matches[0].entry.id if report.matches else None
    assert top in row.entries, f"{row.where}: pasted bare, {top} ranks first, the census names {list(row.entries)}"


# --- The mined census (census/mined/, kbtools/miner.py) ---------------------------------------------------------

MINED_DIR = CENSUS / "mined"
MINED = load_mined(MINED_DIR)
_MINED_FIELDS = ["library", "version", "site", "kind", "type", "template"]


def test_mined_data_is_well_formed() -> None:
    sources = yaml.safe_load((MINED_DIR / "sources.yaml").read_text(encoding="utf-8"))["artifacts"]
    released = {(s["library"], str(s["version"])) for s in sources if s.get("artifact")}
    assert {s["library"] for s in sources} >= {"torch", "transformers", "deepspeed", "vllm", "torch-npu"}
    for path in MINED_DIR.glob("*.jsonl"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            # a Python site names its enclosing function, how many raise / check sites it has in all, and (where
            # any) the functions of its file that call it
            function = [*_MINED_FIELDS, "function", "function_raises"]
            assert list(row) in (_MINED_FIELDS, function, [*function, "callers"]), f"{path.name}:{number}"
            assert row.get("callers", ["x"]) and row.get("callers", []) == sorted(row.get("callers", [])), (
                f"{path.name}:{number}"
            )
            assert "function" not in row or (row["function"] and row["function_raises"] >= (row["kind"] != "warn")), (
                f"{path.name}:{number}"
            )
            assert row["library"] == path.stem, f"{path.name}:{number}"
            assert (row["library"], row["version"]) in released, f"{path.name}:{number}: not in sources.yaml"
            assert row["kind"] in ("raise", "assert", "check", "warn", "string"), f"{path.name}:{number}"
            assert speaks_of_dtype_or_device(row["template"]), f"{path.name}:{number}"
    assert {r.scope for r in MINED} <= {"in", *OUT_OF_SCOPE}


_FIXTURE_PY = """\
import torch, warnings

def f(x, w):
    if x.dtype != w.dtype:
        raise ValueError(f"x has dtype {x.dtype} but w has {w.dtype}: they must match")
    assert x.device == w.device, "x and w must be on the same device"
    torch._check(x.is_cuda, lambda: "fused op expects a CUDA tensor, got " + str(x.device))
    warnings.warn("bf16 is not supported here; using fp32")
    raise KeyError("no such key")  # not about dtypes or devices: not mined
"""
_FIXTURE_SO = (
    b"\x00\x01ELF\x00kernel only supports fp16 and bf16 inputs, got %s\x00short\x00gemm: shapes do not agree\x00"
)


def test_miner_reads_a_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "fixture-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("fixture/ops.py", _FIXTURE_PY)
        archive.writestr("fixture/_C.so", _FIXTURE_SO)
        archive.writestr("fixture/tests/test_ops.py", 'raise ValueError("test dtype must be fp16")')
    rows = [(m.site, m.kind, m.type, m.template) for m in mine_artifact(wheel, "fixture", "1.0")]
    assert rows == [
        ("fixture/ops.py:5", "raise", "ValueError", "x has dtype {dtype} but w has {dtype}: they must match"),
        ("fixture/ops.py:6", "assert", "AssertionError", "x and w must be on the same device"),
        ("fixture/ops.py:7", "check", "RuntimeError", "fused op expects a CUDA tensor, got {}"),
        ("fixture/ops.py:8", "warn", "", "bf16 is not supported here; using fp32"),
        ("_C.so", "string", "", "kernel only supports fp16 and bf16 inputs, got {}"),
    ]
    assert main([str(wheel), "--library", "fixture", "--version", "1.0", "--out", str(tmp_path / "out.jsonl")]) == 0
    assert len((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()) == 5


def test_compiled_strings_are_read_like_sentences() -> None:
    """The sentence filter reads a message glued to a quote, and passes over a long packed run of letters (as
    libctranslate2's string table has) and C++ symbols."""
    from dtypefix.kbtools.miner import mine_strings

    table = b"\x00".join(
        [
            b"'Requested compute type, but the device does not support float16 ",
            b"a" * 60_000,
            b"_ZN12ctranslate2dtype_nameENS_8DataTypeE_float16",
            b"kernel expects bfloat16 inputs on cuda ",
        ]
    )
    templates = [m.template for m in mine_strings(table, "lib.so", "fixture", "1.0")]
    assert templates == [
        "'Requested compute type, but the device does not support float16",
        "kernel expects bfloat16 inputs on cuda",
    ]


def test_triage_reasons() -> None:
    assert triage("x has dtype {dtype} but w has {dtype}: they must match") == "in"
    assert triage("expected 'other' to be a CPU tensor, but got a CUDA tensor") == "in"
    assert triage("The size of tensor a must match on device {device} at dimension {dim}") == "shape"
    assert triage("Profiler was requested with CUDA on this node") == "not-a-check"
    assert triage("padding should be smaller than half of kernel_size") == "other-sense"
    assert triage("CUDA out of memory on device {device}; cannot allocate") == "memory"
    # autocast's promote policy refusing a second reduced-precision dtype is a dtype check, whatever its wording
    assert triage("Unexpected floating ScalarType in at::autocast::prioritize", "", "check") == "in"


@pytest.mark.parametrize(
    ("template", "site", "error", "scope"),
    [
        # a precision word inside a name, or in a placeholder's name, is not what the message says
        ("mm_mxfp8: K dimension mismatch: a.shape[1]={k}, b.shape[0]={n}", "", "AssertionError", "shape"),
        ("use_gate_in_kernel=True requires A_log and dt_bias", "", "RuntimeError", "other-sense"),
        (
            "pre-processed weights require FLASHINFER_TRTLLM backend, moe backend, got {nvfp4_backend}",
            "",
            "",
            "api-misuse",
        ),
        ("accum_mode must be one of {FP8_ACCUM_MODE_CHOICES}, got {accum_mode}.", "", "ValueError", "other-sense"),
        ("x has dtype {dtype}, expected bfloat16", "", "ValueError", "in"),
        # a device-only message that says where a tensor must be is a placement check, whatever else it mentions
        ("kernel compilation requires a CUDA device", "", "RuntimeError", "in"),
        ("index_add(): self, index and source expected to be in the same device, but got {}", "", "", "in"),
        ("paged-KV metadata must be on {device}, got {device}", "", "ValueError", "in"),
        # otherwise its reason: the runtime's own machinery, an argument, the machine, an import
        ("b12x MoE plans must be created before CUDA capture", "", "RuntimeError", "internal"),
        ("Device {device} not supported", "torch/_inductor/graph.py:2345", "AssertionError", "internal"),
        ("device must be str or torch.device, got {type}", "", "AssertionError", "api-misuse"),
        ("Can't get nvml device count", "", "", "platform"),
        ("torch_npu is required when run on npu device.", "", "ImportError", "install-or-build"),
        ("Must bind to a non-empty set of CPU indices", "", "RuntimeError", "api-misuse"),
        # a device-type feature gap stays in scope (the device family answers it)
        ("lora isn't supported on CPU.", "", "AssertionError", "in"),
    ],
)
def test_triage_of_device_and_precision_words(template: str, site: str, error: str, scope: str) -> None:
    assert triage(template, site, "raise", error) == scope


def test_instantiate_fills_by_what_the_name_says() -> None:
    assert instantiate("Device type {device_type} does not support autocast") == (
        "Device type cuda:0 does not support autocast"
    )
    assert instantiate("uses {block_size}-element scale blocks") == "uses x-element scale blocks"
    assert instantiate("scratch must be FP32{scratch_shape}") == "scratch must be FP32 x"


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: expected scalar type Half but found Float",
        "ValueError: Unsupported optimizer for CPU: x",
        "KeyError: 'no such key'",
        "FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.",
        "",
    ],
)
def test_answers_agrees_with_explain(text: str, catalog) -> None:
    assert answers(text, catalog) == bool(explain(text, catalog=catalog).matches)


def test_in_scope_mined_messages_are_recognised(catalog) -> None:
    """Issue 21: every in-scope mined message, instantiated, gets an answer (a cause, its family, or the safety
    net). Each wording is explained once (``mined_answered``, the first entry that matches decides)."""
    answered = mined_answered(MINED, catalog)
    missed = [r for r in MINED if r.scope == "in" and not answered[r.text]]
    assert len(answered) > 5000
    assert not missed, f"{len(missed)} in-scope mined messages get no answer, first: " + "; ".join(
        f"{r.library} {r.version} {r.site}: {r.text!r}" for r in missed[:5]
    )


@pytest.mark.parametrize(
    "message",
    [
        # flashinfer python/csrc (0.1.x): TORCH_CHECK(success, "... failed to dispatch with dtype ", q.scalar_type())
        "RuntimeError: BatchPrefillWithPagedKVCache failed to dispatch with dtype Half",
        # torch 2.13.0 libtorch_cpu.so (census/mined/torch.jsonl)
        "RuntimeError: mkldnn_matmul: only enabled for bf16 and fp16 path",
        # triton 3.9.0 libtriton.so (census/mined/triton.jsonl)
        "RuntimeError: Conversion from/to f8e4m3nv is only supported on compute capability >= 89",
        # cupy cupyx/cutensor.py: raise ValueError('Un-supported dtype combinations: ({}, {}, {})'.format(...))
        "ValueError: Un-supported dtype combinations: (float16, bfloat16, float32)",
        # torch aten/src/ATen/native/mps/OperationUtils.mm: TORCH_CHECK_TYPE(false, "Trying to convert ", scalar_type,
        # " to the MPS backend but it does not have support for that dtype.")
        "TypeError: Trying to convert Float8_e4m3fn to the MPS backend but it does not have support for that dtype.",
    ],
)
def test_the_dtype_safety_net_reads_more_check_words(message: str, catalog) -> None:
    """'only enabled/supported', 'failed to dispatch', 'un-supported' and 'does not have support' are check words too (issue 21 section 3): a
    message that names a dtype with one of them gets the low-confidence family answer, not "no known cause"."""
    ranked = [(m.entry.id, m.confidence.value) for m in explain(message, catalog=catalog).matches]
    assert ranked[:1] == [("DTF050", "low")], ranked


@pytest.mark.parametrize(
    ("message", "family"),
    [
        # torch 2.2.0 libtorch_cpu.dylib (macOS wheel), MPS copy: an internal assert printing its dtype condition
        # (AITER's bare "gating_output.dtype() == correction_bias.dtype()" has its own entry, DTF709)
        (
            "RuntimeError: src.dtype() == dst.dtype() && src.strides() == dst.strides() && is_dense_in_storage(src) "
            'INTERNAL ASSERT FAILED at "/Users/runner/work/pytorch/pytorch/pytorch/aten/src/ATen/native/mps/operations/'
            'Copy.mm":163, please report a bug to PyTorch.',
            "DTF050",
        ),
        # pytorch/pytorch issue 149822 (torch 2.6.0): CUDA's device guard met a CPU tensor
        (
            'RuntimeError: t == DeviceType::CUDA INTERNAL ASSERT FAILED at "/pytorch/c10/cuda/impl/CUDAGuardImpl.h":28, '
            "please report a bug to PyTorch.",
            "DTF051",
        ),
        # the same check's wording since pytorch PR 149838 (census/torch.yaml)
        ("RuntimeError: CUDAGuardImpl initialized with non-CUDA DeviceType: cpu", "DTF051"),
    ],
)
def test_a_printed_condition_on_dtypes_or_devices_is_a_check(message: str, family: str, catalog) -> None:
    """A kernel that prints its failed condition (``a.dtype() == b.dtype()``, ``t == DeviceType::CUDA``) names no
    check word, and still checks dtypes or devices: the safety net answers it at low confidence (issue 21 §3)."""
    ranked = [(m.entry.id, m.confidence.value) for m in explain(message, catalog=catalog).matches]
    assert ranked[:1] == [(family, "low")], ranked


def test_mined_table_lists_releases_in_version_order() -> None:
    """docs/kb/census.md's per-release table reads 2.3.1 before 2.13.0 (a string sort put 2.13.0 first), and a
    version PEP 440 cannot read after the others rather than failing the page."""
    rows = [
        (MinedRow("torch", version, "a.py:1", "raise", "RuntimeError", "expected dtype float32", "in"), True)
        for version in ("2.13.0", "2.3.1", "nightly", "2.8.0")
    ]
    section, _ = mined_summary(rows)
    listed = [line.split(" | ")[1] for line in section.splitlines() if line.startswith("| torch |")]
    assert listed == ["2.3.1", "2.8.0", "2.13.0", "nightly"]
