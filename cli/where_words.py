"""The location of a failure in words, English and Chinese: the "Where" line, the operands, and a first step that
fits whose code the line is.

Kept apart from :mod:`.markdown` so that the first screen gains these lines through one call, and the JSON output
and the docs can word a location the same way.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from dtypefix.matcher.hardware import sm
from dtypefix.matcher.hints import HINT_KEYS, Hint
from dtypefix.matcher.location import ORIGINS, Location, Operand, Site
from dtypefix.matcher.owner import OwnerKind

__all__ = ["location_json", "location_schema", "readable_value", "site_words", "where_lines"]

_WORDS: dict[str, tuple[str, str]] = {
    "where": ("Where", "出错位置"),
    "operands": ("Operands", "两侧张量"),
    "first": ("First step here", "先在这里做"),
    "seen": ("Seen in the log", "日志里的提示"),
    "in": ("in", "函数"),
    "owner.user": ("your code (not an installed package)", "你的代码（不在已安装的包里）"),
    "owner.notebook": ("your notebook cell", "你的 notebook 单元格"),
    "owner.package": (
        "{name}{version}: an installed package, not your code",
        "{name}{version}：已安装的包，不是你的代码",
    ),
    "owner.application": (
        "{name}{version}'s own code, run from a checkout (not an installed package)",
        "{name}{version} 自己的代码（从源码目录直接运行，不是已安装的包）",
    ),
    "owner.remote": (
        "the model repository's own code `{name}` (loaded with `trust_remote_code`)",
        "模型仓库自带的代码 `{name}`（通过 `trust_remote_code` 加载）",
    ),
    "owner.internal": ("the interpreter", "解释器"),
    "in_torch": (
        "inside torch; the line that called it is not in the paste",
        "在 torch 内部；调用它的那一行不在粘贴的内容里",
    ),
    "caller": ("called from your code at {site}", "由你的代码 {site} 调用"),
    "caller.package": ("called from {name} at {site}", "由 {name} 的 {site} 调用"),
    "caller.application": ("called from {name}'s own code at {site}", "由 {name} 自己的代码 {site} 调用"),
    "caller.remote": (
        "called from the model repository's code at {site}",
        "由模型仓库自带的代码 {site} 调用",
    ),
    "traced": (
        "the forward call that anomaly mode (`set_detect_anomaly`) traced for `{node}`",
        "这是 autograd 异常检测（`set_detect_anomaly`）为 `{node}` 追溯到的前向调用",
    ),
    "backward": (
        "the backward pass ran from {site} (`{code}`)",
        "反向传播从 {site}（`{code}`）发起",
    ),
    "backward.bare": ("the backward pass ran from {site}", "反向传播从 {site} 发起"),
    "cut": (
        "the paste ends here, before the error line",
        "粘贴的内容到这里就断了，没有错误那一行",
    ),
    "module": ("module `{name}`", "模块 `{name}`"),
    "weight_of": ("the weight of `{module}`", "`{module}` 的权重"),
    "untied": ("not on the line", "这一行看不出是哪个表达式"),
    "unset": ("not in the log", "日志里没有"),
    "said.at": ("from `{said}` at `{at}`", "来自 `{at}` 的 `{said}`"),
    "said.log": ("from `{said}` in the log", "来自日志里的 `{said}`"),
    "unlike": ("not {value}", "不是 {value}"),
    "needs": ("needs {sm}+", "需要 {sm} 及以上"),
    "fix.user.cast": (
        "make both sides one dtype at `{site}`: `{cast}`, or run that call under `torch.autocast`.",
        "在 `{site}` 把两侧统一成一个 dtype：`{cast}`，或者把这次调用放进 `torch.autocast`。",
    ),
    "fix.user.cast.write": (
        "make both sides one dtype at `{site}`: `{cast}` (an in-place write: `torch.autocast` does not cast it).",
        "在 `{site}` 把两侧统一成一个 dtype：`{cast}`（这是原地写入，`torch.autocast` 不会替它转换）。",
    ),
    "fix.user.move": (
        "put both sides on one device at `{site}`: `{cast}`.",
        "在 `{site}` 把两侧放到同一个设备上：`{cast}`。",
    ),
    "fix.user.generic": (
        "the line is yours (`{site}`): print the dtype and device of each operand there and make them agree, "
        "by a cast or under `torch.autocast`.",
        "这一行是你自己的代码（`{site}`）：在那里打印每个操作数的 dtype 和 device，再用显式转换或 "
        "`torch.autocast` 让它们一致。",
    ),
    "fix.user.generic.write": (
        "the line is yours (`{site}`): print the dtype of both sides of the write there and cast the source to the "
        "destination's dtype (an in-place write: `torch.autocast` does not cast it).",
        "这一行是你自己的代码（`{site}`）：在那里打印写入两侧的 dtype，把源转换成目标的 dtype"
        "（这是原地写入，`torch.autocast` 不会替它转换）。",
    ),
    "fix.package": (
        "the failing line is in {name}{version}, not in your code: first see whether a newer {name} fixes it "
        "(upgrade) or whether {name} has a setting for the dtype it runs in; until then run that part in one dtype.",
        "出错的是 {name}{version} 自己的代码，不是你的：先看升级 {name} 能否解决，或者 {name} 有没有控制运行 dtype "
        "的设置；在那之前让这部分在同一个 dtype 下运行。",
    ),
    "fix.package.device": (
        "the failing line is in {name}{version}, not in your code: first see whether a newer {name} fixes it "
        "(upgrade) or whether {name} has a setting for the device it places this on; until then keep what you hand "
        "it on one device.",
        "出错的是 {name}{version} 自己的代码，不是你的：先看升级 {name} 能否解决，或者 {name} 有没有控制放置设备"
        "的设置；在那之前让你传给它的东西都在同一个设备上。",
    ),
    "fix.application": (
        "the failing line is in {name}{version}'s own code, not in yours: first update {name} (`git pull` in its "
        "folder, or its own updater) and see whether it has a launch flag or setting for the dtype it runs in; until "
        "then run that part in one dtype.",
        "出错的是 {name}{version} 自己的代码，不是你的：先更新 {name}（在它的目录里 `git pull`，或者用它自带的更新"
        "程序），再看它有没有控制运行 dtype 的启动参数或设置；在那之前让这部分在同一个 dtype 下运行。",
    ),
    "fix.application.device": (
        "the failing line is in {name}{version}'s own code, not in yours: first update {name} (`git pull` in its "
        "folder, or its own updater) and see whether it has a launch flag or setting for the device it places this "
        "on; until then keep what you hand it on one device.",
        "出错的是 {name}{version} 自己的代码，不是你的：先更新 {name}（在它的目录里 `git pull`，或者用它自带的更新"
        "程序），再看它有没有控制放置设备的启动参数或设置；在那之前让你传给它的东西都在同一个设备上。",
    ),
    "fix.package.input": (
        "the failing line is in {name}{version}, but `{expression}` on {value} is what your code hands it from "
        "`{caller}`: move that tensor to {target} there, before the call.",
        "出错的代码在 {name}{version} 里，但在 {value} 上的 `{expression}` 是你的代码从 `{caller}` 传进去的："
        "在那里调用之前把它移到 {target}。",
    ),
    "fix.remote": (
        "the failing line is the model repository's own code (`trust_remote_code`), which neither torch nor "
        "transformers upgrades change: update or pin the model revision (`revision=` in `from_pretrained`), or "
        "check the repository's discussions for a fix; meanwhile load the whole model in one dtype.",
        "出错的是模型仓库自带的代码（`trust_remote_code`），升级 torch 或 transformers 都不会改变它：更新或固定"
        "模型版本（`from_pretrained` 的 `revision=`），或者到模型仓库的讨论区找修复；在那之前把整个模型按同一个 "
        "dtype 加载。",
    ),
    "hint.input-ids-device": (
        "transformers warned that `input_ids` is on {value} while the model is on {other_value}",
        "transformers 提示 `input_ids` 在 {value} 上，而模型在 {other_value} 上",
    ),
    "hint.hidden-states-float32": (
        "the attention code warned that the hidden states were silently cast to float32",
        "注意力代码提示隐藏状态被悄悄转成了 float32",
    ),
    "hint.hidden-states-float32.other": (
        "the attention code warned that the hidden states were silently cast to float32, and casts them to "
        "{other_value} before the kernel",
        "注意力代码提示隐藏状态被悄悄转成了 float32，并会在调用算子前把它们转成 {other_value}",
    ),
    "hint.offload": (
        "accelerate offloaded some parameters to the {value}",
        "accelerate 把部分参数卸载到了 {value}",
    ),
    "hint.fsdp-param-dtype": (
        "FSDP mixed precision: param_dtype {value}, reduce_dtype {other_value}",
        "FSDP 混合精度：param_dtype 为 {value}，reduce_dtype 为 {other_value}",
    ),
    "hint.deepspeed-precision": ("DeepSpeed runs with {value} enabled", "DeepSpeed 启用了 {value}"),
    "hint.accelerate-precision": ("accelerate runs with mixed precision {value}", "accelerate 的混合精度为 {value}"),
    "hint.process-group-backend": (
        "the process group uses the {other_value} backend, which takes {value} tensors",
        "进程组用的是 {other_value} 后端，它只接受 {value} 上的张量",
    ),
    "hint.dispatched-model-moved": (
        "accelerate warned that a model placed by a device map was moved with `.to()` / `.cuda()`",
        "accelerate 提示：按 device_map 分派好的模型又被 `.to()` / `.cuda()` 移动了",
    ),
    "hint.torch-npu": (
        "torch_npu is loaded: this torch runs on Ascend NPUs ({value}), not CUDA",
        "加载了 torch_npu：这个 torch 跑在昇腾 NPU（{value}）上，不是 CUDA",
    ),
    "origin.warning": ("from the warning at this line", "来自这一行先打印的警告"),
    "origin.log": ("from the log", "来自日志"),
}


def _w(key: str, lang: str, **values: object) -> str:
    en, zh = _WORDS[key]
    return (zh if lang == "zh" else en).format(**values)


def _label(key: str, lang: str) -> str:
    return f"**{_w(key, lang)}{'：' if lang == 'zh' else ':'}**"


_DTYPES = {
    "float": "float32",
    "float32": "float32",
    "half": "float16",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "double": "float64",
    "float64": "float64",
    "long": "int64",
    "long long": "int64",  # C++ type names (Tensor.set_)
    "long int": "int64",
    "int": "int32",
    "short": "int16",
    "char": "int8",
    "byte": "uint8",
    "unsigned char": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "bool": "bool",
    "complexhalf": "complex32",
    "complexfloat": "complex64",
    "complexdouble": "complex128",
    # Triton's names
    "fp8": "float8",
    "float8": "float8",
    "fp16": "float16",
    "fp32": "float32",
    "fp64": "float64",
    "bf16": "bfloat16",
    # Triton's MLIR names
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
}
# Ascend CANN's data types (``op::DataType``) whose torch name is not the lower-cased rest.
_CANN = {"DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_BF16": "bfloat16"}
_DEVICES = frozenset({"cpu", "cuda", "mps", "xpu", "meta", "hpu", "npu"})
_LEGACY = re.compile(r"^(?:torch\.)?(?P<cuda>cuda\.)?(?P<name>\w+?)Tensor$")
# The separators of a printed list: ``['half', 'float16']``'s commas, "float16, bfloat16, or float32", "uint8 or bfloat16".
# ``int32/int64`` as gather() prints the dtypes it takes.
_SLASHED = re.compile(r"^\w+(?:/\w+)+$")
_LIST = re.compile(r",\s*(?:or\s+)?|\s+or\s+|(?<=\w)/(?=\w)")
# MSVC's and c10's prefixes of a C++ type name: ``struct c10::Half``, ``c10::BFloat16``, ``at::Half``.
_CXX_PREFIX = re.compile(r"^(?:struct\s+)?(?:c10::|at::)")
_TYPE_STRING = re.compile(r"^(?P<device>CUDA|CPU|MPS|XPU)(?P<name>\w+?)Type$")


# Values that are a class of dtypes, not one dtype: words for them.
_CLASSES: dict[str, tuple[str, str]] = {
    "floating point": ("a floating-point dtype", "浮点 dtype"),
    "floating point or complex": ("a floating-point or complex dtype", "浮点或复数 dtype"),
    "bool or floating point": ("bool or a floating-point dtype", "bool 或浮点 dtype"),
    "16/32-bit floats": ("16/32-bit floats", "16/32 位浮点"),
}


def readable_value(value: str) -> str:
    """A dtype as torch names it today (``Half`` -> ``float16``); legacy tensor types keep their device
    (``torch.cuda.HalfTensor`` -> ``float16 on cuda``); Ascend CANN's ``DT_BFLOAT16`` and its lists
    (``DT_FLOAT16,DT_FLOAT,``) as torch's names, as other comma-separated lists (``Half,Float,Double``); devices stay
    as printed. A C++ spelling (``struct c10::Half``, MSVC's ``__int64``) is read as the dtype it names."""
    value = _CXX_PREFIX.sub("", value)
    if value in _CLASSES:  # a class of dtypes ("floating point or complex"), not a list
        return value
    if value.startswith("DT_"):
        names = [_CANN.get(v, v.removeprefix("DT_").lower()) for v in value.split(",") if v]
        return ", ".join(names)
    if "," in value or " or " in value or _SLASHED.match(value):  # the dtypes an op takes, the devices a machine has
        items = (v.strip(" '\"") for v in _LIST.split(value))
        return ", ".join(dict.fromkeys(readable_value(v) for v in items if v))
    if match := _LEGACY.match(value):
        dtype = _DTYPES.get(match["name"].lower(), match["name"])
        return f"{dtype} (cuda)" if match["cuda"] else f"{dtype} (cpu)"
    if match := _TYPE_STRING.match(value):
        dtype = _DTYPES.get(match["name"].lower(), match["name"])
        return f"{dtype} ({match['device'].lower()})"
    if value.lower() in _DEVICES:
        return value.lower()  # the backend names of torch 1.x: CUDA, CPU
    if value.startswith("Float8_"):
        return value.lower()  # c10's Float8_e4m3fn is torch.float8_e4m3fn
    return _DTYPES.get(value.lower().removeprefix("torch."), value.removeprefix("torch."))


def site_words(site: Site, lang: str) -> str:
    """``path:line`` in ``function`` and whose code it is."""
    where = _place(site)
    if site.function:
        where += f" {_w('in', lang)} `{site.function}`"
    return f"{where} — {_owner(site, lang)}"


# Owners whose files are shown from their own folder down: a package's, an application checkout's, a model repository's.
_NAMED = frozenset({OwnerKind.PACKAGE, OwnerKind.APPLICATION, OwnerKind.REMOTE})


def _place(site: Site) -> str:
    """``path:line`` in backticks: the path from the package (application, model repository) down, or the file's own
    name."""
    owner = site.owner
    shown = owner.path if owner.kind in _NAMED and owner.path else _short(site.file)
    if owner.kind is OwnerKind.PACKAGE and owner.name and not shown.startswith(owner.name.replace("-", "_")):
        shown = f"{owner.name.replace('-', '_')}/{shown}"
    return f"`{shown}:{site.line}`"


def _short(path: str) -> str:
    parts = path.replace("\\", "/").rstrip("/").split("/")
    return "/".join(parts[-2:]) if len(parts) > 1 and parts[-1] in ("__init__.py", "model.py", "node.py") else parts[-1]


def _owner(site: Site, lang: str) -> str:
    owner = site.owner
    if owner.kind in (OwnerKind.PACKAGE, OwnerKind.APPLICATION):
        version = f" {owner.version}" if owner.version else ""
        return _w(f"owner.{owner.kind.value}", lang, name=owner.name, version=version)
    if owner.kind is OwnerKind.REMOTE:
        return _w("owner.remote", lang, name=owner.name)
    return _w(f"owner.{owner.kind.value}", lang)


# Names the operand rules give sides the message leaves unnamed; the message's own names (mat1, query) stay as is.
_ARGUMENTS: dict[str, tuple[str, str]] = {
    "other tensors": ("other tensors", "其余张量"),
    "first tensor": ("first tensor", "第一个张量"),
    "second tensor": ("second tensor", "第二个张量"),
    "first argument": ("first argument", "第一个参数"),
    "second argument": ("second argument", "第二个参数"),
    "first input": ("first input", "第一个输入"),
    "second input": ("second input", "第二个输入"),
    "first parameter": ("first parameter", "第一个参数张量"),
    "one parameter": ("one parameter", "一个参数张量"),
    "FSDP mesh": ("FSDP mesh", "FSDP 的 mesh"),
    "DeepSpeed config": ("DeepSpeed config", "DeepSpeed 配置"),
    "compiled for": ("compiled for", "编译时的类型"),
    "another parameter": ("another parameter", "另一个参数张量"),
    "parameters": ("parameters", "参数张量"),
    "inputs": ("inputs", "输入"),
    "expected": ("expected", "期望的类型"),
    "found": ("found", "实际的类型"),
    # The same sides of a device message: what is expected there is a device, not a type.
    "expected.device": ("expected", "期望的设备"),
    "found.device": ("found", "实际的设备"),
    "result": ("result", "运算结果"),
    "output": ("output", "输出张量"),
    "output tensor": ("output tensor", "输出张量"),
    "input tensor": ("input tensor", "输入张量"),
    "tensor": ("tensor", "张量"),
    "indexed tensor": ("indexed tensor", "被索引的张量"),
    "destination": ("destination", "目标"),
    "source": ("source", "源"),
    "gradient": ("gradient", "梯度"),
    "gradients": ("gradients", "梯度"),
    "optimizer state": ("optimizer state", "优化器状态"),
    "process group": ("process group", "进程组"),
    "compute device": ("compute device", "计算设备"),
    "autocast dtype": ("autocast dtype", "autocast 的 dtype"),
    "saved storage": ("saved storage", "保存时的存储"),
    "this machine": ("this machine", "本机"),
    "model": ("model", "模型"),
    "model dtype": ("model dtype", "模型 dtype"),
    "precision": ("precision", "精度设置"),
    "probabilities": ("probabilities", "概率张量"),
    "training precision": ("training precision", "训练精度"),
    "dtype support list": ("dtypes the operator takes", "算子支持的 dtype"),
    "numpy floating dtypes": ("NumPy's floating dtypes", "NumPy 支持的浮点 dtype"),
    "supported dtypes": ("supported dtypes", "支持的 dtype"),
    "supported devices": ("supported devices", "支持的设备"),
    "device asked for": ("device asked for", "要用的设备"),
    "torch build": ("torch build", "torch 的构建"),
    "installed torch": ("installed torch", "安装的 torch"),
    "dtype asked for": ("dtype asked for", "要用的 dtype"),
    "flat parameter": ("FSDP's flat parameter", "FSDP 的扁平参数"),
    "recipe": ("precision recipe", "精度方案"),
    "Triton kernel": ("Triton kernel", "Triton 内核"),
    "default dtype": ("default dtype", "默认 dtype"),
    "quantization": ("quantization", "量化方式"),
    "then block": ("then branch", "if 分支"),
    "else block": ("else branch", "else 分支"),
}


def _class_words(value: str, lang: str) -> str:
    """A class of dtypes ("floating point") in the reader's words; empty for a dtype or device."""
    words = _CLASSES.get(value)
    return (words[1] if lang == "zh" else words[0]) if words else ""


def _value_words(value: str, lang: str) -> str:
    """A value as the reader's language says it: a class of dtypes in words, a dtype or device by torch's name."""
    readable = readable_value(value)
    if lang == "zh" and (on := _ON_DEVICE.match(readable)):
        return f"{on['device']} 上的 {on['dtype']}"  # a legacy tensor type: no English-style brackets inside （）
    return _class_words(value, lang) or (readable.replace(", ", "、") if lang == "zh" else readable)


_ON_DEVICE = re.compile(r"^(?P<dtype>\w+) \((?P<device>\w+)\)$")


def _argument(argument: str, lang: str, kind: str = "") -> str:
    words = _ARGUMENTS.get(f"{argument}.{kind}") or _ARGUMENTS.get(argument)
    if words is None:
        return argument
    return words[1] if lang == "zh" else words[0]


def _operand(operand: Operand, location: Location, lang: str, *, origin: bool = True) -> str:
    argument = _argument(operand.argument, lang, operand.kind)
    # The message's own names (mat1, query) are code; the words a rule gives an unnamed side are prose.
    name = (
        f"`{operand.expression}`"
        if operand.expression
        else argument
        if operand.argument in _ARGUMENTS
        else f"`{argument}`"
    )
    value = _value_words(operand.value, lang) if operand.value else ""
    if gpu := _gpu_words(operand, lang):
        # The GPU a check refused: which one the log names, and what the check needs ("cuda: Tesla T4, sm_75; needs
        # sm_89+").
        value = f"{value}{'：' if lang == 'zh' else ': '}{gpu}" if value else gpu
    if not value and operand.unlike:
        # All a one-sided message says of this side: it is not what the op requires ("index (not int64)").
        refused = _class_words(operand.unlike, lang) or readable_value(operand.unlike).replace(
            ", ", " 或 " if lang == "zh" else " or "
        )
        value = _w("unlike", lang, value=refused)
        if lang == "zh" and not refused[:1].isascii():
            value = value.replace(" ", "", 1)  # 不是浮点 dtype: no space between Chinese words
    label = argument if operand.expression and operand.argument != operand.expression else ""
    said = _said(operand, lang)
    shown = origin and operand.origin in ("warning", "log") and not said
    source = _w(f"origin.{operand.origin}", lang) if shown else ""
    comma = "，" if lang == "zh" else ", "
    details = comma.join(p for p in (label, source, value, said) if p)
    if operand.role == "setting" and not operand.value:
        # A setting only the log could give (the dtype a model runs in): it gave none.
        details = comma.join(p for p in (details, _w("unset", lang)) if p)
    # A side the op requires (int64 class indices) is no expression of the line: nothing is missing there; nor is a
    # setting, which is no expression of any line.
    elif (
        not operand.expression
        and operand.role not in ("required", "setting")
        and location.site is not None
        and not location.in_torch
    ):
        details = comma.join(p for p in (details, _w("untied", lang)) if p)
    sep = "（" if lang == "zh" else " ("
    end = "）" if lang == "zh" else ")"
    return f"{name}{sep}{details}{end}" if details else name


def _gpu_words(operand: Operand, lang: str) -> str:
    """The GPUs the log names on the side a check refused, with their compute capabilities, and the capability the
    check needs unless every GPU named has it; empty on other sides."""
    models = operand.gpus
    if len(models) == 1:
        shown = ("，" if lang == "zh" else ", ").join(
            p for p in (models[0].name, sm(models[0].capability) if models[0].capability else "") if p
        )
    else:  # a machine with several models: each, with its capability
        shown = ("、" if lang == "zh" else ", ").join(
            f"{g.name} {sm(g.capability)}" if g.capability else g.name for g in models
        )
    needs = _w("needs", lang, sm=sm(operand.needs)) if operand.needs and operand.short is not False else ""
    return ("；" if lang == "zh" else "; ").join(p for p in (shown, needs) if p)


def _said(operand: Operand, lang: str) -> str:
    """Where a value read from the log was set: the words, and the traceback line that shows them."""
    if not operand.said:
        return ""
    said = operand.said.replace("`", "'")
    if operand.said_at:
        file, _, line = operand.said_at.rpartition(":")
        return _w("said.at", lang, said=said, at=f"{_short(file)}:{line}")
    return _w("said.log", lang, said=said)


def where_lines(location: Location | None, lang: str, *, family: bool = True, cut: bool = False) -> list[str]:
    """The first screen's lines about the location: where, the operands, log hints and the step that fits the
    owner of the line. Empty when nothing is known.

    The operands and the log hints follow the "Where" line in the same paragraph (hard line breaks, no blank lines),
    so that they fit a 100x20 screen above the fix. ``family`` is False when a specific cause answers: its own fix
    (chosen by its conditions) is the first step then, and the operands are shown beside a "Where" line when a side
    has a value or an expression (without a line, or with roles alone, they would only repeat the error above), or
    the GPU a check refused is named.
    ``cut`` says that the paste ends inside the traceback: the line named is the last one it reaches."""
    if location is None:
        return []
    lines: list[str] = []
    site = location.site
    block: list[str] = []
    if site is not None:
        where = site_words(site, lang)
        semicolon = "；" if lang == "zh" else "; "
        if location.in_torch:
            where += f"{semicolon}{_w('in_torch', lang)}"
        if location.caller is not None:
            where += f"{semicolon}{_caller_words(location.caller, lang)}"
        if location.traced:
            where += f"{semicolon}{_traced_words(location, lang)}"
        if cut:
            where += f"{semicolon}{_w('cut', lang)}"
        block.append(f"{_label('where', lang)} {where}")
    # A GPU the log names against the one a check refused is news even without a line (vLLM's refusal alone).
    named = site is not None and any(o.expression or o.value for o in location.operands)
    if location.operands and (family or named or any(o.gpus for o in location.operands)):
        # Every value read from one warning or log line: say so once, after the sides.
        origins = {o.origin for o in location.operands if o.value and not o.said}
        common = next(iter(origins)) if len(origins) == 1 and origins <= {"warning", "log"} else ""
        shown = " · ".join(_operand(o, location, lang, origin=not common) for o in location.operands)
        if common:
            said = _w(f"origin.{common}", lang)
            shown += f"（均{said}）" if lang == "zh" else f" — {said}"
        block.append(f"{_label('operands', lang)} {shown}")
    seen = [h for h in location.hints if h.key not in _QUIET]
    if seen:
        said = ("；" if lang == "zh" else "; ").join(
            _w(_hint_key(h), lang, value=_hint_value(h.value, lang), other_value=h.other_value) for h in seen[:2]
        )
        block.append(f"{_label('seen', lang)} {said}")
    if block:
        # CommonMark's hard line break (a backslash at the end of the line): one paragraph, one line each.
        lines += ["\\\n".join(block), ""]
    first = _first_step(location, lang) if family else ""
    if first:
        lines += [f"{_label('first', lang)} {first}", ""]
    return lines


# Hints shown only through the side they give a value to: the dtype a model is loaded in is set in most logs of
# model code, and is news only where a side takes it.
_QUIET = frozenset({"model-dtype"})


def _caller_words(caller: Site, lang: str) -> str:
    """Who called the failing line, and where: the user's own line, or another package's (an application's, the
    model repository's) when the paste shows none of the user's frames."""
    owner = caller.owner
    if owner.kind in (OwnerKind.PACKAGE, OwnerKind.APPLICATION):
        return _w(f"caller.{owner.kind.value}", lang, name=owner.name, site=_place(caller))
    site = f"`{_short(caller.file)}:{caller.line}`"
    return _w("caller.remote" if owner.kind is OwnerKind.REMOTE else "caller", lang, site=site)


def _traced_words(location: Location, lang: str) -> str:
    """That the line is anomaly mode's forward trace, and where the traceback's backward pass was run from."""
    said = _w("traced", lang, node=location.traced)
    backward = location.backward
    if backward is None:
        return said
    site = f"`{_short(backward.file)}:{backward.line}`"
    code = backward.code.replace("`", "'")
    more = _w("backward", lang, site=site, code=code) if code else _w("backward.bare", lang, site=site)
    return f"{said}{'；' if lang == 'zh' else '; '}{more}"


def _hint_key(hint: Hint) -> str:
    """The wording of a hint: the one that names its second value when the line gave one and such a wording exists."""
    key = f"hint.{hint.key}"
    return f"{key}.other" if hint.other_value and f"{key}.other" in _WORDS else key


def _hint_value(value: str, lang: str) -> str:
    """A hint's value as printed (``cpu and disk``), its joining words in Chinese for a Chinese reader."""
    return value.replace(" and ", "和").replace(" or ", "或") if lang == "zh" else value


def _first_step(location: Location, lang: str) -> str:
    """The step that fits whose code the failing line is (issue 20, section 3)."""
    site = location.site
    # A library's check of the user's own settings (fp16 and bf16 both set): the entry's fix says which to change.
    if site is None or location.in_torch or location.op == "config":
        return ""
    owner = site.owner
    cast = _cast(location)
    here = f"{_short(site.file)}:{site.line}"
    if owner.kind in (OwnerKind.USER, OwnerKind.NOTEBOOK):
        write = ".write" if location.op in _IN_PLACE_WRITES else ""
        if cast:
            device = any(o.kind == "device" for o in location.operands)
            return _w("fix.user.move" if device else f"fix.user.cast{write}", lang, site=here, cast=cast)
        return _w(f"fix.user.generic{write}", lang, site=here)
    if owner.kind is OwnerKind.REMOTE:
        return _w("fix.remote", lang)
    if owner.kind in (OwnerKind.PACKAGE, OwnerKind.APPLICATION):
        version = f" {owner.version}" if owner.version else ""
        caller = location.caller
        moved = _moved(location)
        if caller is not None and caller.owner.kind in (OwnerKind.USER, OwnerKind.NOTEBOOK) and moved is not None:
            move, keep = moved
            where = f"{_short(caller.file)}:{caller.line}"
            return _w(
                "fix.package.input",
                lang,
                name=owner.name,
                version=version,
                expression=move.expression,
                value=move.value,
                caller=where,
                target=keep.value,
            )
        device = any(o.kind == "device" for o in location.operands)
        key = f"fix.{owner.kind.value}"
        return _w(f"{key}.device" if device else key, lang, name=owner.name, version=version)
    return ""


# Ops (census/operands.yaml `op`) whose failing form writes into an existing tensor: autocast never casts in-place
# ops, so the first step must not offer it (`dst[idx] = src` is `index_put_`).
_IN_PLACE_WRITES = frozenset({"index_put", "index_copy", "index_add", "masked_scatter", "put"})

# Which side to convert: the data, towards the parameters (a module's weight) or the destination.
_TOWARDS = ("weight", "others", "self", "query", "bias", "expected")


def _moved(location: Location) -> tuple[Operand, Operand] | None:
    """``(side to convert, side to keep)`` of a device mismatch whose differing side is the module's input."""
    if not any(o.kind == "device" for o in location.operands):
        return None
    pair = _pair(location)
    if pair is None or pair[0].role != "input" or not pair[1].value:
        return None
    return pair


# Sides that are no tensor one could call ``.to()`` on: a process group, a Python scalar, what the op requires, a
# setting, a result the op computes.
_NOT_TENSORS = frozenset(
    {
        "group",
        "required",
        "setting",
        "device",
        "device_ids",
        "mesh",
        "config",
        "value",
        "result",
        "numpy",
        "fp16",
        "bf16",
    }
)


def _pair(location: Location) -> tuple[Operand, Operand] | None:
    """``(move, keep)``: the tied side that should change, and the one it should change towards."""
    # Tensors only: a device literal or copy on the line (``"cpu"``, ``.tolist()``) is where data goes, not a side to
    # cast; a tuple (an LSTM's ``(h0, c0)``) has no ``.to()``.
    tied = [
        o
        for o in location.operands
        if o.expression and o.origin != "line" and o.role not in _NOT_TENSORS and not _is_tuple(o.expression)
    ]
    if len(tied) < 2:
        return None
    # A module's parameter stays as it is (``self.wq.weight = ...to(x.dtype)`` would not even assign a Parameter): the
    # data goes to it, whichever role the message gave it ("found").
    keep = next((o for o in tied if _is_parameter(o.expression)), None) or next(
        (o for role in _TOWARDS for o in tied if o.role == role), tied[0]
    )
    move = next((o for o in tied if o is not keep and o.value != keep.value), None)
    if move is None or move.expression == keep.expression:
        return None  # one expression for both sides: the line does not say which tensor differs
    return move, keep


def _is_parameter(expression: str) -> bool:
    """``self.proj.weight``, ``model[…].bias``: a module's own parameter, as a module call ties it."""
    return bool(re.search(r"\.(?:weight|bias)$", expression))


def _is_tuple(expression: str) -> bool:
    return isinstance(_expression(expression), ast.Tuple)


def _is_operation(expression: str) -> bool:
    """An expression that needs brackets before ``.dtype``: ``a * b``, ``x @ w``, ``-y``."""
    return isinstance(_expression(expression), ast.BinOp | ast.UnaryOp | ast.BoolOp | ast.Compare | ast.IfExp)


def _expression(expression: str) -> ast.expr | None:
    try:
        return ast.parse(expression, mode="eval").body
    except (SyntaxError, ValueError):
        return None


def _cast(location: Location) -> str:
    """``pooled = pooled.to(self.score.weight.dtype)``: the conversion, written for the failing line."""
    pair = _pair(location)
    if pair is None:
        return ""
    move, keep = pair
    attribute = "device" if keep.kind == "device" else "dtype"
    target = keep.expression
    if "[…]" in target:  # a layer inside a container: any of its parameters tells the dtype and device
        target = f"next({target.split('[…]', 1)[0]}.parameters())"
    elif _is_operation(target):
        target = f"({target})"  # ``(a * b).dtype``, not ``a * b.dtype``
    if _is_name(move.expression):
        return f"{move.expression} = {move.expression}.to({target}.{attribute})"
    return f"({move.expression}).to({target}.{attribute})"


def _is_name(expression: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][\w.]*", expression))


def _site_json(site: Site | None) -> dict[str, Any] | None:
    if site is None:
        return None
    owner = site.owner
    return {
        "file": site.file,
        "line": site.line,
        "function": site.function,
        "code": site.code,
        "owner": {
            "kind": owner.kind.value,
            "name": owner.name or None,
            "version": owner.version or None,
            "path": owner.path,
        },
    }


def _gpu_json(operand: Operand) -> dict[str, Any] | None:
    """The ``gpu`` object of an operand: the GPUs the log names and what the check needs; ``None`` on other sides."""
    if not operand.gpus and operand.needs is None:
        return None
    return {
        "models": [{"name": g.name or None, "compute_capability": g.capability} for g in operand.gpus],
        "needs": operand.needs,
        "falls_short": operand.short,
    }


def location_json(location: Location | None) -> dict[str, Any] | None:
    """The ``location`` object of ``--format json`` (contract 1.2, docs/json-output.md); ``None`` when unknown."""
    if location is None:
        return None
    return {
        "site": _site_json(location.site),
        "in_torch": location.in_torch,
        "caller": _site_json(location.caller),
        "call": location.call or None,
        "module": location.module or None,
        "op": location.op or None,
        "operands": [
            {
                "argument": o.argument,
                "role": o.role,
                "kind": o.kind,
                "value": o.value or None,
                "readable": readable_value(o.value) if o.value else None,
                "unlike": readable_value(o.unlike) if o.unlike else None,
                "expression": o.expression or None,
                "origin": o.origin,
                "said": o.said or None,
                "said_at": o.said_at or None,
                "gpu": _gpu_json(o),
            }
            for o in location.operands
        ],
        "hints": [
            {
                "key": h.key,
                "subject": h.subject,
                "value": h.value,
                "other": h.other or None,
                "other_value": h.other_value or None,
                "line": h.line,
            }
            for h in location.hints
        ],
        "first_step": {"en": _first_step(location, "en") or None, "zh": _first_step(location, "zh") or None},
        "anomaly": {"node": location.traced, "backward": _site_json(location.backward)} if location.traced else None,
    }


def location_schema() -> dict[str, Any]:
    """The JSON Schema of the ``location`` object (part of ``docs/json-output.schema.json``): the shape
    :func:`location_json` writes, with the code's own enums."""
    text = {"type": ["string", "null"]}
    site = {
        "type": ["object", "null"],
        "required": ["file", "line", "function", "code", "owner"],
        "properties": {
            "file": {"type": "string"},
            "line": {"type": "integer"},
            "function": {"type": "string"},
            "code": {"type": "string"},
            "owner": {
                "type": "object",
                "required": ["kind", "name", "version", "path"],
                "properties": {
                    "kind": {
                        "enum": [k.value for k in OwnerKind],
                        "description": "application added within 1.2: an application's own code run from its git "
                        "checkout (ComfyUI, stable-diffusion-webui), not an installed package.",
                    },
                    "name": text,
                    "version": text,
                    "path": {"type": "string"},
                },
            },
        },
    }
    operand = {
        "type": "object",
        "required": ["argument", "role", "kind", "value", "readable", "expression", "origin"],
        "properties": {
            "argument": {"type": "string"},
            "role": {"type": "string"},
            "kind": {"enum": ["dtype", "device"]},
            "value": text,
            "readable": text,
            "unlike": {
                **text,
                "description": "Added within 1.2: what the message says this side is not (the dtype or device the op "
                "requires), when it names no value of the side's own.",
            },
            "expression": text,
            "origin": {"enum": list(ORIGINS)},
            "said": {
                **text,
                "description": "Added within 1.2: with origin log, the words of the log that set the value "
                "(torch_dtype=torch.float16, --fp16), where the log line read gives them.",
            },
            "said_at": {
                **text,
                "description": "Added within 1.2: with said, file:line of the traceback frame whose code shows "
                "those words; null when another line of the log does.",
            },
            "gpu": {
                "type": ["object", "null"],
                "description": "Added within 1.2: on the side that is the GPU a check refused, the GPU models the log "
                "names (name as printed, null when only a capability is printed; compute capability as printed or "
                "from NVIDIA's list, null when unknown), the compute capability the check requires (null when "
                "neither the message nor the rule says), and whether the GPU falls short of it (null when that "
                "cannot be told: no requirement, a capability unknown, or several models on both sides of it); "
                "null on other sides.",
                "required": ["models", "needs", "falls_short"],
                "properties": {
                    "models": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name", "compute_capability"],
                            "properties": {"name": text, "compute_capability": {"type": ["number", "null"]}},
                        },
                    },
                    "needs": {"type": ["number", "null"]},
                    "falls_short": {"type": ["boolean", "null"]},
                },
            },
        },
    }
    hint = {
        "type": "object",
        "required": ["key", "subject", "value", "other", "other_value", "line"],
        "properties": {
            "key": {"enum": list(HINT_KEYS)},
            "subject": {"type": "string"},
            "value": {"type": "string"},
            "other": text,
            "other_value": text,
            "line": {"type": "string"},
        },
    }
    return {
        "type": ["object", "null"],
        "description": "Added in 1.2: where it broke, the operands and whose code the line is (docs/json-output.md).",
        "required": [
            "site",
            "in_torch",
            "caller",
            "call",
            "module",
            "op",
            "operands",
            "hints",
            "first_step",
            "anomaly",
        ],
        "properties": {
            "site": site,
            "in_torch": {"type": "boolean"},
            "caller": site,
            "call": text,
            "module": text,
            "op": text,
            "operands": {"type": "array", "items": operand},
            "hints": {"type": "array", "items": hint},
            "first_step": {
                "type": "object",
                "required": ["en", "zh"],
                "properties": {"en": text, "zh": text},
            },
            "anomaly": {
                "type": ["object", "null"],
                "description": "Added within 1.2: the backward node whose forward trace anomaly mode printed, "
                "and the line the backward pass ran from.",
                "required": ["node", "backward"],
                "properties": {"node": {"type": "string"}, "backward": site},
            },
        },
    }
