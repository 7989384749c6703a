"""Where it broke: the failing line, whose code it is, and which expression on it is which operand.

A family message ("mat1 and mat2 must have the same dtype, but got Float and BFloat16") says what went wrong but
not where; the traceback it came with usually does. The op's call site is the innermost frame outside torch's own
modules; the call on that line (``self.score(pooled)``, ``F.conv2d(out, eye_filter)``) ties each side the message
names to an expression, using the operand roles kept as data in ``census/operands.yaml``. What cannot be tied is
said to be untied rather than guessed.
"""

from __future__ import annotations

import ast
import builtins
import functools
import itertools
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .hardware import Gpu, Hardware, gpus, required_capability
from .hints import Hint, find_hints
from .incident import Incident
from .literal import fixed_value
from .owner import Owner, OwnerKind, owner_of
from .recover import variants
from .regex import LazyRegex, lazy_regex
from .source import lines_containing
from .traceback import ErrorLine, ForwardTrace, Frame, Stack, find_forward_traces

__all__ = [
    "ORIGINS",
    "Location",
    "Operand",
    "OperandRule",
    "Site",
    "c10_spelling",
    "load_rules",
    "locate",
    "read_operands",
]


ORIGINS = ("message", "warning", "log", "line")
"""Where an operand's value can come from (:attr:`Operand.origin`)."""


@dataclass(frozen=True)
class Operand:
    """One side of the failing op, as the message names it, tied to an expression where the line shows it."""

    argument: str
    """The message's own name for it (``mat1``, ``query``, ``index``, ``expected``)."""
    role: str
    """What it is for the op (``input``, ``weight``, ``bias``, ``query``, ``source``, ``others``...)."""
    kind: str
    """``dtype`` or ``device``: which of the two the message gives."""
    value: str
    """The dtype or device as printed, ``c10::``/``struct`` prefixes removed; empty when the message names none."""
    expression: str = ""
    """The source expression it was tied to (``pooled``, ``self.score.weight``); empty when not tied."""
    origin: str = "message"
    """Where ``value`` was read: ``message`` (the error itself, or what the op requires), ``warning`` (a warning
    printed at the same line with a wording of ``census/operands.yaml``), ``log`` (a log line of :mod:`.hints`) or
    ``line`` (a literal on the failing line, ``.to("cuda")``, or what the tied expression's own code fixes,
    ``x.half()``: :mod:`.literal`)."""
    unlike: str = ""
    """What the message says this side is not, when it names no value of its own: the dtype or device the op
    requires (``scatter(): Expected dtype int64 for index``: the index is not int64); empty otherwise."""
    said: str = ""
    """With ``origin`` ``log``: the words of the log that set ``value`` (``torch_dtype=torch.float16``, ``--fp16``), where
    the hint read gives them; empty otherwise."""
    said_at: str = ""
    """With ``said``: ``file:line`` of the traceback frame whose code shows those words; empty when another line of the
    log does."""
    gpus: tuple[Gpu, ...] = ()
    """On the side that is the GPU a check refused (``gpu`` in ``census/operands.yaml``): the machine's GPU models as the
    input names them, with their compute capabilities (:func:`.hardware.gpus`); empty when it names none."""
    needs: float | None = None
    """On that side: the compute capability the check requires, as the message or the rule says it; ``None`` when
    neither does."""

    @property
    def short(self) -> bool | None:
        """The GPU falls short of what the check requires: ``True`` when every model named is below it, ``False`` when
        none is, ``None`` when the input does not say (no requirement, a capability unknown, a mixed machine across
        it)."""
        known = [g.capability for g in self.gpus if g.capability is not None]
        if self.needs is None or not known or len(known) < len(self.gpus):
            return None
        below = {c < self.needs for c in known}
        return below.pop() if len(below) == 1 else None


@dataclass(frozen=True)
class Site:
    """One frame, with whose code it is."""

    file: str
    line: int
    function: str
    code: str
    owner: Owner


@dataclass(frozen=True)
class Location:
    """Where the failure happened and with what, as far as the input shows it."""

    site: Site | None
    """The op's call site: the innermost frame outside torch (``None`` when the input has no frames)."""
    in_torch: bool
    """No frame outside torch was in the input: ``site`` is torch's own innermost frame."""
    caller: Site | None
    """When the site is a package's or remote code, the innermost frame of the user's own code above it."""
    call: str
    """The call on the site's line that raised (``self.score(pooled)``), or on the caller's line when the site's line
    only hands on its caller's arguments (``super().to(*args, **kwargs)``); empty when none could be read."""
    module: str
    """The module called there (``score`` for ``self.score(pooled)``); empty for a plain function call."""
    op: str
    """The kind of op the message comes from (``linear``, ``conv``, ``attention``...), or empty."""
    operands: tuple[Operand, ...]
    hints: tuple[Hint, ...]
    """Log lines that named operands before the failure."""
    traced: str = ""
    """The backward node autograd's anomaly mode traced (``PowBackward0``) when ``site`` comes from its forward trace,
    not from the traceback; empty otherwise."""
    backward: Site | None = None
    """With ``traced``: the line that ran the backward pass (``loss.backward()``), where the traceback ends."""

    @property
    def untied(self) -> tuple[Operand, ...]:
        """The operands no expression on the line could be tied to."""
        return tuple(o for o in self.operands if not o.expression)


