"""Installed package versions, from whatever the user pasted or attached.

Bug reports carry versions in a dozen shapes: ``pip freeze``, ``pip list``, ``conda list``,
``python -m torch.utils.collect_env``, ``accelerate env``, ``transformers env``, ``ds_report``, or a plain
"deepspeed==0.14.0" line in prose. Each shape gets one small reader; they all produce the same mapping so the
scorer never needs to know where a version came from (the evidence still says).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .regex import lazy_regex
from .source import lines_containing

__all__ = ["STACK_PACKAGES", "PackageVersion", "parse_versions"]

_VERSION = r"(?P<version>\d+(?:\.\d+)*(?:[._-]?(?:a|b|rc|post|dev)\d*)*(?:\+[\w.]+)?)"
# pip freeze / requirements / prose: "deepspeed==0.14.0", "torch == 2.1.0+cu121", "[pip3] torch==2.1.0".
_FREEZE = lazy_regex(r"(?:^|[\s`'\"(\[,])(?P<name>[A-Za-z][A-Za-z0-9._-]*)\s?===?\s?" + _VERSION + r"\b")
# pip list / conda list rows: "deepspeed            0.14.0", "pytorch  2.1.0  py3.10_cuda12.1_cudnn8.9.2_0  pytorch".
_TABLE_ROW = lazy_regex(r"^(?:\[(?:pip3?|conda)\]\s+)?(?P<name>[A-Za-z][A-Za-z0-9._-]*)\s{2,}" + _VERSION + r"(?:\s|$)")
_TABLE_ROW_LOOSE = lazy_regex(r"^\[(?:pip3?|conda)\]\s+(?P<name>[A-Za-z][A-Za-z0-9._-]*)\s+" + _VERSION + r"(?:\s|$)")
# "- `transformers` version: 4.36.2", "- PyTorch version (GPU?): 2.1.0+cu121 (True)", "- Accelerate version: 0.25.0",
# "PyTorch version: 2.1.0+cu121" (collect_env), "torch version .... 2.1.0" (ds_report), "DeepSpeed version: 0.14".
# `diffusers-cli env` puts an emoji before the name: "- 🤗 Diffusers version: 0.32.0.dev0".
_LABELLED = lazy_regex(
    r"^[-*\s]*(?:[^\x00-\x7f]+\s+)?`?(?P<name>[A-Za-z][A-Za-z0-9 ._-]*?)`?\s+(?:version|info)\b[^:\n]*?"
    r"(?::|\.{3,}|\s{2,})\s*"
    r"(?:\[)?" + _VERSION,
    re.IGNORECASE,
)
# The banner every DeepSpeed run logs: "[Rank 0] DeepSpeed info: version=0.14.0, git-hash=..., git-branch=...".
# A line that is only a name and a version, as bug-report templates' "System Info" lists are often filled in:
# "- transformers: 4.46.2", "* torch 2.5.1", "| peft | 0.13.2 |". Read only for the training stack's packages
# (:data:`STACK_PACKAGES`): a list of config keys ("- num_processes: 8") has the same shape.
_BARE = lazy_regex(r"^[-*•|\s]*`?(?P<name>[A-Za-z][A-Za-z0-9._-]*)`?\s*[:|]?\s*v?" + _VERSION + r"[\s|]*$")
_DEEPSPEED_BANNER = lazy_regex(r"\bDeepSpeed info: version=" + _VERSION)
# The banner Unsloth prints when it loads a model (unsloth/models/llama.py, vision.py), over three lines:
#   "==((====))==  Unsloth 2025.3.19: Fast Qwen2 patching. Transformers: 4.50.0. vLLM: 0.7.3."
#   "O^O/ \_/ \    Torch: 2.6.0+cu124. CUDA: 8.9. CUDA Toolkit: 12.4. Triton: 3.2.0"
#   "\        /    Bfloat16 = TRUE. FA [Xformers = 0.0.29.post3. FA2 = False]"
# (releases before December 2024 print "Transformers = 4.44.2" and "Pytorch: 2.4.0+cu121.").
_UNSLOTH_BANNER = lazy_regex(
    r"\bUnsloth (?P<unsloth>\d+\.\d+(?:\.\d+)?(?:\.post\d+)?): Fast \S+ patching\. Transformers(?::| =) "
    + _VERSION.replace("version", "transformers")
    + r"(?:\. vLLM: "
    + _VERSION.replace("version", "vllm")
    + ")?"
)
_UNSLOTH_TORCH = lazy_regex(r"^O\^O/ \\_/ \\\s+(?:Torch|Pytorch): " + _VERSION.replace("version", "torch"))
_UNSLOTH_XFORMERS = lazy_regex(r"\bFA \[Xformers = " + _VERSION.replace("version", "xformers"))
_SEPARATORS = lazy_regex(r"[-_.]+")
_ALIASES = {
    "pytorch": "torch",
    "pytorch-cuda": "pytorch-cuda",
    "deepspeed-info": "deepspeed",
    "huggingface-hub": "huggingface-hub",
    "liger": "liger-kernel",
    "flash-attention": "flash-attn",
    "flash-attn-2": "flash-attn",
    "transformer-engine": "transformer-engine",
    "te": "transformer-engine",
}
# Labels in collect_env / ds_report / `transformers env` that name a program, not a Python package.
_NOT_PACKAGES = {
    "python",
    "cuda",
    "cudnn",
    "nvcc",
    "gcc",
    "clang",
    "cmake",
    "libc",
    "os",
    "platform",
    "driver",
    "nvidia-driver",
    "cuda-runtime",
    "rocm",
    "hip",
    "miopen",
    "xnnpack",
    "is-debug-build",
    "cuda-used-to-build-pytorch",
    "rocm-used-to-build-pytorch",
    "torch-cuda",
    "torch-hip",
    "deepspeed-wheel-compiled-w",
    "shared-memory",
    "jaxlib",
    "tensorflow",
    "flax",
    "jax",
    "the",
    "a",
    "your",
    "this",
    "model",
    "config",
    "numpy-version",
}


@dataclass(frozen=True)
class PackageVersion:
    """One package's version and where it was read."""

    name: str
    """PEP 503 canonical name (``liger-kernel``, ``torch``)."""
    version: str
    """As printed, local part kept (``2.1.0+cu121``)."""
    origin: str
    """Which reader found it: ``freeze``, ``table``, ``labelled``, ``banner``; ``environment`` for the running
    interpreter's own packages."""


