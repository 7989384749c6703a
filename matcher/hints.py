"""Log lines that name the two sides of a failure before it happens.

Libraries often warn about the very mismatch that later crashes: transformers says "`input_ids` is on cpu, whereas
the model is on cuda" before ``generate`` fails on two devices; flash-attention code says the hidden states were
"silently casted in float32"; accelerate says parameters were offloaded. Read as evidence, they tell which side is
which when the error message alone does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from .regex import lazy_regex
from .source import lines_containing

__all__ = ["HINT_KEYS", "Hint", "find_hints"]


HINT_KEYS = (
    "input-ids-device",
    "hidden-states-float32",
    "offload",
    "fsdp-param-dtype",
    "deepspeed-precision",
    "accelerate-precision",
    "process-group-backend",
    "dispatched-model-moved",
    "torch-npu",
    "model-dtype",
)
"""Every kind of hint this module reads (the renderers word each; the JSON schema lists them)."""


@dataclass(frozen=True)
class Hint:
    """One log line that names an operand and its dtype or device."""

    key: str
    """Which line it is (one of :data:`HINT_KEYS`); the renderers word it."""
    subject: str
    """What the line speaks of (``input_ids``, ``hidden states``, ``parameters``)."""
    value: str
    """Its dtype or device as printed (``cpu``, ``float32``)."""
    other: str = ""
    """The other side, when the line names one (``model``)."""
    other_value: str = ""
    line: str = ""
    """The line as it was read, trimmed."""
    said: str = ""
    """The words of the line that give ``value`` (``torch_dtype=torch.float16``, ``--fp16``), where the renderers show
    them as the value's source; empty where the whole line is."""


_INPUT_IDS = lazy_regex(r"`input_ids` is on (?P<a>\w+), whereas the model is on (?P<b>\w+)")
# transformers' flash-attention path: the query was float32 and is cast to the target dtype it names before the kernel.
_SILENT_CAST = lazy_regex(
    r"The input hidden states seems to be silently casted in float32(?:.*?cast back the input in (?P<t>torch\.\w+|\w+))?"
)
# accelerate's big-model dispatch and transformers' quantized-model check: parts of the model live off the GPU.
_OFFLOAD = lazy_regex(
    # older accelerate printed "meta device device"
    r"Some parameters are on the meta device(?: device)? because they were offloaded to the "
    r"(?P<where>cpu and disk|cpu|disk)"
    r"|Some modules are dispatched on the (?P<dispatched>CPU or the disk)"
)
# FSDP1's MixedPrecision and FSDP2's MixedPrecisionPolicy, as their dataclass repr prints them.
_FSDP_MP = lazy_regex(r"MixedPrecision(?:Policy)?\(param_dtype=(?P<p>[\w.]+), reduce_dtype=(?P<r>[\w.]+)")
_DEEPSPEED = lazy_regex(r"\b(?P<key>bfloat16_enabled|bf16_enabled|fp16_enabled)\s*\.{3,}\s*True\b")
# AcceleratorState's repr (`accelerate` prints it at start-up in many scripts and in `accelerate test`).
_ACCELERATE = lazy_regex(r"\bMixed precision type: (?P<mode>fp16|bf16|fp8)\b")
# The process group's backend: NCCL carries CUDA tensors only, Gloo CPU tensors (and CUDA ones for some
# collectives). Read from the backend's own log lines (`ProcessGroupNCCL.cpp:…`) or an explicit `backend=`.
_BACKEND = lazy_regex(r"\bProcessGroup(?P<pg>NCCL|Gloo)\b|\bbackend\s*=\s*[\"']?(?P<named>nccl|gloo)\b")
_DEVICE_OF_BACKEND = {"nccl": "cuda", "gloo": "cpu"}
# accelerate's big_modeling wraps .to()/.cuda() of a model dispatched with a device map.
_DISPATCHED_MOVE = lazy_regex(r"You shouldn't move a model that is dispatched using accelerate hooks")
# Ascend's plugin imported or in a frame's path: this torch (a CPU build) runs on NPUs through torch_npu, not CUDA.
_TORCH_NPU = lazy_regex(
    r"\bimport torch_npu\b|\bimport torch, torch_npu\b|[\\/](?:site|dist)-packages[\\/]torch_npu[\\/]"
)
# The dtype a model is loaded or run in, as code or a command line sets it: transformers' ``torch_dtype=`` (``dtype=``
# from 4.56) in a ``from_pretrained`` call, HF-style ``--fp16`` / ``--bf16`` flags (not followed by False) and the
# ``fp16=True`` / ``bf16=True`` of an arguments repr. A log that sets two different ones names none (:func:`find_hints`).
_MODEL_DTYPE = lazy_regex(
    r"\btorch_dtype\s*=\s*(?:torch\.(?P<torch>float16|half|bfloat16|float32|float)\b|[\"'](?P<quoted>float16|bfloat16|float32)[\"'])"
    r"|from_pretrained\(.*\bdtype\s*=\s*torch\.(?P<new>float16|half|bfloat16|float32|float)\b"
    r"|(?:^|\s)--(?P<flag>fp16|bf16)\b(?![ =]+(?:False|false|0)\b)"
    r"|\b(?P<field>fp16|bf16)\s*=\s*True\b"
)
_FLAG_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "half": "float16", "float": "float32"}
_ANY = lazy_regex(
    r"whereas the model is on|silently casted in float32|offloaded to the|dispatched on the CPU|MixedPrecision"
    r"|_enabled \.|Mixed precision type: |ProcessGroup(?:NCCL|Gloo)|backend\s*=|dispatched using accelerate hooks"
    r"|torch_npu|dtype\s*=|--fp16|--bf16|fp16\s*=\s*True|bf16\s*=\s*True"
)
# Kinds whose lines must agree: a log that loads one model in float16 and another in bfloat16 says neither.
_ONE_VALUE = frozenset({"model-dtype"})