@dataclass(frozen=True)
class OperandRule:
    """One row of ``census/operands.yaml``: a wording and the sides it names."""

    id: str
    pattern: LazyRegex
    op: str
    operands: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class _Rules:
    rules: tuple[OperandRule, ...]
    methods: dict[str, dict[str, Any]]
    calls: dict[str, tuple[str, ...]]
    modules: dict[str, tuple[str, tuple[str, ...]]]
    """torch file suffix -> (op, roles of the module call's positional arguments)."""
    copies_to: dict[str, str]
    """Methods that copy a tensor to a fixed device (``tolist`` -> ``cpu``): the destination side of a copy."""
    scalar_types: dict[str, str]
    """``c10::ScalarType`` names by number, for messages that print the number."""
    kernels: dict[str, str]
    """The device of a dispatch name that says none (``add_stub`` -> ``cpu``)."""


@functools.cache
def load_rules() -> _Rules:
    """The operand roles shipped with dtypefix (read once; the file is part of the installed package).

    They are written in ``census/operands.yaml`` and read from ``operands.json`` beside it, which ``dtypefix docs``
    generates from it (``docs --check`` fails when it is stale): this runs on every explanation that reaches a
    location, and importing PyYAML and parsing the YAML cost about 15 ms of a cold start."""
    import dtypefix.census  # a package of data; the file sits beside its __init__ (editable install or wheel)

    # Path, not importlib.resources: that would import zipfile on every start-up for a file that is never zipped.
    data = json.loads((Path(dtypefix.census.__file__).parent / "operands.json").read_text(encoding="utf-8"))
    rules = tuple(
        OperandRule(r["id"], lazy_regex(r["pattern"]), r["op"], tuple(dict(o) for o in r["operands"]))
        for r in data["rules"]
    )
    calls = {name: tuple(roles) for name, roles in data["calls"].items()}
    modules = {
        path: (spec, ("input",)) if isinstance(spec, str) else (spec["op"], tuple(spec["arguments"]))
        for path, spec in data["modules"].items()
    }
    copies_to = dict(data.get("copies_to", {}))
    scalar_types = {str(k): v for k, v in data.get("scalar_types", {}).items()}
    kernels = dict(data.get("kernels", {}))
    return _Rules(rules, dict(data["methods"]), calls, modules, copies_to, scalar_types, kernels)


_PREFIX = lazy_regex(r"^(?:struct\s+)?(?:c10::|at::)")
_DEVICE_REPR = lazy_regex(r"^device\(type='(?P<type>\w+)'(?:, index=(?P<index>\d+))?\)$")


def _clean(value: str) -> str:
    """A value as torch prints it today: ``c10::``/``struct`` prefixes removed, ``device(type='cuda', index=0)`` as
    ``cuda:0``."""
    value = _PREFIX.sub("", value.strip())
    if device := _DEVICE_REPR.match(value):
        return f"{device['type']}:{device['index']}" if device["index"] else device["type"]
    return value


# C++ spellings of scalar types that take more than one word or a compiler's own name (``typeid`` of ``int64_t`` is
# ``long int`` with GCC, ``__int64`` with MSVC), as c10 names them, so that a rule reading one word reads them whole.
_CXX_TYPES = lazy_regex(
    r"\b(?:unsigned (?:__int64|long long|long int|long)|long long int|long long|long int|__int64|unsigned char"
    r"|signed char|unsigned short|short int|unsigned int)\b"
)
_CXX_NAMES = {
    "unsigned char": "Byte",
    "signed char": "Char",
    "unsigned short": "UInt16",
    "short int": "Short",
    "unsigned int": "UInt32",
}


def c10_spelling(message: str) -> str:
    """The message with its C++ type names as c10 names them (``unsigned char`` -> ``Byte``)."""
    return _CXX_TYPES.sub(_cxx_name, message)


def _cxx_name(match: re.Match[str]) -> str:
    text = match[0]
    return _CXX_NAMES.get(text) or ("UInt64" if text.startswith("unsigned") else "Long")


