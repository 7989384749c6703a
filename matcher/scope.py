"""Failures that are not ours: an out-of-memory error is not a dtype problem, and saying so plainly helps more
than "no known cause".

Only consulted when no entry matched. Each kind is recognised from the headline error's type and message; the
renderers say what it is in words.
"""

from __future__ import annotations

import re
from enum import Enum

from .incident import Incident
from .regex import LazyRegex, lazy_regex

__all__ = ["OutOfScope", "out_of_scope"]


class OutOfScope(str, Enum):
    """Kinds of failure that look like ours (a crash in a training run) but are not dtype or device placement."""

    OUT_OF_MEMORY = "out-of-memory"
    COLLECTIVE = "collective"
    SHAPE = "shape"
    MISSING_MODULE = "missing-module"
    DEVICE_ASSERT = "device-assert"
    BINARY = "binary-incompatible"
    GPU_ARCHITECTURE = "gpu-architecture"


_RULES: tuple[tuple[OutOfScope, LazyRegex], ...] = (
    (
        OutOfScope.OUT_OF_MEMORY,
        lazy_regex(r"OutOfMemoryError|out of memory|CUBLAS_STATUS_ALLOC_FAILED|MemoryError", re.I),
    ),
    (
        OutOfScope.COLLECTIVE,
        lazy_regex(r"\bNCCL\b|ProcessGroupNCCL|DistBackendError|collective operation timeout|Watchdog caught", re.I),
    ),
    (OutOfScope.DEVICE_ASSERT, lazy_regex(r"device-side assert triggered|illegal memory access", re.I)),
    (
        OutOfScope.SHAPE,
        lazy_regex(
            r"shapes cannot be multiplied|size mismatch|The size of tensor a|is invalid for input of size|"
            r"must match the size|Expected input batch_size|expected shape|shape mismatch|mismatched shapes",
            re.I,
        ),
    ),
    # Before the import rule: an ImportError that names an undefined symbol is a binary mismatch.
    (OutOfScope.BINARY, lazy_regex(r"undefined symbol|GLIBC\w*_[\d.]+' not found|\bABI\b", re.I)),
    (OutOfScope.MISSING_MODULE, lazy_regex(r"^(?:ModuleNotFoundError|ImportError)$|No module named", re.I)),
    # A kernel that refuses or was not built for this GPU, whatever the dtype (the shared corpus's fa-762, fa-1966).
    (
        OutOfScope.GPU_ARCHITECTURE,
        lazy_regex(
            r"(?:FlashAttention\S*|Attention combine function) only supports (?:Ampere|Hopper) GPUs or newer|"
            r"is only supported (?:for|on) Hopper GPUs|no kernel image is available for execution on the device|"
            r"FlashAttention backward for head dim [^\n]{1,80}requires A100"
        ),
    ),
)


def out_of_scope(incident: Incident) -> OutOfScope | None:
    """What kind of non-dtype failure the headline error is, if it is one we can name."""
    primary = incident.primary
    if primary is None:
        return None
    for kind, pattern in _RULES:
        if pattern.search(primary.exc_type.rsplit(".", 1)[-1]) or pattern.search(primary.message):
            return kind
    return None