def find_hints(text: str) -> tuple[Hint, ...]:
    """Every such line in ``text``, first occurrence of each kind, in order."""
    found: dict[str, Hint] = {}
    disagree: set[str] = set()
    for raw in lines_containing(_ANY, text):
        line = raw.strip()[:400]
        for hint in _read(line):
            first = found.setdefault(hint.key, hint)
            if hint.key in _ONE_VALUE and first.value != hint.value:
                disagree.add(hint.key)
    return tuple(h for h in found.values() if h.key not in disagree)


def _read(line: str) -> list[Hint]:
    hints: list[Hint] = []
    if match := _INPUT_IDS.search(line):
        hints.append(Hint("input-ids-device", "input_ids", match["a"], "model", match["b"], line))
    if match := _SILENT_CAST.search(line):
        hints.append(Hint("hidden-states-float32", "hidden states", "float32", "target", match["t"] or "", line))
    if match := _OFFLOAD.search(line):
        where = match["where"] or (match["dispatched"] or "").replace("CPU or the disk", "cpu or disk")
        hints.append(Hint("offload", "parameters", where, line=line))
    if match := _FSDP_MP.search(line):
        hints.append(Hint("fsdp-param-dtype", "param_dtype", match["p"], "reduce_dtype", match["r"], line))
    if match := _DEEPSPEED.search(line):
        dtype = "fp16" if match["key"].startswith("fp16") else "bf16"
        hints.append(Hint("deepspeed-precision", "DeepSpeed", dtype, line=line, said=match[0]))
    if match := _ACCELERATE.search(line):
        hints.append(Hint("accelerate-precision", "Accelerator", match["mode"], line=line, said=match[0]))
    if match := _BACKEND.search(line):
        backend = (match["pg"] or match["named"]).lower()
        device = _DEVICE_OF_BACKEND[backend]
        hints.append(Hint("process-group-backend", "process group", device, "backend", backend, line))
    if _DISPATCHED_MOVE.search(line):
        hints.append(Hint("dispatched-model-moved", "model", "device_map", line=line))
    if _TORCH_NPU.search(line):
        hints.append(Hint("torch-npu", "torch", "npu", line=line))
    if match := _MODEL_DTYPE.search(line):
        name = next(v for v in match.groupdict().values() if v)
        said = match[0].strip()
        if said.startswith("from_pretrained("):
            said = said[said.rindex("dtype") :].strip()  # the keyword, not the whole call
        hints.append(Hint("model-dtype", "model", _FLAG_DTYPES.get(name, name), line=line, said=said))
    return hints
