"""A Python traceback as a model: Trace -> Stack -> Frame.

Matching an entry needs more than the last line: which frames the error passed through (DeepSpeed's
``stage3.py``, Liger's fused kernel) tells causes apart that print the same message, and a chained exception
("The above exception was the direct cause...") may hold the real error while the last one is a wrapper.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .regex import lazy_regex

__all__ = [
    "EMBEDDED_EXCEPTION",
    "EXCEPTION",
    "FRAME",
    "MAX_LINE",
    "ErrorLine",
    "ForwardTrace",
    "Frame",
    "Stack",
    "find_error_lines",
    "find_forward_traces",
    "parse_stacks",
]

_HEADER = "Traceback (most recent call last):"
# A paste may end inside the last frame line, after "in" and before the function's name: kept, its function empty.
FRAME = lazy_regex(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in(?: (?P<function>.+))?)?$')
# A paste cut inside its first frame line: 'site-packages\diffusers\models\x.py", line 902, in f'. Only ever the
# first frame of a paste without a header (the closing quote and ", line N, in" say what the line was).
_CUT_FRAME = lazy_regex(r'^\s*(?P<file>[^"\s][^"]*\.py)", line (?P<line>\d+), in (?P<function>[\w.<>]+)$')
# "RuntimeError: msg", "torch.OutOfMemoryError: msg", "deepspeed.runtime.Foo: msg", a bare "KeyboardInterrupt".
EXCEPTION = lazy_regex(
    r"^(?P<type>(?:[A-Za-z_][\w]*\.)*\w*(?:Error|Exception|Interrupt|Exit|Warning|Failure|error))"
    r"(?::\s?(?P<message>.*))?$"
)
# Inside a traceback the first unindented line after the frames is the exception, whatever its class is called.
_ANY_EXCEPTION = lazy_regex(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")
_CHAIN_CAUSE = "The above exception was the direct cause of the following exception:"
_CHAIN_CONTEXT = "During handling of the above exception, another exception occurred:"
_MAX_MESSAGE_LINES = 40


@dataclass(frozen=True)
class Frame:
    """One ``File "...", line N, in f`` entry."""

    file: str
    """Path as printed (site-packages paths say which library the frame belongs to)."""
    line: int
    function: str
    """Function name; empty when the line had no ``in ...`` part."""
    code: str
    """The source line printed under the frame, stripped; empty when absent."""
    marked: str = ""
    """The part of ``code`` that Python 3.11+ underlines with ``^``/``~`` (the expression that raised); empty when
    no caret line was printed."""


@dataclass(frozen=True)
class Stack:
    """One exception with the frames that led to it."""

    exc_type: str
    """Exception class as printed, possibly dotted (``torch.OutOfMemoryError``)."""
    message: str
    """The message, continuation lines included."""
    frames: tuple[Frame, ...]
    stream: str
    """Label of the process stream the traceback came from."""
    chained_to_next: str = ""
    """``cause`` or ``context`` when another exception follows in the same chain; empty for the last one."""
    complete: bool = True
    """False when the paste starts mid-traceback (no header): a frame missing from it proves nothing."""
    error_line: bool = True
    """False when the paste ends before the exception line (a cut paste): ``exc_type`` and ``message`` are then
    what the last frame's ``raise T("...")`` source shows, or empty."""

    @property
    def short_type(self) -> str:
        """The class name without its module (``OutOfMemoryError``)."""
        return self.exc_type.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class ErrorLine:
    """An ``SomeError: message`` line found outside any full traceback (pasted one-liners, C++ errors)."""

    exc_type: str
    message: str
    stream: str


# A line some logger or the warnings module printed (a dated or level-word prefix, glog's "I0525 12:00:00", or
# "file.py:411: FutureWarning: ..."): output that followed the error, never a line of its message.
_LOG_RECORD = lazy_regex(
    r"^(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d|(?:INFO|WARNING|WARN|DEBUG|CRITICAL)(?::|\s+-\s)|[IWEF]\d{4} \d\d:\d\d"
    r"|\S+\.py:\d+: \w*Warning: )"
)