def read_operands(
    message: str, hints: tuple[Hint, ...] = (), hardware: Hardware | None = None
) -> tuple[str, tuple[Operand, ...]]:
    """``(op, operands)`` that a message names, by the first rule of ``census/operands.yaml`` that reads it.

    A side the message leaves without a value takes it from the log line of ``hints`` its rule names (the backend
    of a process group, printed before a collective fails). The side a rule marks as the GPU a check refused (``gpu``)
    gets the compute capability the check requires and, from ``hardware``, the GPUs the log names. C++ type names are
    read as c10's (``__int64`` and ``long int`` as ``Long``, ``unsigned char`` as ``Byte``)."""
    message = c10_spelling(message)
    tables = load_rules()
    for rule in tables.rules:
        found = rule.pattern.search(message)
        if not found:
            continue
        groups = {k: v for k, v in found.groupdict().items() if v is not None}
        op = rule.op
        arguments: dict[str, Any] = {}
        if op == "by-method":
            method = _method_key(groups.get("method", ""))
            entry = tables.methods.get(method, {})
            op = entry.get("op", "")
            arguments = entry.get("arguments", {})
        operands = []
        for spec in rule.operands:
            argument = spec["argument"].format(**groups) if "{" in spec["argument"] else spec["argument"]
            role = spec["role"].format(**groups) if "{" in spec["role"] else spec["role"]
            role = arguments.get(role, role)
            value = _clean(groups[spec["group"]]) if spec.get("group") in groups else spec.get("value", "")
            value = value.format(**groups) if "{" in value else value
            if spec.get("numbered"):
                value = tables.scalar_types.get(value, "")
            if spec.get("count") in groups:
                value = _devices(int(groups[spec["count"]]))
            if spec.get("kernel") in groups:
                value = tables.kernels.get(groups[spec["kernel"]], "")
            origin, said = "message", ""
            # ``hint``: a key of :mod:`.hints`, or several, the first the log has giving the value.
            named = spec.get("hint", ())
            keys: tuple[str, ...] = (named,) if isinstance(named, str) else tuple(named)
            hint = next((h for key in keys for h in hints if h.key == key), None)
            if hint is not None and (not value or "group" not in spec):
                # ``hint_side: other``: the side is what the line names second (the dtype the query is cast to).
                value = (hint.other_value if spec.get("hint_side") == "other" else "") or hint.value
                origin, said = "log", hint.said
            # ``unlike``: the value the message requires of this side, which it therefore does not have.
            unlike = "" if value else spec.get("unlike", "").format(**groups)
            operand = Operand(argument, role, spec["kind"], value, origin=origin, unlike=_clean(unlike), said=said)
            if "gpu" in spec:
                machine = gpus(hardware) if hardware is not None else ()
                operand = replace(operand, gpus=machine, needs=_required(spec["gpu"], groups))
            operands.append(operand)
        return op, _legacy_devices(tuple(operands))
    return "", ()


def _required(text: str, groups: dict[str, str]) -> float | None:
    """The capability a rule's ``gpu`` names: written there (``'8.0'``, ``Ampere``) or a group of its pattern
    (``'{need}'``); ``None`` for ``unstated`` or a group the message did not print."""
    try:
        return required_capability(text.format(**groups))
    except KeyError:
        return None


def _devices(count: int) -> str:
    """The CUDA devices of a machine with ``count`` GPUs, comma-separated (``cuda:0,cuda:1``); without one, the CPU."""
    return ",".join(f"cuda:{i}" for i in range(count)) or "cpu"


_LEGACY_TYPE = lazy_regex(
    r"^(?:torch\.(?P<cuda>cuda\.)?(?P<a>\w+?)Tensor|(?P<device>CUDA|CPU|MPS|XPU)(?P<b>\w+?)Type)$"
)


def _legacy_devices(operands: tuple[Operand, ...]) -> tuple[Operand, ...]:
    """``torch.cuda.HalfTensor`` against ``torch.HalfTensor`` (``MPSBFloat16Type`` against ``CPUBFloat16Type``) is one
    dtype on two devices: report the devices."""
    parsed = [_LEGACY_TYPE.match(o.value) for o in operands]
    if len(parsed) != 2 or not all(parsed):
        return operands
    kinds = [(m["a"] or m["b"], "cuda" if m["cuda"] else (m["device"] or "cpu").lower()) for m in parsed if m]
    if kinds[0][0] != kinds[1][0] or kinds[0][1] == kinds[1][1]:
        return operands
    return tuple(replace(o, kind="device", value=k[1]) for o, k in zip(operands, kinds, strict=True))


def _method_key(method: str) -> str:
    """``wrapper_CUDA__index_select`` / ``wrapper_addmm`` / ``wrapper_CUDA_scatter__value`` / ``_th_addmm`` (torch
    1.x) -> ``index_select`` ..."""
    name = re.sub(r"^(?:wrapper_(?:(?:CUDA|CPU|XPU|MPS|cuda|cpu)_+)?_?|_th_)", "", method)
    return name.strip("_")


# torch's own files: anything under an installed ``torch/`` folder, and in a source checkout (or a path the reporter
# shortened: ``torch/utils/_device.py``) its Python packages.
_TORCH = lazy_regex(
    r"(?:^|[\\/])(?:site|dist)-packages[\\/]torch[\\/]"
    r"|(?:^|[\\/])torch[\\/](?:nn|autograd|utils|_dynamo|_inductor|distributed|amp|optim|cuda|fx|_higher_order_ops|_library"
    r"|_prims|_refs|_subclasses|_functorch|func|sparse|backends)[\\/]"
    r"|(?:^|[\\/])torch[\\/](?:__init__|_tensor|_ops|_compile|functional|overrides|_jit_internal|serialization"
    r"|_utils)\.py$"
)


def _is_torch(frame: Frame) -> bool:
    return bool(_TORCH.search(frame.file))


def _site(frame: Frame, incident: Incident) -> Site:
    return Site(frame.file, frame.line, frame.function, frame.code, owner_of(frame.file, incident.packages))


def _stack(incident: Incident) -> Stack | None:
    primary = incident.primary
    if isinstance(primary, Stack) and primary.frames:
        return primary
    # An error line outside the traceback (ComfyUI prints it above): the last stack with frames.
    return next((s for s in reversed(incident.stacks) if s.frames), None)


