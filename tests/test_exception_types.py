"""Exception types as current torch raises them, and rankings the first GPU runs revealed (issue 13).

torch 2.x raises ``NotImplementedError`` (older releases ``RuntimeError``) for a kernel that has no implementation
for a dtype; a plain-torch GradScaler on bf16 parameters must name the GradScaler cause, not the generic family.
"""

from __future__ import annotations

import pytest

from dtypefix.matcher import explain

FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "/home/user/train.py", line 88, in <module>\n'
    "    scaler.unscale_(optimizer)\n"
    '  File "/home/user/.venv/lib/python3.11/site-packages/torch/amp/grad_scaler.py", line 342, in unscale_\n'
    '    optimizer_state["found_inf_per_device"] = self._unscale_grads_(\n'
)


@pytest.mark.parametrize("exc_type", ["RuntimeError", "NotImplementedError"])
def test_loss_target_message_under_either_exception_type(exc_type: str) -> None:
    text = f"{exc_type}: \"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Float'\n"
    assert explain(text).matches[0].entry.id == "DTF109"


@pytest.mark.parametrize("exc_type", ["RuntimeError", "NotImplementedError"])
def test_plain_torch_gradscaler_on_bf16_names_the_gradscaler_cause(exc_type: str) -> None:
    message = "\"_amp_foreach_non_finite_check_and_unscale_cuda\" not implemented for 'BFloat16'"
    report = explain(FRAMES + f"{exc_type}: {message}\n")
    assert report.matches[0].entry.id == "DTF101" and report.matches[0].confidence == "high"
    assert explain(f"{exc_type}: {message}\n").matches[0].entry.id == "DTF101"