def _read_message(lines: list[str], start: int, limit: int = _MAX_MESSAGE_LINES) -> tuple[str, int]:
    """Collect an exception's continuation lines until a blank line, a new traceback, a chain marker, a frame
    (a paste that puts the error first and its frames after it, without a header) or a log record."""
    parts: list[str] = []
    index = start
    while index < len(lines) and len(parts) < limit:
        line = lines[index]
        stripped = line.strip()
        if (
            not stripped
            or stripped in (_HEADER, _CHAIN_CAUSE, _CHAIN_CONTEXT)
            or EXCEPTION.match(line)
            or FRAME.match(line)
            or _LOG_RECORD.match(stripped)
        ):
            break
        parts.append(stripped)
        index += 1
    return "\n".join(parts), index


# rich's boxed tracebacks (Transformers, ChatGLM and many scripts install rich.traceback): frame lines read
# "│ /path/to/file.py:197 in backward   │" inside a box headed "╭── Traceback (most recent call last) ──╮".
_RICH_FRAME = lazy_regex(r"^[│┃]\s*(?P<file>\S+?\.py):(?P<line>\d+) in (?P<function>[^\s│┃]+)\s*[│┃]?\s*$")
_BOX_LINE = lazy_regex(r"^[│┃╭╰┏┗]")
# The line that raised, marked in the box: "│ ❱ 576 │   │   z = self.post_quant_conv(z)     │" (the inner bars are
# rich's indentation guides); kept as the frame's source line, which says which release the file is from.
_RICH_CURRENT = lazy_regex(r"^[│┃]\s*❱\s*\d+\s*(?:[│┃]\s{0,3})*(?P<code>.*?)\s*[│┃]?\s*$")


# A paste of rich frames cut out of their box (no header, no border): "│ /path/file.py:93 in forward │".
_RICH_ANY_FRAME = lazy_regex(r"^[│┃]\s*\S+?\.py:\d+ in [^\s│┃]+\s*[│┃]?\s*$", re.MULTILINE)


def _rich_layout(text: str) -> bool:
    """rich's traceback box: its header inside a border, or (a paste cut out of it) its frame lines."""
    if "Traceback (most recent call last)" in text and ("╭" in text or "┏" in text):
        return True
    return bool(_RICH_ANY_FRAME.search(text))


# A box line holding only part of a long path (rich wraps it at the box's width, "…\\accelerate\\big_m" over
# "odeling.py:355 in dispatch_model"): the frame line below it starts with the rest of that path.
_RICH_PATH_PART = lazy_regex(r"^[│┃]\s*(?P<part>[^\s│┃]*[/\\][^\s│┃]*)\s*[│┃]?\s*$")


def _unbox_rich(text: str) -> str:
    """Rewrite a rich traceback box into the plain ``File "...", line N, in f`` form the parser reads."""
    out: list[str] = []
    part = ""
    for line in text.split("\n"):
        above, part = part, ""
        if not _BOX_LINE.match(line):
            out.append(line)
        elif "Traceback (most recent call last)" in line:
            out.append(_HEADER)
        else:
            frame = _RICH_FRAME.match(line)
            if frame:
                file = frame["file"]
                if above and not file.startswith(("/", "\\")) and ":" not in file:
                    file = above + file
                out.append(f'  File "{file}", line {frame["line"]}, in {frame["function"]}')
            elif (path := _RICH_PATH_PART.match(line)) and ".py:" not in line:
                part = above + path["part"]  # a path long enough to take several box lines
            elif (current := _RICH_CURRENT.match(line)) and current["code"] and out and out[-1].startswith("  File "):
                out.append(f"    {current['code']}")
    return "\n".join(out)