def locate(incident: Incident) -> Location | None:
    """Where the incident's error happened and with what; ``None`` when the input shows neither frames nor a
    message with operands."""
    primary = incident.primary
    message = primary.message if isinstance(primary, Stack | ErrorLine) else ""
    hints = find_hints(incident.text)
    hardware = incident.hardware
    op, operands = read_operands(message, hints, hardware) if message else _printed_apart(incident, hints)
    for reading in variants(message) if message and not operands else ():
        # A message the terminal wrapped ("... but g" / "ot attn_mask.dtype: float ..."): its lines joined back.
        op, operands = read_operands(reading, hints, hardware)
        if operands:
            break
    stack = _stack(incident)
    if stack is None:
        if not operands:
            return None
        return Location(None, False, None, "", "", op, operands, hints)
    frames = [f for f in stack.frames if owner_of(f.file).kind is not OwnerKind.INTERNAL]
    if not frames:
        return Location(None, False, None, "", "", op, operands, hints)
    location = _located(frames, incident, op, operands, hints)
    forward = _forward_trace(incident, stack)
    if forward is None:
        return location
    # Anomaly mode printed the forward call that built the failing backward node: that is the line to look at; the
    # traceback's own line (``loss.backward()``) is kept as where the backward pass was run from.
    traced = _located(
        [f for f in forward.frames if owner_of(f.file).kind is not OwnerKind.INTERNAL] or list(forward.frames),
        incident,
        op,
        operands,
        hints,
    )
    return replace(traced, traced=forward.node, backward=location.site)


def _located(
    frames: list[Frame], incident: Incident, op: str, operands: tuple[Operand, ...], hints: tuple[Hint, ...]
) -> Location:
    """The location that ``frames`` (outermost first, as printed) show."""
    outside = [i for i, f in enumerate(frames) if not _is_torch(f)]
    # A wrapper that only hands on its caller's arguments to the next frame shown (accelerate's hook
    # ``old_forward(*args, **kwargs)``, a decorator's ``return func(*args, **kwargs)``) is not where the call was
    # made: the frame above it is, unless that is another package's line calling it directly (:func:`_handed`). The
    # last frame raised itself (``torch._C._nn._parse_to(*args, **kwargs)``).
    calls = [i for i in outside if i == len(frames) - 1 or not _forwards(frames[i].code) or not _handed(frames, i)]
    index = calls[-1] if calls else outside[-1] if outside else len(frames) - 1
    site = _site(frames[index], incident)
    if not any(o.value for o in operands):
        # "No available kernel": the sides were named by a warning printed at this very line just before.
        op, operands = _warned(incident.text, frames[index], hints) or (op, operands)
    caller = _caller(frames, index, site, incident) if outside else None
    below = frames[index + 1] if index + 1 < len(frames) else None
    call, module, tied = _tie(frames[index], below, frames[index + 1 :], op, operands)
    if caller is not None and _forwards(frames[index].code):
        # ``return super().to(*args, **kwargs)``: the library passes on what the line above gave it (the user's, or
        # another package's), and its own line has nothing else to tie.
        at = _outside_above(frames, index)
        assert at is not None  # the caller's frame is one of them
        call, module, tied = _tie(frames[at], frames[at + 1], frames[at + 1 :], op, operands)
    elif caller is not None and any(not o.expression for o in tied[0]):
        # A library's check of a setting (CTranslate2's compute_type for the device): the user's call above gave it
        # (``WhisperModel(size, device="cpu", compute_type="float16")``), whatever names the library's line uses.
        # Likewise a side the library's own line leaves untied, where the caller's line calls a function whose
        # arguments have known roles (``flash_attn_func(Q, K, V)``: the query is ``Q``); not a module call there,
        # whose module is not the one that failed deeper down.
        at = _index_of(frames, caller)
        _, module, (given, read) = _tie(frames[at], frames[at + 1], frames[at + 1 :], op, tied[0])
        if op == "config" or (read and not module):
            tied = (tuple(o if o.expression else g for o, g in zip(tied[0], given, strict=True)), tied[1])
    operands = _said_at(_spelled(tied[0], site.code), frames, hints)
    return Location(site, not outside, caller, call, module, op or tied[1], operands, hints)


def _spelled(operands: tuple[Operand, ...], code: str) -> tuple[Operand, ...]:
    """A dtype asked for that the line spells out (``torch.finfo(torch.float8_e4m3fn)``): that spelling is its
    expression."""
    return tuple(
        replace(o, expression=f"torch.{o.value}")
        if o.role == "dtype" and not o.expression and o.value and re.search(rf"\btorch\.{re.escape(o.value)}\b", code)
        else o
        for o in operands
    )


def _said_at(operands: tuple[Operand, ...], frames: list[Frame], hints: tuple[Hint, ...]) -> tuple[Operand, ...]:
    """The operands with the frame whose code is the log line their value was read from (the innermost one:
    ``from_pretrained(..., torch_dtype=torch.float16)`` in the traceback of a failure while loading)."""
    done = []
    for o in operands:
        lines = {h.line for h in hints if o.said and h.said == o.said}
        frame = next((f for f in reversed(frames) if f.code.strip()[:400] in lines), None)
        done.append(replace(o, said_at=f"{frame.file}:{frame.line}") if frame is not None else o)
    return tuple(done)


def _index_of(frames: list[Frame], site: Site) -> int:
    """Where the frame a site was read from is among ``frames``."""
    return next(i for i, f in enumerate(frames) if (f.file, f.line) == (site.file, site.line))


# The frames of a backward pass: ``loss.backward()`` through torch's ``_tensor.py`` / ``autograd`` into the engine.
_BACKWARD_FUNCTIONS = frozenset({"backward", "_engine_run_backward", "run_backward", "grad"})
_BACKWARD_NODE = lazy_regex(r"\b(?P<node>\w+Backward\d*)\b")