def _canonical(raw: str) -> str:
    name = _SEPARATORS.sub("-", raw.strip().replace(" ", "-")).lower()  # PEP 503 normalisation
    if name.endswith("-version"):
        name = name[: -len("-version")]
    return _ALIASES.get(name, name)


def _valid(version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        Version(version)
    except InvalidVersion:
        return False
    return True


# Lines that can hold a version at all; one C-level scan instead of three regexes on every line of a big log.
_CANDIDATE = lazy_regex(
    r"==|[Vv]ersion|VERSION|info\b|\s{2}\d+\.\d|Unsloth \d|O\^O/|Xformers = |^[-*•|\s]*`?[A-Za-z][\w.-]*`?\s*[:|]?\s*v?\d+\.\d+\S*[\s|]*$",
    re.MULTILINE,
)


def _unsloth_banner(line: str) -> Iterator[PackageVersion]:
    """The versions an Unsloth banner line states (none for any other line)."""
    for pattern in (_UNSLOTH_BANNER, _UNSLOTH_TORCH, _UNSLOTH_XFORMERS):
        found = pattern.search(line)
        if found:
            for name, version in found.groupdict().items():
                if version:  # a local part runs into the sentence's full stop: "Torch: 2.6.0+cu124."
                    yield PackageVersion(name, version.rstrip("."), "banner")


def _candidates(text: str) -> Iterator[PackageVersion]:
    for line in lines_containing(_CANDIDATE, text):
        stripped = line.strip()
        if not stripped or len(stripped) > 400:
            continue
        banner = _DEEPSPEED_BANNER.search(stripped)
        if banner:
            yield PackageVersion("deepspeed", banner["version"], "banner")
            continue
        unsloth = list(_unsloth_banner(stripped))
        if unsloth:
            yield from unsloth
            continue
        labelled = _LABELLED.match(stripped)
        if labelled and len(labelled["name"]) <= 40:
            yield PackageVersion(_canonical(labelled["name"]), labelled["version"], "labelled")
            continue
        row = _TABLE_ROW.match(stripped) or _TABLE_ROW_LOOSE.match(stripped)
        if row:
            yield PackageVersion(_canonical(row["name"]), row["version"], "table")
            continue
        bare = _BARE.match(stripped)
        if bare and _canonical(bare["name"]) in STACK_PACKAGES:
            yield PackageVersion(_canonical(bare["name"]), bare["version"], "table")
            continue
        for match in _FREEZE.finditer(stripped):
            yield PackageVersion(_canonical(match["name"]), match["version"], "freeze")


def parse_versions(text: str) -> dict[str, PackageVersion]:
    """Every package version found in ``text``; the first statement of a package wins."""
    found: dict[str, PackageVersion] = {}
    for candidate in _candidates(text):
        if candidate.name in _NOT_PACKAGES or candidate.name in found or not _valid(candidate.version):
            continue
        found[candidate.name] = candidate
    return found


STACK_PACKAGES = (
    "torch",
    "transformers",
    "accelerate",
    "deepspeed",
    "peft",
    "bitsandbytes",
    "flash-attn",
    "trl",
    "liger-kernel",
    "transformer-engine",
    "xformers",
    "torchao",
    "triton",
    "vllm",
    "unsloth",
    "axolotl",
    "llamafactory",
    "diffusers",
    "apex",
    "auto-gptq",
    "gptqmodel",
    "autoawq",
    "optimum",
    "hqq",
    "pytorch-optimizer",
    "prodigy-plus-schedule-free",
    "numpy",
)
"""The training stack a dtype / device failure depends on, in the order it is shown: listed before the rest of an
environment (an answer's packages line) and counted per cause (``scan``'s summary)."""