# IPython / Jupyter tracebacks: "RuntimeError    Traceback (most recent call last)", then frames such as
# "File ~/envs/x/lib/python3.10/site-packages/torch/nn/modules/module.py:1501, in Module._call_impl(self, *args)"
# and "Cell In[5], line 3"; the exception line closes them as usual.
_IPYTHON_HEADER = lazy_regex(r"^\w+\s{2,}Traceback \(most recent call last\)[ \t]*$", re.MULTILINE)
_IPYTHON_FRAME = lazy_regex(r"^File (?P<file>\S+?\.py):(?P<line>\d+), in (?P<function>[\w.<>]+)")
_IPYTHON_CELL = lazy_regex(r"^(?:Cell In ?\[\d*\]|Input In \[\d*\]), line (?P<line>\d+)")
# IPython 7 and Colab name a frame without its line ("/usr/lib/python3/dist-packages/peft/tuners/lora.py in
# merge(self)"; Colab pastes it as a Markdown link: "[<ipython-input-3-ab12>](https://localhost:8080/#) in
# <cell line: 2>()"): the arrow line below it gives the line number.
_IPYTHON_OLD_FRAME = lazy_regex(
    r"^\[?(?P<file><ipython-input-[\w-]+>|/\S+?\.py)\]?(?:\(https?://[^)\s]*\))? in (?P<function><[^>]*>|[\w.]+)\("
)
# The arrow marks the line that raised ("--> 1501     return forward_call(*args, **kwargs)"): kept as the frame's
# source line, which says which release the file is from.
_IPYTHON_CURRENT = lazy_regex(r"^-*> ?(?P<line>\d+)\s+(?P<code>\S.*?)\s*$")
# A paste of IPython frames without the header (cut from a notebook's output): a frame line and an arrow line.
_IPYTHON_NUMBERED = lazy_regex(r"^\s+(?P<line>\d+) (?P<code>.*)$")
_IPYTHON_ANY_FRAME = lazy_regex(r"^File \S+?\.py:\d+, in [\w.<>]+", re.MULTILINE)
_IPYTHON_ANY_ARROW = lazy_regex(r"^-*> ?\d+\s+\S", re.MULTILINE)


def _open_brackets(code: str) -> int:
    """How many brackets ``code`` leaves open (string literals are not told apart: a bracket inside one is rare on a
    call's first line, and a wrong count only joins a line less or more)."""
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _ipython_layout(text: str) -> bool:
    """IPython's traceback layout: its header, or (a paste cut below it) its frame and arrow lines."""
    if "Traceback (most recent call last)" in text and _IPYTHON_HEADER.search(text):
        return True
    # Python's own frames are indented ('  File "...'): only a line that starts with "File " can be IPython's.
    starts = text.startswith("File ") or "\nFile " in text
    return starts and bool(_IPYTHON_ANY_FRAME.search(text)) and bool(_IPYTHON_ANY_ARROW.search(text))


_EXCEPTION_START = lazy_regex(r"^[\w.]+(?:Error|Exception|Warning|Interrupt|Exit)\b")


def _exception_line(line: str) -> bool:
    """An exception line (``ValueError: ...``), which closes an IPython traceback."""
    return bool(_EXCEPTION_START.match(line))