def _forward_trace(incident: Incident, stack: Stack) -> ForwardTrace | None:
    """The forward trace anomaly mode printed for this traceback's backward pass: the one whose node the message
    names, else the last one printed; ``None`` when the traceback is no backward pass or no trace was printed."""
    if not any(_is_torch(f) and f.function in _BACKWARD_FUNCTIONS for f in stack.frames):
        return None
    traces = find_forward_traces(incident.text)
    if not traces:
        return None
    named = _BACKWARD_NODE.search(stack.message)
    same = [t for t in traces if named and t.node == named["node"]]
    return (same or traces)[-1]


# Code that is not the user's but someone else's they run: a package's, an application's checkout, a model repository's.
_OTHERS = frozenset({OwnerKind.PACKAGE, OwnerKind.APPLICATION, OwnerKind.REMOTE})


def _caller(frames: list[Frame], index: int, site: Site, incident: Incident) -> Site | None:
    """The line that called a library's (an application's, a model repository's) failing line: the innermost frame
    of the user's own code above it; without one, the line that handed a check its value (a ``_check_…`` /
    ``validate…`` function raises on what its caller passed), else the innermost frame above that belongs to someone
    else (InvokeAI calling diffusers' UNet, a custom node calling ComfyUI's code, one package handing another a
    tensor)."""
    if site.owner.kind not in _OTHERS:
        return None
    above = frames[:index]
    owners = [owner_of(f.file) for f in above]
    mine = [f for f, o in zip(above, owners, strict=True) if o.kind in (OwnerKind.USER, OwnerKind.NOTEBOOK)]
    if mine:
        return _site(mine[-1], incident)
    handing = [f for f in above if not _is_torch(f)]
    if handing and _CHECK.match(site.function):
        return _site(handing[-1], incident)
    other = [
        f
        for f, o in zip(above, owners, strict=True)
        if o.kind in _OTHERS and o.name != site.owner.name and not _is_torch(f) and not _forwards(f.code)
    ]
    return _site(other[-1], incident) if other else None


_CHECK = lazy_regex(r"^_*(?:check|validate|verify|assert|ensure)(?:_|$)", re.IGNORECASE)


def _handed(frames: list[Frame], index: int) -> bool:
    """The arguments that ``frames[index]`` hands on were given by the nearest frame outside torch above it: that
    frame is the user's code (or an application's, which uses the library as a user's script does) or the same
    package's, or it reached the wrapper through torch's module call (a hook accelerate installed on the module,
    called from transformers' ``self.embed_tokens(input_ids)``). Not so for another package's line that calls the
    wrapper directly (Lightning's ``self.model.to(device)`` entering
    lightning_fabric's ``to``): the wrapper's own line is the one that raised."""
    above = _outside_above(frames, index)
    if above is None:
        return False
    owner, mine = owner_of(frames[above].file), owner_of(frames[index].file)
    return (
        above != index - 1
        or owner.kind in (OwnerKind.USER, OwnerKind.NOTEBOOK, OwnerKind.APPLICATION)
        or (owner.kind, owner.name) == (mine.kind, mine.name)
    )


def _outside_above(frames: list[Frame], index: int) -> int | None:
    """The nearest frame above ``frames[index]`` that is not torch's own code."""
    return next((i for i in reversed(range(index)) if not _is_torch(frames[i])), None)


_FORWARDS = lazy_regex(r"\(\*args, \*\*kwargs\)\)*$")


def _forwards(code: str) -> bool:
    """The line is a call that hands on its caller's arguments unchanged, also where it converts only what comes back
    (accelerate's ``convert_to_fp32(self.model_forward(*args, **kwargs))``)."""
    return bool(_FORWARDS.search(code.strip()))


# ``/path/file.py:11: UserWarning: text`` as Python's warnings module prints it.
_WARNING = lazy_regex(r"^(?P<file>.+?):(?P<line>\d+): (?:\w+\.)*\w*Warning: (?P<text>.+)$")
_WARNED = lazy_regex(r":\d+: (?:\w+\.)*\w*Warning: ")


def _printed_apart(incident: Incident, hints: tuple[Hint, ...]) -> tuple[str, tuple[Operand, ...]]:
    """The sides of an error printed apart from its traceback, whose own exception line is missing (ComfyUI prints
    "Error occurred when executing VAEEncode:" and the message above the frames): the first census wording found in
    the log's last lines."""
    if not incident.error_line_missing:
        return "", ()
    tail = incident.text[-_APART_TAIL:]
    starts = [m.start() for rule in load_rules().rules if (m := rule.pattern.search(tail))]
    return read_operands(tail[min(starts) :].split("\n", 1)[0], hints, incident.hardware) if starts else ("", ())


_APART_TAIL = 16384


def _warned(text: str, frame: Frame, hints: tuple[Hint, ...]) -> tuple[str, tuple[Operand, ...]] | None:
    """The operands a warning printed at ``frame``'s line names (the first such warning with values)."""
    base = frame.file.replace("\\", "/").rsplit("/", 1)[-1]
    for line in itertools.islice(lines_containing(_WARNED, text), 400):
        found = _WARNING.match(line.strip())
        if not found or int(found["line"]) != frame.line or not found["file"].replace("\\", "/").endswith(base):
            continue
        op, operands = read_operands(found["text"], hints)
        if any(o.value for o in operands):
            return op, tuple(replace(o, origin="warning") for o in operands)
    return None


