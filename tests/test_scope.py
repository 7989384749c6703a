"""Failures that are not ours are named as such (exit 1, a one-line hint), never given an entry."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dtypefix.matcher import explain
from dtypefix.matcher.catalog import load_catalog
from dtypefix.matcher.scope import OutOfScope

KB = load_catalog(cache_dir=None)
SHARED_CORPUS = Path(__file__).parent / "corpus"


def _corpus_log(report_id: str) -> str:
    return str(yaml.safe_load((SHARED_CORPUS / f"{report_id}.yaml").read_text(encoding="utf-8"))["log"])


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (_corpus_log("fa-762"), OutOfScope.GPU_ARCHITECTURE),
        (_corpus_log("fa-1966"), OutOfScope.GPU_ARCHITECTURE),
        ("RuntimeError: q_v is only supported for Hopper GPUs\n", OutOfScope.GPU_ARCHITECTURE),
        (
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
            OutOfScope.GPU_ARCHITECTURE,
        ),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n", OutOfScope.OUT_OF_MEMORY),
        ("ImportError: /x/flash_attn_2_cuda.so: undefined symbol: _ZN3c10\n", OutOfScope.BINARY),
    ],
)
def test_not_ours_is_named_and_never_matched(text: str, kind: OutOfScope) -> None:
    report = explain(text, catalog=KB)
    assert not report.matches and report.out_of_scope is kind


def test_a_precision_capability_check_stays_ours() -> None:
    """bf16 needing Ampere is about the dtype, unlike FlashAttention refusing the architecture whatever it is."""
    text = "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0\n"
    report = explain(text, catalog=KB)
    assert report.matches and report.out_of_scope is None


def test_abi_is_a_word_not_part_of_one() -> None:
    """ "probability" holds the letters of ABI: a sampling error (tests/blind31a, belle-412) is no binary mismatch."""
    report = explain("RuntimeError: probability tensor contains either `inf`, `nan` or element < 0\n")
    assert report.out_of_scope is None
    assert (
        explain("ImportError: libtorch.so: undefined symbol: _ZN3c10 (ABI mismatch)\n").out_of_scope
        is OutOfScope.BINARY
    )