def _plain_ipython(text: str) -> str:
    """Rewrite IPython's traceback layout into the plain one the parser reads."""
    out: list[str] = []
    pending: tuple[str, str] | None = None  # an IPython 7 frame (file, function) waiting for its arrow line
    header = -1  # where the current traceback's header went
    following = 0  # the number of the next source line that continues the arrow line's open call
    for line in text.split("\n"):
        if following and (more := _IPYTHON_NUMBERED.match(line)) and int(more["line"]) == following:
            # IPython prints the whole statement: its arguments are on the numbered lines below the arrow.
            out[-1] += ("" if out[-1].endswith(("(", "[", "{")) else " ") + more["code"].strip()
            following = following + 1 if _open_brackets(out[-1]) > 0 else 0
            continue
        following = 0
        if pending is not None and (current := _IPYTHON_CURRENT.match(line)):
            file, function = pending
            out.append(f'  File "{file}", line {current["line"]}, in {function}')
            out.append(f"    {current['code']}")
            following = int(current["line"]) + 1 if _open_brackets(current["code"]) > 0 else 0
            pending = None
            continue
        closes = _exception_line(line)
        if pending is not None and (closes or _IPYTHON_OLD_FRAME.match(line) or _IPYTHON_HEADER.match(line)):
            # The paste cut this frame's arrow line: its line is unknown, so the frame is left out, and the
            # traceback is no longer whole (a frame an entry asks for may be the one left out).
            if header >= 0:
                out[header] = ""
            pending = None
        if closes:
            header = -1
        if old := _IPYTHON_OLD_FRAME.match(line):
            function = old["function"]
            pending = (old["file"], "<module>" if function.startswith("<") else function.rsplit(".", 1)[-1])
        elif _IPYTHON_HEADER.match(line):
            header = len(out)
            out.append(_HEADER)
        elif frame := _IPYTHON_FRAME.match(line):
            out.append(f'  File "{frame["file"]}", line {frame["line"]}, in {frame["function"].rsplit(".", 1)[-1]}')
        elif cell := _IPYTHON_CELL.match(line):
            out.append(f'  File "<cell>", line {cell["line"]}, in <module>')
        elif current := _IPYTHON_CURRENT.match(line):
            if out and out[-1].startswith("  File "):
                out.append(f"    {current['code']}")
                following = int(current["line"]) + 1 if _open_brackets(current["code"]) > 0 else 0
        elif not re.match(r"^\s+\d+(?: |$)", line) and not re.match(r"^\s+\(\.\.\.\)\s*$", line):
            out.append(line)
    if pending is not None and header >= 0:
        out[header] = ""
    return "\n".join(out)


# VS Code's exception widget (its Python debugger): "Exception has occurred: RuntimeError" (in Chinese "发生异常:
# RuntimeError"), the message, then the frames with the innermost first, often the "Type: message" line again below.
_VSCODE_BANNER = lazy_regex(
    r"^(?:Exception has occurred|发生异常)\s*[:：]\s*(?P<type>[A-Za-z_][\w.]*)\s*$", re.MULTILINE
)