def _tie(
    frame: Frame, below: Frame | None, deeper: list[Frame], op: str, operands: tuple[Operand, ...]
) -> tuple[str, str, tuple[tuple[Operand, ...], str]]:
    """``(call, module, (operands with expressions, op read from the call))`` for the call on ``frame``'s line."""
    entered = below is not None  # the line called into the frame below
    # "result type Float can't be cast to the desired output type Long": only an in-place update writes into an output
    # of its own, so an operation nested in its value (which computes a new tensor) is not the one that raised.
    exact = any(o.role == "result" for o in operands)
    binary = (_binary(frame.marked, entered, exact=True) if frame.marked else None) or _binary(
        frame.code, entered, exact=exact
    )
    if binary is not None:
        return binary[0], "", (_destination(_tied(operands, binary[1]), ""), binary[2])
    if any(o.role == "indices" for o in operands) and (subscript := _indexing(frame.code)) is not None:
        # "indices should be either on cpu or on the same device as the indexed tensor": the op is the indexing on the
        # line (``self.logvar[t].to(self.device)``), not the call around it.
        roles = {"self": subscript[0], "indices": subscript[1]}
        return frame.code.strip(), "", (tuple(_with_expression(o, roles) for o in operands), "index")
    function = below.function if below is not None else ""
    parsed = _call_node(frame.marked or frame.code, function) or _call_node(frame.code, function)
    if parsed is None:
        assigned = _subscript_assignment(frame.code)
        if assigned is None:
            return "", "", (operands, "")
        # ``buf[idx] = scores`` is index_put_(buf, (idx,), scores): destination, indices, source.
        roles = {"self": assigned[0], "indices": assigned[1], "source": assigned[2]}
        return frame.code, "", (_destination(tuple(_with_expression(o, roles) for o in operands), ""), "index_put")
    node, source = parsed

    def text(part: ast.AST) -> str:
        # As the user wrote it (``-1e9``, ``"cuda"``), where the parsed line still holds it.
        return ast.get_source_segment(source, part) or _unparse(part)

    tables = load_rules()
    call_text = text(node)
    name, receiver = _callee(node.func)
    if isinstance(node.func, ast.Attribute):
        receiver = text(node.func.value)
    args = [text(a) for a in node.args if not isinstance(a, ast.Starred)]
    keywords = {k.arg: text(k.value) for k in node.keywords if k.arg}
    by_role: dict[str, str] = {}
    module = ""
    module_op, module_roles = _module_op(deeper, tables)
    outer = receiver is None or receiver.split(".")[0] == "self"
    if module_op and outer and not frame.marked and _nested_module_call(node):
        # ``self.ls1(self.attn(self.norm1(x)))`` without Python 3.11's carets under the call that raised: any of the
        # module calls may be the one that entered torch's module, and the frames do not say which; tying the outer
        # one would name the wrong tensor and weight.
        return "", "", (operands, "")
    if module_op and outer:
        # ``self.score(pooled)`` / ``model(x)`` calling an nn.Module whose forward is in torch.
        target = f"{receiver}.{name}" if receiver else name
        module = name
        if any(f.file.replace("\\", "/").endswith("torch/nn/modules/container.py") for f in deeper):
            target += "[…]"  # a layer inside a Sequential / ModuleList: which one, the frames do not say
        for role, arg in zip(module_roles, args, strict=False):
            by_role[role] = arg
        if args:
            by_role.setdefault("input", args[0])  # what the module's own F.linear / conv receives first
        for role, value in keywords.items():
            by_role.setdefault(role, value)
        by_role["weight"] = f"{target}.weight"
        by_role["bias"] = f"{target}.bias"
        # A device message names the argument that differs; the module's parameters are the "other tensors", unless
        # the one named is a parameter itself: then the data is ("for argument #2 'weight'": the input is the other).
        named_parameter = any(o.role in ("weight", "bias") for o in operands)
        by_role["others"] = by_role.get("input", "") if named_parameter else f"{target}.weight"
        # Which tensor a module's kernel checks first is its own affair (``embedding`` checks its weight before the
        # ids it was called with): a message naming a "first" and a "second" tensor is not tied to the call's order.
        by_role["first"] = by_role["second"] = ""
        read_op = module_op
    else:
        key = name.rstrip("_")
        # ``torch.matmul(a, b)``, ``F.linear(...)``: a namespace; ``nn.Linear(16, 4).to(device)``: a value built there
        qualified = (
            receiver is not None and bool(re.fullmatch(r"[\w.]+", receiver)) and receiver.split(".")[0] in _NAMESPACES
        )
        # A namespace's own order first: aten's ``torch.embedding(weight, input)`` is not ``F.embedding(input, w)``.
        namespace = receiver.split(".")[0] if qualified and receiver is not None else ""
        positional = tables.calls.get(f"{namespace}.{key}", ()) or tables.calls.get(key, ())
        read_op = key if positional else ""
        if positional and receiver in ("self", "cls"):
            # ``self.layer_norm(h)``: a method or submodule of the object, not the torch function of that name, whose
            # arguments it need not take in that order.
            positional, read_op = (), ""
        if positional and receiver is not None and not qualified:
            by_role[positional[0]] = receiver
            positional = positional[1:]
        for role, arg in zip(positional, args, strict=False):
            by_role.setdefault(role, arg)
        for role, value in keywords.items():
            by_role.setdefault(role, value)
        if key in tables.copies_to and not args:
            by_role.setdefault("device", call_text)
            return call_text, module, (_destination(_tied(operands, by_role), tables.copies_to[key]), read_op)
    return call_text, module, (_destination(_tied(operands, by_role), ""), read_op)


