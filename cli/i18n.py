"""The renderers' fixed strings in English and Chinese, and the language choice.

Entry prose carries both languages itself; this is only the frame around it (headings, labels).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["LANGS", "default_lang", "has", "strings", "t"]

LANGS = ("en", "zh")

_STRINGS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "heading.found": ("dtypefix: {n} possible cause(s)", "dtypefix：找到 {n} 个可能原因"),
        "heading.none": ("dtypefix: no known cause", "dtypefix：没有找到已知原因"),
        "heading.check": ("dtypefix check: {n} known-bad setting(s)", "dtypefix check：发现 {n} 处已知有问题的配置"),
        "heading.check.clean": ("dtypefix check: no known-bad settings", "dtypefix check：没有发现已知有问题的配置"),
        "error": ("Error", "报错"),
        "read": ("Read from the input", "从输入中读到"),
        "packages": ("packages", "包版本"),
        "packages.no_stack": ("none of the training stack", "没有训练相关的包"),
        "packages.more": (" (+{n} not shown)", "（另有 {n} 个未列出）"),
        "configs": ("configs", "配置"),
        "flags": ("launch flags", "启动参数"),
        "gpus": ("GPUs", "GPU"),
        "ranks": ("processes", "进程"),
        "read.error_only": ("the error line only (no traceback frames)", "只有报错行（没有 traceback 帧）"),
        "read.traceback": ("{n} traceback(s), {frames} frame(s)", "{n} 段 traceback，共 {frames} 帧"),
        "read.skipped_tracebacks": (
            "{n} more in the middle counted, not read (the first and last decide)",
            "中间另有 {n} 段只计数、未细读（以最前和最后的为准）",
        ),
        "read.nothing": ("nothing", "没有内容"),
        "scan.title": ("dtypefix scan", "dtypefix 扫描结果"),
        "scan.intro": (
            "{jobs} jobs ({mb} MB); {failed} with an error, {explained} of them explained by a known cause.",
            "共 {jobs} 个作业（{mb} MB）；{failed} 个报错，其中 {explained} 个找到了已知原因。",
        ),
        "scan.status": ("status", "状态"),
        "scan.jobs": ("jobs", "作业数"),
        "scan.share": ("share", "占比"),
        "scan.explained": ("explained", "已找到原因"),
        "scan.no known cause": ("no known cause", "没有已知原因"),
        "scan.out of scope": ("out of scope", "不属于本工具范围"),
        "scan.no error": ("no error", "没有报错"),
        "scan.unreadable": ("unreadable", "无法读取"),
        "scan.by_cause": ("By cause", "按原因"),
        "scan.cause": ("cause", "原因"),
        "scan.share_failed": ("share of failed", "占报错作业"),
        "scan.first_seen": ("first seen", "最早出现"),
        "scan.last_seen": ("last seen", "最近出现"),
        "scan.example": ("example", "示例作业"),
        "scan.title_column": ("title", "标题"),
        "scan.by_family": ("By family", "按类别"),
        "scan.family": ("family", "类别"),
        "scan.causes": ("causes", "原因数"),
        "scan.versions_heading": ("Package versions per cause", "各原因的作业所用的包版本"),
        "scan.versions": ("versions (jobs)", "版本（作业数）"),
        "scan.not_printed": ("not printed", "日志里没有打印"),
        "scan.more": ("+{n} more", "另有 {n} 个"),
        "scan.out_of_scope_heading": ("Out of scope", "不属于本工具范围的失败"),
        "scan.kind": ("kind", "类型"),
        "scan.not_read": ("Not read", "未能读取"),
        "scan.not_read_more": (
            "and {n} more (rows with status `unreadable`)",
            "还有 {n} 个（状态为 `unreadable` 的行）",
        ),
        "scan.chart_causes": ("Jobs by cause", "各原因的作业数"),
        "scan.chart_time": ("Explained jobs over time, by cause", "找到原因的作业随时间的分布（按原因）"),
        "scan.chart_none": ("No job was explained by a known cause.", "没有作业找到已知原因。"),
        "scan.chart_undated": ("No explained job has a date.", "找到原因的作业都没有日期。"),
        "scan.other": ("other", "其他"),
        "scan.more_causes": ("{n} more causes", "另外 {n} 个原因"),
        "read.lines": ("{lines} line(s), no error found", "{lines} 行，没有找到报错"),
        "read.error_line_missing": (
            "the paste ends inside the traceback, before its error line: what is proposed comes from the frames "
            "(and a `raise` shown in them) alone, so at low confidence; paste the traceback's last line to decide",
            "粘贴的内容在 traceback 的报错行之前就断了：下面的判断只来自调用帧（以及帧里能看到的 `raise`），"
            "所以置信度只能是低；把 traceback 的最后一行补上再试",
        ),
        "error.cut_inside": (
            "(what `{function}` raises: the paste stops before its error line)",
            "（这是 `{function}` 会抛出的报错：粘贴的内容在报错行之前就断了）",
        ),
        "error.cut_callee": (
            "(what `{callee}`, called by `{function}`, raises: the paste stops before its error line)",
            "（这是 `{function}` 调用的 `{callee}` 会抛出的报错：粘贴的内容在报错行之前就断了）",
        ),
        "read.cut_callee": (
            "the paste stops inside `{function}` before its error line; of the functions in its own file that it "
            "calls, only `{callee}` raises a dtype or device message (`{message}`): a guess one call deeper than "
            "the paste shows (`{function}` may also have failed on one of its other checks), so the entries that "
            "recognise that message are proposed, at low confidence",
            "粘贴的内容停在 `{function}` 里面，还没到报错行；它调用的同一文件里的函数中，只有 `{callee}` 会抛出跟 "
            "dtype 或设备有关的报错（`{message}`）。这是越过粘贴内容、往下多推了一层调用的猜测（`{function}` "
            "也可能是在它自己别的检查上出错），下面按这条报错给出候选，置信度只能是低",
        ),
        "read.cut_inside": (
            "the paste stops inside `{function}` before its error line; that function raises `{message}`, so the "
            "entries that recognise that message are proposed, at low confidence",
            "粘贴的内容停在 `{function}` 里面，还没到报错行；这个函数会抛出的是 `{message}`，下面按这条报错给出候选，"
            "置信度只能是低",
        ),
        "confidence": ("confidence", "置信度"),
        "high": ("high", "高"),
        "medium": ("medium", "中"),
        "low": ("low", "低"),
        "score": ("score", "得分"),
        "why": ("Why dtypefix thinks so", "判断依据"),
        "because": ("Because", "依据"),
        "colon": (":", "："),
        "colon.inline": (": ", "："),
        "semicolon": ("; ", "；"),
        "high.confidence": ("High confidence", "高置信度"),
        "medium.confidence": ("Medium confidence", "中等置信度"),
        "low.confidence": ("Low confidence", "低置信度"),
        "conf.high": (
            "this cause's own evidence holds, not only the message.",
            "这个原因自身的证据成立，不只是报错信息吻合。",
        ),
        "conf.medium": (
            "some of this cause's own evidence holds; the inputs below would make it certain.",
            "这个原因的部分证据成立；补充下面提到的输入可以确认。",
        ),
        "conf.low": (
            "only the message matches; the inputs below would decide.",
            "只有报错信息吻合；需要下面提到的输入才能判断。",
        ),
        "conf.medium.unasked": (
            "some of this cause's own evidence holds; the input does not show the rest.",
            "这个原因的部分证据成立；其余的在输入里看不到。",
        ),
        "conf.low.unasked": (
            "only the message matches; the input does not show the rest of this cause's evidence.",
            "只有报错信息吻合；这个原因的其他证据在输入里看不到。",
        ),
        "conf.medium.all": (
            "all of this cause's own evidence in the input holds, but there is not much of it.",
            "输入里这个原因自身的证据全部成立，只是证据不多。",
        ),
        "conf.low.all": (
            "the message matches and nothing in the input counts against this cause, but little speaks for it.",
            "报错信息吻合，输入里也没有与这个原因相矛盾的内容，但支持它的证据很少。",
        ),
        "conf.medium.complete": (
            "some of this cause's own evidence holds, some does not.",
            "这个原因的部分证据成立，另一部分不成立。",
        ),
        "conf.low.complete": (
            "only the message matches; the rest of this cause's evidence does not hold.",
            "只有报错信息吻合；这个原因的其他证据都不成立。",
        ),
        "conf.family": (
            "what this message means; no specific cause has evidence of its own in the input.",
            "这是这条报错本身的含义；输入里还没有指向某个具体原因的证据。",
        ),
        "more": (
            "Cause, every fix step, what does not help and references: `--details`, or `dtypefix show {id}`.",
            "原因、全部修复步骤、无效做法和参考资料：加 `--details`，或运行 `dtypefix show {id}`。",
        ),
        "check.conditional": ("Would apply, depending on inputs not given", "可能适用，取决于未提供的输入"),
        "scope.out-of-memory": (
            "This is an out-of-memory error, not a dtype or device-placement problem: dtypefix has nothing to add.",
            "这是显存/内存不足（OOM），不是 dtype 或设备放置问题，dtypefix 帮不上忙。",
        ),
        "scope.collective": (
            "This is a distributed communication (NCCL / collective) failure, not a dtype or device-placement problem.",
            "这是分布式通信（NCCL / collective）故障，不是 dtype 或设备放置问题。",
        ),
        "scope.shape": (
            "This is a tensor shape mismatch, not a dtype or device-placement problem.",
            "这是张量形状不匹配，不是 dtype 或设备放置问题。",
        ),
        "scope.missing-module": (
            "This is a missing or broken Python package (an import error), not a dtype or device-placement problem.",
            "这是缺少或损坏的 Python 包（导入错误），不是 dtype 或设备放置问题。",
        ),
        "scope.device-assert": (
            "This is a CUDA device-side assert or illegal memory access (usually an index out of range), not a dtype "
            "problem; rerun with `CUDA_LAUNCH_BLOCKING=1` to see where it happens.",
            "这是 CUDA device-side assert 或非法内存访问（通常是索引越界），不是 dtype 问题；"
            "用 `CUDA_LAUNCH_BLOCKING=1` 重跑可以定位出错位置。",
        ),
        "scope.binary-incompatible": (
            "This is a binary incompatibility between compiled packages (undefined symbol, ABI), not a dtype problem.",
            "这是编译好的包之间二进制不兼容（undefined symbol、ABI），不是 dtype 问题。",
        ),
        "scope.gpu-architecture": (
            "This is a kernel that does not support this GPU's architecture (FlashAttention-2 needs Ampere or newer, "
            'FlashAttention-3 Hopper; "no kernel image" means the build has no code for this GPU), whatever the dtype: '
            "not a dtype or device-placement problem. Use a supported GPU or another implementation "
            '(`attn_implementation="sdpa"`), or a build for your GPU.',
            "这是 kernel 不支持这块 GPU 的架构（FlashAttention-2 需要 Ampere 及以上，FlashAttention-3 需要 Hopper；"
            '"no kernel image" 表示这个版本没有为这块 GPU 编译代码），与 dtype 无关，不是 dtype 或设备放置问题。'
            '换用支持的 GPU 或其他实现（`attn_implementation="sdpa"`），或安装为你的 GPU 编译的版本。',
        ),
        "origin.traceback": ("traceback", "traceback"),
        "origin.log": ("log", "日志"),
        "origin.launch": ("launch command", "启动命令"),
        "origin.config": ("config file", "配置文件"),
        "origin.pasted": ("pasted", "贴在日志里的配置"),
        "origin.freeze": ("read from a pip freeze / requirements line", "来自 pip freeze / requirements 行"),
        "origin.environment": ("in this environment", "当前环境"),
        "origin.table": ("read from a pip or conda list", "来自 pip / conda list 列表"),
        "origin.labelled": ("read from an environment report", "来自环境信息"),
        "origin.banner": ("read from DeepSpeed's start-up log", "来自 DeepSpeed 启动日志"),
        "held": ("held", "成立"),
        "failed": ("did not hold", "不成立"),
        "unknown": ("unknown", "未知"),
        "decide.by": ("would be settled by", "可由此确定"),
        "cause": ("Cause", "原因"),
        "fix": ("Fix", "解决方法"),
        "does_not_help": ("Does not help", "这些做法没用"),
        "notes": ("Notes", "补充说明"),
        "references": ("References", "参考资料"),
        "affected": ("affected", "受影响版本"),
        "fixed_in": ("fixed in", "修复版本"),
        "wording": ("Wording by version", "不同版本的报错措辞"),
        "fixed.note": (
            "Note: {detail}; this cause is unlikely unless the fix was reverted.",
            "注意：{detail}，已经包含修复，除非修复被回退，否则不太可能是这个原因。",
        ),
        "others": ("Also possible", "其他可能"),
        "others.more": (
            "… and {n} more, less likely: --details lists them",
            "……还有 {n} 个可能性更低的，加 --details 可以全部列出",
        ),
        "decide": ("To decide between the candidates, add", "要在候选原因之间做出判断，请补充"),
        "none.body": (
            "No entry of dtypefix's knowledge base matches this error.",
            "dtypefix 的知识库里没有条目与这个报错匹配。",
        ),
        "none.noerror": (
            "dtypefix found no Python exception or error line in the {lines} line(s) of the input.",
            "dtypefix 在输入的 {lines} 行里没有找到任何 Python 异常或报错行。",
        ),
        "none.next": (
            'Try `dtypefix search "<words from the message>"`, pass the whole log rather than the last line, '
            "or file a report with `dtypefix report` so the failure can be added.",
            '可以试试 `dtypefix search "报错里的关键词"`，把完整日志而不只是最后一行传进来，'
            "或者用 `dtypefix report` 生成报告，方便把这个问题加进知识库。",
        ),
        "note.unreadable": ("{subject}: {problem}", "无法读取 {subject}（原因：{problem}）"),
        "input.notes": ("Input problems", "输入问题"),
        "kb.problems": ("Knowledge-base entries skipped", "已跳过的知识库条目"),
        "column.id": ("id", "编号"),
        "column.title": ("title", "标题"),
        "column.field": ("field", "匹配字段"),
        "search.none": ("No entry matches {query!r}.", "没有条目匹配 {query!r}。"),
        "field.id": ("id", "编号"),
        "field.title": ("title", "标题"),
        "field.message": ("message", "报错"),
        "field.tag": ("tag", "标签"),
        "field.package": ("package", "包"),
        "field.text": ("text", "正文"),
        "check.intro": ("Known failures these settings lead to:", "这些配置已知会导致以下失败："),
        # Evidence in words (cli/evidence_words.py). {source} is where a value was read; {expected} the condition.
        "or.join": (" or ", " 或 "),
        "op.matches": ("{name} containing {pattern}", "{name} 包含 {pattern}"),
        "needs": ("; this cause needs {expected}", "；这个原因要求 {expected}"),
        "error.held": ("the error is {seen}", "报错是 {seen}"),
        "error.log": ("the log shows the message {seen}", "日志里出现了报错信息 {seen}"),
        "frame.function": ("in {function}", "中的 {function}"),
        "frame.code": ("at a line calling {code}", "（调用 {code} 的那一行）"),
        "frame.code_held": (", at {code}", "，即 {code} 这一行"),
        "frame.held": ("the error passed through {where} in {function}", "报错经过 {where} 的 {function}"),
        "frame.absent": ("the traceback does not pass through {what}", "traceback 没有经过 {what}"),
        "frame.no_frames": (
            "the input has no traceback frames, so it is not known whether the error passed through {what}",
            "输入里没有 traceback 帧，无法判断报错是否经过 {what}",
        ),
        "frame.partial": (
            "{what} is not in the part of the traceback given (it may have been cut off)",
            "给出的 traceback 片段里没有 {what}（可能被截掉了）",
        ),
        "log.held": ("the log shows {seen}", "日志里有 {seen}"),
        "log.absent": ("the input does not show {what}", "输入里没有 {what}"),
        "package.inside": (
            "{name} {version} is installed ({source}), inside the affected range {spec}",
            "安装的是 {name} {version}（{source}），在受影响范围 {spec} 内",
        ),
        "package.outside": (
            "{name} {version} is installed ({source}), outside the affected range {spec}",
            "安装的是 {name} {version}（{source}），不在受影响范围 {spec} 内",
        ),
        "package.absent": (
            "the {name} version is not in the input (this cause needs {spec})",
            "输入里没有 {name} 的版本（这个原因要求 {spec}）",
        ),
        "fixed.held": (
            "{name} {version} is installed and already contains the fix (fixed in {fixed})",
            "安装的 {name} {version} 已经包含修复（{fixed} 修复）",
        ),
        "fixed.before": (
            "{name} {version} predates the fix (fixed in {fixed})",
            "{name} {version} 早于修复版本 {fixed}",
        ),
        "ns.config": ("your {title} config", "你的 {title} 配置"),
        "ns.trainer": ("your TrainingArguments", "你的 TrainingArguments"),
        "ns.flags": ("the launch command", "启动命令"),
        "ns.model": ("the model loading", "模型加载方式"),
        "config.sets": ("{where} sets {setting} ({source})", "{where}设置了 {setting}（{source}）"),
        "config.auto": (', where "auto" was resolved from {auto}', '，其中 "auto" 按 {auto} 解析'),
        "config.default": (
            "{where} leaves {setting} at its default {value}",
            "{where}没有设置 {setting}，取默认值 {value}",
        ),
        "config.not_set": ("{where} does not set {setting} ({source})", "{where}没有设置 {setting}（{source}）"),
        "config.auto_unresolved": (
            '{where} sets {setting} to "auto" ({source}) and nothing in the input says what the launcher fills in',
            '{where}把 {setting} 设为 "auto"（{source}），输入里没有信息说明启动器会填成什么',
        ),
        "config.absent": (
            "{where} is not in the input (this cause needs {expected})",
            "输入里没有{where}（这个原因要求 {expected}）",
        ),
        "precision.yes": ("the run uses {precision} ({source})", "训练用的是 {precision}（{source}）"),
        "precision.no": ("the run does not use {precision} ({source})", "训练没有用 {precision}（{source}）"),
        "precision.unknown": (
            "nothing in the input says whether the run uses {precision}",
            "输入里没有信息说明训练是否用了 {precision}",
        ),
        "env.is": ("{what} is {value}", "{what}是 {value}"),
        "env.absent": (
            "{what} is not in the input (this cause needs {expected})",
            "输入里没有{what}（这个原因要求 {expected}）",
        ),
        "env.gpu.names": ("the GPU models", "GPU 型号"),
        "env.gpu.count": ("the number of GPUs", "GPU 数量"),
        "env.gpu.min_compute_capability": ("the lowest GPU compute capability", "GPU 的最低计算能力"),
        "env.gpu.max_compute_capability": ("the highest GPU compute capability", "GPU 的最高计算能力"),
        "env.gpu.mixed_models": ("whether different GPU models are mixed", "是否混用了不同型号的 GPU"),
        "env.cuda_visible_devices": ("CUDA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"),
        "env.cuda_device_order": ("CUDA_DEVICE_ORDER", "CUDA_DEVICE_ORDER"),
        "env.os": ("the operating system", "操作系统"),
        "env.device.mps": ("an Apple MPS device", "Apple MPS 设备"),
        "gpu_memory.is": ("the smallest GPU has {value} of memory", "显存最小的 GPU 有 {value}"),
        "gpu_memory.absent": (
            "the GPU memory size is not in the input (this cause needs {expected})",
            "输入里没有 GPU 显存大小（这个原因要求 {expected}）",
        ),
        "decider.config": ("your {title} config: `--config FILE`", "你的 {title} 配置：`--config 文件`"),
        "decider.deepspeed-config": (
            "your DeepSpeed config: `--config ds_config.json`",
            "你的 DeepSpeed 配置：`--config ds_config.json`",
        ),
        "decider.accelerate-config": (
            "your Accelerate config: `--config ~/.cache/huggingface/accelerate/default_config.yaml`",
            "你的 Accelerate 配置：`--config ~/.cache/huggingface/accelerate/default_config.yaml`",
        ),
        "decider.axolotl-config": (
            "your Axolotl YAML: `--config config.yml`",
            "你的 Axolotl YAML：`--config config.yml`",
        ),
        "decider.llamafactory-config": (
            "your LLaMA-Factory YAML: `--config train.yaml`",
            "你的 LLaMA-Factory YAML：`--config train.yaml`",
        ),
        "decider.launch": (
            "the launch command or TrainingArguments (paste the command line, or `--config training_args.json`)",
            "启动命令或 TrainingArguments（把启动命令贴进来，或 `--config training_args.json`）",
        ),
        "decider.freeze": (
            "package versions: `--freeze requirements.txt` (from `pip freeze`), or `--this-env`",
            "包版本：`--freeze requirements.txt`（`pip freeze` 的输出），或加 `--this-env`",
        ),
        "decider.gpu": (
            "GPU details: the output of `nvidia-smi` or `python -m torch.utils.collect_env`",
            "GPU 信息：`nvidia-smi` 或 `python -m torch.utils.collect_env` 的输出",
        ),
        "decider.traceback": ("the full traceback, not only its last line", "完整的 traceback，而不只是最后一行"),
        "decider.log": (
            "more of the log (the lines printed before the traceback)",
            "更多日志（traceback 之前打印的内容）",
        ),
    }
)


def t(key: str, lang: str, **values: object) -> str:
    """The string ``key`` in ``lang`` with ``{name}`` placeholders filled."""
    en, zh = _STRINGS[key]
    return (zh if lang == "zh" else en).format(**values)


def has(key: str) -> bool:
    return key in _STRINGS


def strings() -> Mapping[str, tuple[str, str]]:
    """Every fixed string, ``key -> (en, zh)``, read-only (tests check that both languages say each one)."""
    return _STRINGS


def default_lang(environ: Mapping[str, str] | None = None) -> str:
    """``zh`` when the locale (LC_ALL, LC_MESSAGES, LANG, LANGUAGE) is Chinese, else ``en``."""
    env = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"