def _plain_vscode(text: str) -> str:
    """VS Code's exception widget rewritten as the traceback Python prints: frames outermost first, the exception
    line last (once)."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        banner = _VSCODE_BANNER.match(lines[index])
        if banner is None:
            out.append(lines[index])
            index += 1
            continue
        start = index
        message, index = _read_message(lines, index + 1)
        groups: list[list[str]] = []
        while index < len(lines) and (FRAME.match(lines[index]) or (groups and lines[index][:1].isspace())):
            if FRAME.match(lines[index]):
                groups.append([])
            groups[-1].append(lines[index])
            index += 1
        if not groups:
            out += lines[start:index]  # a banner without frames: left as it is
            continue
        typed = f"{banner['type']}: {message}" if message else banner["type"]
        out += [_HEADER, *(line for group in reversed(groups) for line in group), typed]
        if index < len(lines) and lines[index].strip() == typed.split("\n", 1)[0].strip():
            index += 1 + typed.count("\n")  # the widget's own "Type: message" line, already written
    return "\n".join(out)


_GLUED_FRAME = lazy_regex(r'(?<=\S)(?=\s+File "[^"]+", line \d+)')
# A frame line the terminal wrapped inside its path ('File "/opt/.../dispatch/in' / 'ternlm.py", line 66, in f'): the
# columns were cut, nothing was inserted, so the two parts join as they are.
_UNCLOSED_FRAME = lazy_regex(r'File "[^"\n]*\n')  # the cheap test first: most logs have no such line
_WRAPPED_FRAME = lazy_regex(
    r'^(?P<head>[ \t]*File "[^"\n]+)\n(?P<tail>[^"\n\s][^"\n]*", line \d+(?:, in [^\n]+)?)$', re.MULTILINE
)


def parse_stacks(text: str, stream: str = "main") -> list[Stack]:
    """Every traceback in ``text``, chained exceptions as separate stacks in printed order."""
    # Two processes writing at once can glue a frame line onto the end of another line: split it off.
    if ("│" in text or "┃" in text) and _rich_layout(text):
        text = _unbox_rich(text)
    if _ipython_layout(text):
        text = _plain_ipython(text)
    if ("Exception has occurred" in text or "发生异常" in text) and _VSCODE_BANNER.search(text):
        text = _plain_vscode(text)
    if 'File "' in text:
        text = _GLUED_FRAME.sub("\n", text)
        if _UNCLOSED_FRAME.search(text):
            text = _WRAPPED_FRAME.sub(r"\g<head>\g<tail>", text)
    lines = text.split("\n")
    stacks: list[Stack] = []
    index = 0
    pending_chain = ""
    while index < len(lines):
        stripped = lines[index].strip()
        # A pasted traceback often starts at its first frame, without the header line.
        if stripped != _HEADER and not FRAME.match(lines[index]) and not _CUT_FRAME.match(lines[index]):
            if stripped == _CHAIN_CAUSE:
                pending_chain = "cause"
            elif stripped == _CHAIN_CONTEXT:
                pending_chain = "context"
            index += 1
            continue
        if pending_chain and stacks:
            last = stacks[-1]
            stacks[-1] = Stack(
                last.exc_type, last.message, last.frames, last.stream, pending_chain, last.complete, last.error_line
            )
        pending_chain = ""
        complete = stripped == _HEADER
        if complete:
            index += 1
        frames: list[Frame] = []
        exc_type = message = ""
        after_frames = index  # the line after the last frame read (and its source line)
        while index < len(lines):
            line = lines[index]
            frame = FRAME.match(line) or (_CUT_FRAME.match(line) if not frames and not complete else None)
            if frame:
                parsed, index = _frame_at(lines, index, frame)
                frames.append(parsed)
                after_frames = index
                continue
            stripped = line.strip()
            head = line[:MAX_LINE]
            exc = _ANY_EXCEPTION.match(head) if head and not head[0].isspace() and frames else None
            exc = exc or (EXCEPTION.match(head) if head and not head[0].isspace() else None)
            if exc:
                exc_type = exc["type"]
                first = (exc["message"] or "").strip()
                rest, index = _read_message(lines, index + 1)
                message = "\n".join(p for p in (first, rest) if p)
                break
            if stripped == _HEADER:
                break  # a traceback cut off before its exception line
            index += 1  # carets (^^^^), "[Previous line repeated N more times]", ExceptionGroup bars
        raised = _raised(frames)
        untyped = "" if exc_type or not frames or index < len(lines) else _untyped_message(lines[after_frames:])
        if exc_type:
            if raised and raised[0].rsplit(".", 1)[-1] == exc_type.rsplit(".", 1)[-1]:
                message = _uncut(message, raised[1])
            stacks.append(Stack(exc_type, message, tuple(frames), stream, complete=complete))
        elif untyped:
            # The message without its type (a notebook's last line, an issue title pasted under the frames).
            stacks.append(Stack("", untyped, tuple(frames), stream, complete=complete))
        elif frames:
            # The paste ends before the exception line: what the last frame raises, if its source shows it.
            exc_type, message = raised or ("", "")
            stacks.append(Stack(exc_type, message, tuple(frames), stream, complete=complete, error_line=False))
    return stacks


_UNTYPED_MAX_LINES = 3
# What ends a paste without being its message: a progress bar, a shell prompt, a launcher's exit line, the footer
# torch.compile prints under the user-code frames inside its own message, a log line (a bracketed or dated prefix, a
# level word, glog's "I0525 ...").
_NOT_UNTYPED = lazy_regex(
    r"\d%\||^\$ |^>>> |^In \[\d*\]|exit(?:ed with)? code|exitcode|^Process finished|TORCHDYNAMO_VERBOSE|TORCH_LOGS="
    r"|^\[|^\(|^\d{4}-\d\d-\d\d|^\d\d:\d\d:\d\d|^(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)\b|^[IWEF]\d{4} "
)


def _untyped_message(tail: list[str]) -> str:
    """The message of a traceback whose last lines, after its frames, are the message without an exception type
    (IPython shows the type only in its header, and a reporter who copies the frames and then the message from an
    issue title drops it): the final block of unindented lines that are not code, at the very end of the paste."""
    block = [line for line in tail if line.strip()]
    if not block or len(block) > _UNTYPED_MAX_LINES:
        return ""
    for line in block:
        if line[:1].isspace() or _CARETS.match(line) or _NOT_UNTYPED.search(line) or _is_code(line):
            return ""
        if EMBEDDED_EXCEPTION.search(line):
            return ""  # a typed exception behind a prefix (Ray's "(pid=...)"): the error-line reader has it
    # Lines after the frames with a blank line among them are not one message.
    start = next(i for i, line in enumerate(tail) if line.strip())
    if any(not line.strip() for line in tail[start : start + len(block)]):
        return ""
    return "\n".join(line.strip() for line in block)


def _is_code(line: str) -> bool:
    """A line Python can read as a statement, or as the start of one cut at an open bracket: a source line, not a
    message (a message reads as prose: "FlashAttention only support fp16 and bf16 data type")."""
    import ast  # only for a traceback that ends after its frames without an exception line: not on every start

    text = line.strip()
    if " " not in text:
        return True  # one word ("Killed", "x"): nothing says it is a message
    closers = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    for char in text:
        if char in closers:
            stack.append(closers[char])
        elif stack and char == stack[-1]:
            stack.pop()
    for candidate in (text, text.rstrip(",\\") + "".join(reversed(stack))):
        try:
            ast.parse(candidate)
        except (SyntaxError, ValueError):
            continue
        return True
    return False


def _frame_at(lines: list[str], index: int, header: re.Match[str]) -> tuple[Frame, int]:
    """The frame whose header (``File "...", line N, in f``) is ``lines[index]``, with the source line printed under
    it and that line's caret markers; and the index of the line after its source line."""
    code = marked = ""
    nxt = lines[index + 1] if index + 1 < len(lines) else ""
    if nxt.startswith("    ") and not FRAME.match(nxt):
        code = nxt.strip()
        index += 1
        marked = _marked(nxt, lines[index + 1] if index + 1 < len(lines) else "")
    elif not lines[index][:1].isspace() and _unindented_source(lines, index + 1):
        code = nxt.strip()  # its carets, if any, lost their columns with the indentation: not read
        index += 1
    function = (header["function"] or "").strip()
    return Frame(header["file"], int(header["line"]), function, code, marked), index + 1