def _destination(operands: tuple[Operand, ...], copies_to: str) -> tuple[Operand, ...]:
    """Sides the message leaves without a value, read from the line: the device a ``.tolist()`` / ``.cuda()`` copies
    to, or what the tied expression's own code fixes (``.to("cuda")``, ``x.half()``, ``torch.zeros(n, device="cpu")``,
    :mod:`.literal`)."""
    done = []
    for o in operands:
        # A side the message shows not to have a value (``unlike``) keeps that: a literal against it would mean the tie
        # is wrong.
        if not o.value and o.expression and not o.unlike:
            if copies_to and o.kind == "device" and o.role == "device":
                o = replace(o, value=copies_to, origin="line")
            elif fixed := fixed_value(o.expression, o.kind):
                o = replace(o, value=fixed, origin="line")
        done.append(o)
    return tuple(done)


def _tied(operands: tuple[Operand, ...], by_role: dict[str, str]) -> tuple[Operand, ...]:
    """The operands with the expressions their roles were given. ``expected scalar type X but found Y`` comes from
    the kernel dispatched for the first tensor: X is the first operand's dtype, Y the other's."""
    roles = dict(by_role)
    if "input" in roles:
        roles.setdefault("expected", roles["input"])
        roles.setdefault("first", roles["input"])
    if "weight" in roles:
        roles.setdefault("found", roles["weight"])
        roles.setdefault("second", roles["weight"])
    if "other" in roles:
        # ``torch.where(mask, scores, big_neg)``: the scalar ``other`` is what is converted to ``input``'s dtype.
        roles.setdefault("self", roles.get("input", ""))
        roles.setdefault("value", roles["other"])
    if roles.get("target"):
        # A loss: its one integer tensor is the target (class indices, or labels handed to a float loss). An integer
        # dtype found is the target's; an integer dtype expected is what the target must be, no other side's.
        if any(o.role == "found" and _integral(o.value) for o in operands):
            roles["found"] = roles["target"]
        operands = tuple(
            replace(o, role="required") if o.role == "expected" and _integral(o.value) else o for o in operands
        )
    return tuple(_with_expression(o, roles) for o in operands)


_INTEGRAL = lazy_regex(r"^(?:torch\.)?(?:Long|Int|Short|Byte|Char|u?int(?:8|16|32|64)|long|int|short|uint8)$")


def _integral(value: str) -> bool:
    """An integer dtype, as c10 or torch names it (``Long``, ``int64``)."""
    return bool(_INTEGRAL.match(value))


def _binary(code: str, entered: bool = False, *, exact: bool = False) -> tuple[str, dict[str, str], str] | None:
    """``(text, roles, op)`` when the value a line computes is a binary operation (``grad_w = grad_y.t() @ h``):
    its left and right operands, as the line writes them. ``entered``: the traceback goes on below the line, into a
    function it called. ``exact``: the outer operation is known to be the one that raised (Python 3.11's carets marked
    it, or the message is one only an in-place update raises); otherwise an operation nested in an operand
    (``h.t() @ (dY @ downB.t())``) ran first and may be the one that raised, and the line does not say which."""
    source = code.strip().removeprefix("return ")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None

    def text(part: ast.AST) -> str:
        return ast.get_source_segment(source, part) or _unparse(part)

    statement = tree.body[0] if len(tree.body) == 1 else None
    if isinstance(statement, ast.AugAssign):
        if entered and _has_call(statement.value):
            # ``result += self.lora_B(self.lora_A(x)) * s`` with a frame below it: a call on the right raised before
            # anything was added, and that call is the op, not the sum.
            return None
        if not exact and _inner_operation(statement.value):
            return None
        # ``total += loss``: the result of ``total + loss`` is written back into ``total``.
        left, right = text(statement.target), text(statement.value)
        roles = {"input": left, "self": left, "first": left, "other": right, "result": right, "second": right}
        return text(statement), roles, ""
    node = getattr(statement, "value", None)
    if not isinstance(node, ast.BinOp):
        return None
    if not isinstance(node.op, ast.MatMult) and any(isinstance(side, ast.Call) for side in (node.left, node.right)):
        return None  # ``F.conv2d(out, w) / n``: the call raised, not the division
    if entered and _has_call(node):
        return None  # ``result + lora_B(lora_A(x)) * scaling`` with a frame below: a call in it raised
    if not exact and (_inner_operation(node.left) or _inner_operation(node.right)):
        return None
    left, right = text(node.left), text(node.right)
    op = "matmul" if isinstance(node.op, ast.MatMult) else ""
    return text(node), {"input": left, "weight": right, "self": left, "other": right}, op


# Receivers that are namespaces, not tensors: ``torch.matmul(a, b)`` is a function call, ``a.matmul(b)`` a method.
_NAMESPACES = frozenset(
    {"torch", "F", "nn", "functional", "flash_attn", "np", "ops", "fa", "flex_attention", "dist", "distributed", "tl"}
    # the module TorchInductor's generated code calls aten's kernels through (``extern_kernels.mm(a, b, out=buf)``)
    | {"extern_kernels"}
)


