"""What an expression's own code fixes of the tensor it computes: ``x.half()`` is float16 whatever ``x`` was,
``torch.zeros(n, device="cpu")`` is on the CPU, ``y.to("cuda:1")`` on cuda:1.

A message that prints no value for a side ("mat1 and mat2 must have the same dtype" in torch 2.0, a cut "Expected all
tensors to be on the same device") still has one where the expression tied to that side settles it by a literal. Only
the outermost step of the expression counts, read through the steps that keep the dtype and device (``.view(...)``,
indexing, ``.cuda()`` for a dtype): ``x.half().to(other)`` says nothing, since ``other`` may be any dtype.
"""

from __future__ import annotations

import ast
import re

__all__ = ["fixed_value"]

# Methods that return the tensor in one dtype, whatever its own.
_DTYPE_METHODS = {
    "half": "float16",
    "float": "float32",
    "bfloat16": "bfloat16",
    "double": "float64",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "char": "int8",
    "byte": "uint8",
    "bool": "bool",
}
_DEVICE_METHODS = frozenset({"cpu", "cuda"})
# Steps that keep both the dtype and the device of their receiver.
_KEEPS = frozenset(
    {
        "view",
        "reshape",
        "transpose",
        "permute",
        "contiguous",
        "unsqueeze",
        "squeeze",
        "t",
        "expand",
        "expand_as",
        "flatten",
        "clone",
        "detach",
        "repeat",
        "narrow",
        "requires_grad_",
    }
)
# Factories whose ``dtype=`` / ``device=`` keywords are the result's.
_FACTORIES = frozenset(
    {
        "tensor",
        "as_tensor",
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "linspace",
        "rand",
        "randn",
        "randint",
        "eye",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "rand_like",
        "randn_like",
    }
)
_DEVICES = ("cpu", "cuda", "mps", "xpu", "meta")
# torch's dtype attributes, their aliases included (``torch.half``, ``torch.long``).
_TORCH_DTYPE = re.compile(
    r"(?:b?float(?:16|32|64)?|float8_\w+|half|double|long|int(?:8|16|32|64)?|short|uint(?:8|16|32|64)|complex(?:32|64|128)"
    r"|cfloat|cdouble|bool)"
)


def fixed_value(expression: str, kind: str) -> str:
    """The dtype (``torch.float16``, ``float16``) or device (``cuda:1``) that ``expression``'s own code gives the tensor
    it computes, for ``kind`` ``dtype`` or ``device``; empty when its code does not settle it."""
    try:
        node: ast.expr | None = ast.parse(expression.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return ""
    while node is not None:
        if isinstance(node, ast.Subscript):
            node = node.value  # indexing keeps both
            continue
        if literal := (_device(node) if kind == "device" else _dtype(node)):
            return literal  # the expression is the value itself (``"cuda"``, ``torch.float16``)
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            return ""
        name, receiver = node.func.attr, node.func.value
        if isinstance(receiver, ast.Name) and receiver.id == "torch":
            return _keyword(node, kind) if name in _FACTORIES else ""
        step = receiver if name in _KEEPS else _step(node, name, kind)
        if isinstance(step, str):
            return step
        node = step
    return ""


def _step(call: ast.Call, name: str, kind: str) -> ast.expr | str | None:
    """What one conversion step settles: the value (a string), the receiver to read on (it keeps this kind), or
    ``None`` (it may change this kind to something the code does not show)."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if name in _DTYPE_METHODS and not call.args and not call.keywords:
        return _DTYPE_METHODS[name] if kind == "dtype" else receiver
    if name in _DEVICE_METHODS:
        if kind == "dtype":
            return receiver
        if name == "cpu":
            return "cpu"
        index = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
        if index is None:
            return "cuda"
        if isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool):
            return f"cuda:{index.value}"
        return _device(index) or None
    if name in ("to", "type"):
        # ``.to(device)``, ``.to(dtype)``, ``.to(device, dtype)``, ``.to(other)``: each argument is read as one kind,
        # with its literal value or none (``self.device``), or the step may change either kind.
        found: dict[str, str] = {}
        for argument in call.args:
            read = _kind_of(argument)
            if read is None:
                return None
            found[read[0]] = read[1]
        for keyword in call.keywords:
            if keyword.arg in ("dtype", "device"):
                found[keyword.arg] = _dtype(keyword.value) if keyword.arg == "dtype" else _device(keyword.value)
        if name == "type" and "device" in found:
            return None
        if kind not in found:
            return receiver  # this kind is kept
        return found[kind] or None
    return None


def _kind_of(argument: ast.expr) -> tuple[str, str] | None:
    """``(kind, literal value or "")`` of an argument of ``.to()``: ``torch.float16``, ``"cuda"``, ``self.device``,
    ``dtype``; ``None`` for anything else (``.to(other)`` takes both of another tensor)."""
    if dtype := _dtype(argument):
        return "dtype", dtype
    if device := _device(argument):
        return "device", device
    name = (
        argument.attr if isinstance(argument, ast.Attribute) else argument.id if isinstance(argument, ast.Name) else ""
    )
    if name.endswith("dtype"):
        return "dtype", ""
    if name.endswith("device"):
        return "device", ""
    return None


def _keyword(call: ast.Call, kind: str) -> str:
    """The ``dtype=`` / ``device=`` literal a factory is given."""
    for keyword in call.keywords:
        if keyword.arg == kind:
            return _dtype(keyword.value) if kind == "dtype" else _device(keyword.value)
    return ""


def _dtype(node: ast.expr) -> str:
    """``torch.float16`` as written; empty for anything else."""
    if not isinstance(node, ast.Attribute) or not _TORCH_DTYPE.fullmatch(node.attr):
        return ""
    return f"torch.{node.attr}" if isinstance(node.value, ast.Name) and node.value.id == "torch" else ""


def _device(node: ast.expr) -> str:
    """``"cuda:1"``, ``torch.device("cpu")``, ``torch.device("cuda", 1)`` as a device; empty for anything else."""
    if isinstance(node, ast.Call) and _is_torch_device(node.func) and node.args and not node.keywords:
        name = _device(node.args[0])
        number = node.args[1] if len(node.args) == 2 else None
        if isinstance(number, ast.Constant) and isinstance(number.value, int):
            return f"{name}:{number.value}" if name and ":" not in name else ""
        return name if len(node.args) == 1 else ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        device, _, index = node.value.partition(":")
        if device in _DEVICES and (not index or index.isdigit()):
            return node.value
    return ""


def _is_torch_device(func: ast.expr) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "device"
        and isinstance(func.value, ast.Name)
        and func.value.id == "torch"
    )