def _unindented_source(lines: list[str], index: int) -> bool:
    """``lines[index]`` is the source line of a frame whose paste lost its indentation (a forum, a log collector
    that strips it: ``File "..."`` and the code both at the start of the line). The line after it must show that it
    was one: another frame, the carets under it, or the exception line; the last line of a frame with no source line
    shown would otherwise be taken for code when it is the message itself."""
    line = lines[index] if index < len(lines) else ""
    if not line.strip() or FRAME.match(line) or EXCEPTION.match(line) or _CARETS.match(line):
        return False
    # The next line with text (splitting glued frames leaves an empty line before each frame line).
    after = next((a for a in lines[index + 1 : index + 3] if a.strip()), "")
    return bool(FRAME.match(after) or _CARETS.match(after) or EXCEPTION.match(after))


_CARETS = lazy_regex(r"^\s*[~^]*\^[~^]*\s*$")


def _marked(code_line: str, caret_line: str) -> str:
    """The columns of ``code_line`` that a Python 3.11+ caret line (``~~~^^^``) under it underlines."""
    if not _CARETS.match(caret_line):
        return ""
    start = len(caret_line) - len(caret_line.lstrip())
    return code_line[start : len(caret_line.rstrip())].strip()


# ``raise ValueError("...")`` as the source line under the last frame; the literal may be an f-string.
_RAISE = lazy_regex(
    r"""^raise\s+(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Failure))\(\s*[rfbu]{0,2}(?P<q>["'])(?P<text>.*?)(?:(?P=q)|$)"""
)