def _inner_operation(node: ast.AST) -> bool:
    """``node`` holds an operation between two operands that are no number literals (``a * b``, not ``1 - mask``):
    one that can raise a dtype or device error of its own."""
    return any(
        isinstance(n, ast.BinOp) and not isinstance(n.left, ast.Constant) and not isinstance(n.right, ast.Constant)
        for n in ast.walk(node)
    )


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(part, ast.Call) for part in ast.walk(node))


def _with_expression(operand: Operand, by_role: dict[str, str]) -> Operand:
    expression = by_role.get(operand.role, "")
    if not expression:
        return operand
    return replace(operand, expression=expression)


def _nested_module_call(node: ast.Call) -> bool:
    """An argument of the call holds another call of a module attribute (``self.norm1(x)`` inside
    ``self.attn(...)``) or of a local name that is no builtin (PEFT's ``lora_B(lora_A(dropout(x)))``, the adapter's
    modules taken out of their dict first)."""
    for argument in (*node.args, *(k.value for k in node.keywords)):
        for inner in ast.walk(argument):
            func = inner.func if isinstance(inner, ast.Call) else None
            if isinstance(func, ast.Attribute | ast.Subscript) and _unparse(func.value).split(".")[0] == "self":
                return True  # ``self.norm1(x)``, or a module taken from a dict: ``self.lora_dropout[name](x)``
            if isinstance(func, ast.Name) and func.id not in _BUILTINS:
                return True
    return False


_BUILTINS = frozenset(dir(builtins))


def _module_op(deeper: list[Frame], tables: _Rules) -> tuple[str, tuple[str, ...]]:
    """The op of the torch module whose forward the call entered (``linear`` for ``nn/modules/linear.py``), and the
    roles of the module call's positional arguments."""
    for frame in deeper:
        path = frame.file.replace("\\", "/")
        for suffix, (op, roles) in tables.modules.items():
            if path.endswith(suffix):
                return op, roles
    return "", ()


def _call_node(code: str, entered: str = "") -> tuple[ast.Call, str] | None:
    """The outermost call in ``code`` (a traceback's source line, possibly cut before its closing brackets), and the
    text it was parsed from; the call named ``entered`` when there is one (the next frame is that function:
    ``nn.Linear(16, 4).to(device)`` failed in ``to``, not in the constructor)."""
    text = code.strip()
    if not text or len(text) > 2000:
        return None
    for head in ("return ", "yield ", "await "):
        text = text.removeprefix(head)
    for suffix in ("", ")", "))", ")))"):
        source = text.rstrip(",") + suffix
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        named = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and entered and _callee(n.func)[0] == entered]
        node = named[0] if named else _first_call(tree)
        return (node, source) if node is not None else None
    return None


def _indexing(code: str) -> tuple[str, str] | None:
    """``(indexed tensor, indices)`` of the one indexing by a tensor on the line (``self.logvar[t]``); ``None`` when the
    line indexes by a tensor twice or not at all (a constant or a slice indexes by no tensor)."""
    try:
        tree = ast.parse(code.strip().removeprefix("return "))
    except (SyntaxError, ValueError):
        return None
    found = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Subscript)
        and not isinstance(n.slice, ast.Constant | ast.Slice)
        and not (isinstance(n.slice, ast.Tuple) and all(isinstance(e, ast.Constant | ast.Slice) for e in n.slice.elts))
    ]
    return (_unparse(found[0].value), _unparse(found[0].slice)) if len(found) == 1 else None


def _subscript_assignment(code: str) -> tuple[str, str, str] | None:
    """``(destination, index, source)`` of a ``x[i] = y`` line."""
    try:
        tree = ast.parse(code.strip())
    except (SyntaxError, ValueError):
        return None
    statement = tree.body[0] if len(tree.body) == 1 else None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Subscript):
            return _unparse(target.value), _unparse(target.slice), _unparse(statement.value)
    return None


def _first_call(tree: ast.AST) -> ast.Call | None:
    """The call whose value the statement uses: on ``x = f(g(a))`` it is ``f(...)``, through ``.sample``, ``[0]``,
    ``.to(...)`` and arithmetic around it the first one met."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not _is_wrapper_call(node):
            return node
    return None


def _is_wrapper_call(node: ast.Call) -> bool:
    """``x.to(dtype)``, ``.float()``, ``.view(...)`` around the real call: look inside them."""
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr in _WRAPPERS and isinstance(func.value, ast.Call)


_WRAPPERS = frozenset(
    {
        "to",
        "type_as",
        "float",
        "half",
        "bfloat16",
        "view",
        "reshape",
        "transpose",
        "chunk",
        "sum",
        "mean",
        "squeeze",
        "unsqueeze",
    }
)


def _callee(func: ast.expr) -> tuple[str, str | None]:
    """``(name, receiver)``: ``self.score`` -> ``("score", "self")``, ``F.linear`` -> ``("linear", "F")``."""
    if isinstance(func, ast.Attribute):
        return func.attr, _unparse(func.value)
    if isinstance(func, ast.Name):
        return func.id, None
    return _unparse(func), None


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, AttributeError, RecursionError):
        return ""
