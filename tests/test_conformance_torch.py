"""Conformance: a real torch (CPU build) raises the messages the KB relies on, and dtypefix matches them.

Each reproducer makes torch raise for real; its traceback is fed to ``explain`` and the intended entry (or, for a
message shared by many causes, an entry of the intended message family) must come first. Messages that need a
GPU are listed in docs/conformance.md with the source they were taken from.

Run with torch installed (``pip install torch==2.13.0`` takes the CPU build on these machines); without torch the
whole tier is skipped with its reason.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable

import pytest

pytestmark = pytest.mark.torch

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # a torch without numpy warns at import; not our concern here
    torch = pytest.importorskip(
        "torch", reason="the conformance tier needs torch: pip install torch==2.13.0 (CPU build)"
    )
F = torch.nn.functional

from dtypefix.matcher import explain  # noqa: E402
from dtypefix.matcher.catalog import load_catalog  # noqa: E402

CATALOG = load_catalog(cache_dir=None)


def _gradscaler_fp16_grads() -> None:
    param = torch.nn.Parameter(torch.randn(3, dtype=torch.half))
    param.grad = torch.randn(3, dtype=torch.half)
    optimizer = torch.optim.SGD([param], lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    scaler.scale(torch.tensor(1.0))
    scaler.unscale_(optimizer)


def _bf16_to_numpy() -> None:
    pytest.importorskip("numpy")
    torch.ones(2, dtype=torch.bfloat16).numpy()


# name -> (reproducer, entry ids or families that must come first, the message torch prints)
CASES: dict[str, tuple[Callable[[], object], set[str], str]] = {
    "linear fp32 input, bf16 weight": (
        lambda: F.linear(torch.randn(2, 3), torch.randn(4, 3, dtype=torch.bfloat16)),
        {"mat1-mat2-dtype"},
        "expected m1 and m2 to have the same dtype",
    ),
    "half Linear, fp32 input": (
        lambda: torch.nn.Linear(3, 4).half()(torch.randn(2, 3)),
        {"mat1-mat2-dtype"},
        "mat1 and mat2 must have the same dtype",
    ),
    "addmm half and float": (
        lambda: torch.addmm(torch.randn(2, 2), torch.randn(2, 3, dtype=torch.half), torch.randn(3, 2)),
        {"mat1-mat2-dtype"},
        "mat1 and mat2 must have the same dtype, but got Half and Float",
    ),
    "matmul float and double": (
        lambda: torch.randn(2, 3) @ torch.randn(3, 2, dtype=torch.float64),
        {"mat1-mat2-dtype"},
        "expected m1 and m2 to have the same dtype, but got: float != double",
    ),
    "bmm float and bf16": (
        lambda: torch.bmm(torch.randn(1, 2, 3), torch.randn(1, 3, 2, dtype=torch.bfloat16)),
        {"scalar-type-mismatch"},
        "expected scalar type Float but found BFloat16",
    ),
    "conv bf16 input, fp32 weight": (
        lambda: torch.nn.Conv2d(3, 3, 3)(torch.randn(1, 3, 8, 8, dtype=torch.bfloat16)),
        {"input-weight-type"},
        "Input type (c10::BFloat16) and bias type (float) should be the same",
    ),
    "conv fp32 input, half weight": (
        lambda: torch.nn.Conv2d(3, 3, 3).half()(torch.randn(1, 3, 8, 8)),
        {"input-weight-type"},
        "Input type (float) and bias type (c10::Half) should be the same",
    ),
    "GradScaler unscaling fp16 gradients": (
        _gradscaler_fp16_grads,
        {"unscale-fp16-gradients", "DTF006"},
        "Attempting to unscale FP16 gradients.",
    ),
    "bf16 tensor to numpy": (_bf16_to_numpy, {"DTF104"}, "Got unsupported ScalarType BFloat16"),
    "cross-entropy with float targets": (
        lambda: F.cross_entropy(torch.randn(3, 5), torch.tensor([1.0, 2.0, 3.0])),
        {"DTF109"},
        "expected target dtype to be Long or Byte, but got Float",
    ),
    "nll_loss with int32 targets": (
        lambda: F.nll_loss(torch.randn(3, 5), torch.tensor([1, 2, 3], dtype=torch.int32)),
        {"DTF109"},
        "expected target dtype to be Long or Byte, but got Int",
    ),
    "embedding with float indices": (
        lambda: torch.nn.Embedding(10, 3)(torch.tensor([1.0])),
        {"DTF110"},
        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int",
    ),
    "SDPA with mixed dtypes": (
        lambda: F.scaled_dot_product_attention(
            torch.randn(1, 2, 4, 8),
            torch.randn(1, 2, 4, 8, dtype=torch.bfloat16),
            torch.randn(1, 2, 4, 8, dtype=torch.bfloat16),
        ),
        {"DTF107"},
        "Expected query, key, and value to have the same dtype",
    ),
    "overflow converting to Half": (
        lambda: torch.full((2,), 70000, dtype=torch.half),
        {"DTF105"},
        "value cannot be converted to type c10::Half without overflow",
    ),
    "index_put with mismatched dtypes": (
        lambda: torch.zeros(3).index_put_((torch.tensor([0]),), torch.tensor([1.0], dtype=torch.float64)),
        {"DTF714"},
        "Index put requires the source and destination dtypes match",
    ),
    "BCE with integer targets": (
        lambda: F.binary_cross_entropy(torch.rand(3), torch.tensor([1, 0, 1])),
        {"DTF132", "scalar-type-mismatch"},
        "Found dtype Long but expected Float",
    ),
    "fp16 op without a CPU kernel": (
        lambda: torch.linalg.cholesky(torch.eye(2).half()),
        {"half-not-implemented-cpu"},
        "\"cholesky_cpu\" not implemented for 'Half'",
    ),
    "CUDA asked of a CPU-only build": (
        lambda: torch.zeros(1).cuda(),
        {"DTF484"},
        "Torch not compiled with CUDA enabled",
    ),
    "LSTM input on another device than its weights": (
        lambda: torch.nn.LSTM(2, 3)(torch.randn(4, 1, 2, device="meta")),
        {"DTF480"},
        "Input and parameter tensors are not at the same device",
    ),
    "in-place float update of a long tensor": (
        lambda: torch.zeros(3, dtype=torch.long).add_(torch.randn(3)),
        {"DTF130"},
        "result type Float can't be cast to the desired output type Long",
    ),
}


def _raise(reproducer: Callable[[], object]) -> str:
    try:
        reproducer()
    except Exception:
        return traceback.format_exc()
    pytest.fail("the reproducer did not raise: torch's behaviour changed; update the KB and this tier")


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_torch_message_is_matched_by_the_intended_entry(name: str) -> None:
    reproducer, wanted, wording = CASES[name]
    text = _raise(reproducer)
    assert wording in text, f"torch's wording changed: {text.splitlines()[-1]!r}"
    report = explain(text, catalog=CATALOG)
    assert report.matches, f"no entry matches {text.splitlines()[-1]!r}"
    best = report.matches[0].entry
    assert best.id in wanted or best.family in wanted, (
        f"{text.splitlines()[-1]!r}: {best.id} ({best.family}) ranked first, expected one of {sorted(wanted)}"
    )


def test_torch_is_the_cpu_build_the_tier_targets() -> None:
    assert torch.__version__.startswith("2."), torch.__version__