def _raised(frames: list[Frame]) -> tuple[str, str] | None:
    """``(type, literal)`` of a ``raise T("literal")`` shown as the last frame's source line."""
    if not frames:
        return None
    found = _RAISE.match(frames[-1].code)
    return (found["type"], found["text"]) if found and found["text"] else None


def _uncut(message: str, literal: str) -> str:
    """A final line cut short ("Torch not compiled with CU") completed from the raise it came from."""
    first = message.split("\n", 1)[0].rstrip()
    if first and "{" not in literal and len(first) < len(literal) and literal.startswith(first):
        return literal + message[len(first) :] if "\n" in message else literal
    return message


# An exception type somewhere in a line: after a log prefix ("[rank0]:[E] ", "ERROR ", stray bytes).
EMBEDDED_EXCEPTION = lazy_regex(
    r"(?<![\w.])(?P<type>(?:[A-Za-z_]\w{0,60}\.){0,8}\w{0,60}(?:Error|Exception|Interrupt|Failure)): (?P<message>.*)$"
)
_ERROR_WORD = lazy_regex(r"(?:Error|Exception|Interrupt|Failure): ")
MAX_LINE = 4096


def find_error_lines(text: str, stream: str = "main") -> list[ErrorLine]:
    """``Type: message`` lines anywhere, for input that has no ``Traceback`` header (one-line pastes, log lines)."""
    found: list[ErrorLine] = []
    if not _ERROR_WORD.search(text):
        return found
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if "rror: " not in line and "xception: " not in line and "nterrupt: " not in line and "ailure: " not in line:
            continue
        candidate = line.strip()[:MAX_LINE]  # bounded: a 100 MB line must not reach a regex whole
        exc = EXCEPTION.match(candidate) or EMBEDDED_EXCEPTION.search(candidate)
        if not exc or exc["message"] is None:
            continue
        first = exc["message"].strip()
        # Outside a traceback the following lines are often unrelated log output: take only a few.
        rest, _ = _read_message(lines, index + 1, limit=6)
        found.append(ErrorLine(exc["type"], "\n".join(p for p in (first, rest) if p), stream))
    return found


@dataclass(frozen=True)
class ForwardTrace:
    """The forward frames autograd's anomaly mode prints when a backward node fails.

    ``torch.autograd.set_detect_anomaly(True)`` warns "Error detected in PowBackward0. Traceback of forward call that
    caused the error:" and the frames of the forward call that built that node, before the real traceback, which only
    reaches ``loss.backward()``: the line to look at is the forward one."""

    node: str
    """The backward node anomaly mode names (``PowBackward0``, ``ScaleBackward``)."""
    frames: tuple[Frame, ...]


# torch's TORCH_WARN in python_anomaly_mode.cpp, as a Python warning ("...graph.py:869: UserWarning: Error detected
# in X. Traceback of forward call that caused the error:") or torch 1.x's "[W python_anomaly_mode.cpp:104] Warning:".
# A parent's trace ("Traceback of forward call that induced the previous calculation") follows it and is not read.
_ANOMALY = lazy_regex(r"Error detected in (?P<node>[\w.]+)\. Traceback of forward call that caused the error:\s*$")
_ANOMALY_WORDS = "Traceback of forward call that caused the error:"


def find_forward_traces(text: str) -> list[ForwardTrace]:
    """Every forward trace anomaly mode printed, in printed order, each with the frames that follow its warning."""
    if _ANOMALY_WORDS not in text:
        return []
    found: list[ForwardTrace] = []
    lines = text.split("\n")
    for index, line in enumerate(lines):
        marker = _ANOMALY.search(line[:MAX_LINE]) if _ANOMALY_WORDS in line else None
        if marker is None:
            continue
        frames: list[Frame] = []
        at = index + 1
        while at < len(lines) and (frame := FRAME.match(lines[at])):
            parsed, at = _frame_at(lines, at, frame)
            frames.append(parsed)
            at += 1 if parsed.marked else 0  # the caret line under the source line
        if frames:
            found.append(ForwardTrace(marker["node"], tuple(frames)))
    return found
