"""Errors as people paste them: recover ``(type, message)`` pairs that the plain readers miss.

:mod:`.traceback` reads what Python prints. Reports rarely look like that: a UI shows the message without its
exception type, an application puts its own prefix in front ("Error during inference: ..."), a server quotes
the message inside its own log line (``Error: Warmup(Generation("..."))``, a JSON body, a repr), a terminal
wraps a long line, a copy stops mid-line. Each reader here turns one such shape back into an
:class:`~.traceback.ErrorLine`. A type that the paste does not show stays empty: an empty ``exc_type`` means
*unknown*, and an error pattern that names a type accepts it (the message has to match all the same).

Every reader looks only at lines a cheap search has found first, so a large log costs one pass per shape.
"""

from __future__ import annotations

from collections.abc import Iterable

from .regex import lazy_regex
from .traceback import EMBEDDED_EXCEPTION, EXCEPTION, FRAME, MAX_LINE, ErrorLine, Stack, find_error_lines

__all__ = ["bare_error_lines", "recover_error_lines", "variant_lines", "variants"]

# "RuntimeError:" alone on its line, the message on the next ones.
_TYPE_ALONE = lazy_regex(r"[ \t]*(?P<type>(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Failure)):[ \t]*$")
# A repr'd exception: RuntimeError('...') / ValueError("...") inside another program's output.
_REPR = lazy_regex(r"(?<![\w.])(?P<type>(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Failure))\((?P<q>['\"])(?P<text>.*)")
_RAISE_SOURCE = lazy_regex(r"^\s*raise\s")
_QUOTE_HINTS = ("Error(", "Exception(", "Failure(", "\\n", '\\"', '("', "with error '")
_QUOTE_HINT = lazy_regex(r"(?:Error|Exception|Failure)\(['\"]|\\[n\"]|\(\"|with error '")
_JSON_STRING = lazy_regex(r'"(?P<body>(?:[^"\\]|\\.){15,})"')
# Escapes of a JSON string or a Python repr: \n, \t, \", \', \\.
_ESCAPE = lazy_regex(r"\\(?P<c>[nt\"'\\/])")
_UNESCAPE = {"n": "\n", "t": " ", '"': '"', "'": "'", "\\": "\\", "/": "/"}
# An application's or a logger's prefix with no exception type: "Error during inference: msg", ComfyUI's
# "!!! Exception during processing !!! msg",
# "!!! ERROR during execution: msg", "[ERROR] msg", "ERROR 07-21 14:34:24 file.py:62] msg", "E0721 ... x.cc:9] msg".
_PREFIXED = lazy_regex(
    r"(?i:\b(?:error|exception|failed|failure)\b)"
    r"(?P<sep>[^:\]\n'\"(]{0,60}?[:\]] |[^\]\n]{0,80}?\.\w+:\d+\] |[^!\n]{0,60}?!!! )"
    r"[ \t]*(?P<message>\S[^\n]{9,})$"
)
_CODE = lazy_regex(r"(?:raise|return|File \")\b")  # a source line behind a logger's prefix, not a message
# ComfyUI's error report: "- **Exception Type:** RuntimeError", then "- **Exception Message:** msg".
_REPORT = lazy_regex(r"Exception Type:\**\s*(?P<type>[\w.]+)\s*\n[^\n]*?Exception Message:\**\s*(?P<message>[^\n]+)")
# ComfyUI's error dialog as people copy it: "Error occurred when executing VAEEncode:", a blank line or none, the
# message without its type, then the frames (flush left or indented).
_DIALOG = lazy_regex(r"Error occurred when executing [^\n]{1,120}:[ \t]*\n(?:[ \t]*\n)?[ \t]*(?P<message>[^\n]{10,})")
_PREFIX_HINTS = ("rror", "RROR", "xception", "XCEPTION", "ailed", "AILED", "ailure", "AILURE")
_PREFIX_HINT = lazy_regex(r"(?i)\b(?:error|exception|failed|failure)\b")
_GLOG = lazy_regex(r"^[EF]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] (?P<message>\S.{9,})$")
# A message quoted in a wrapper: Generation("msg"), with error 'msg', "detail": "msg".
_QUOTED = lazy_regex(r"""(?P<q>["'])(?P<text>[^"'\n]{15,})(?:(?P=q)|$)""")
_SHORT_PASTE_LINES = 12
_MAX_RECOVERED = 200


def recover_error_lines(text: str, stream: str) -> list[ErrorLine]:
    """Error lines that ``text`` shows in a shape other than ``Type: message`` (:func:`variant_lines` adds the
    damaged readings of every exception, these included)."""
    found: list[ErrorLine] = []
    found.extend(_type_alone(text, stream))
    found.extend(_quoted(text, stream))
    found.extend(_prefixed(text, stream))
    if "Exception Type:" in text:
        found.extend(ErrorLine(m["type"], m["message"].strip(), stream) for m in _REPORT.finditer(text))
    if "Error occurred when executing" in text:
        found.extend(_dialog(text, stream))
    return found[:_MAX_RECOVERED]


def _dialog(text: str, stream: str) -> Iterable[ErrorLine]:
    """The message of ComfyUI's error dialog, printed under its "Error occurred when executing <node>:" line and above
    the frames, with no exception type (a frame or traceback header there is not a message)."""
    for found in _DIALOG.finditer(text):
        message = found["message"].strip()
        if not FRAME.match(message) and not message.startswith("Traceback"):
            yield ErrorLine("", message, stream)


def variant_lines(stacks: Iterable[Stack], lines: Iterable[ErrorLine]) -> list[ErrorLine]:
    """Each exception again under the readings :func:`variants` gives its message, and each assertion of the user's
    own code read with the condition it tests (:func:`_own_assertion`)."""
    stacks = list(stacks)
    known = [(s.exc_type, s.message, s.stream) for s in stacks if s.message]
    known += [(e.exc_type, e.message, e.stream) for e in lines]
    found = [ErrorLine(exc_type, v, stream) for exc_type, message, stream in known for v in variants(message)]
    return found + [line for line in map(_own_assertion, stacks) if line is not None]


_LIBRARY_PATH = ("site-packages/", "dist-packages/", "/lib/python")
# A library's bare ``assert`` that tests dtypes or devices (``assert len(set(t.dtype for t in tensors)) == 1``,
# ``assert x.device == y.device``): with no message, the condition is all the failure says, so it is read as the
# message; other library assertions stay unread (their condition is about the library's own state).
_DTYPE_OR_DEVICE_TEST = lazy_regex(
    r"\b(?:dtypes?|devices?)\b[^\n]*(?:==|!=|\bis\b|\bin\b)|(?:==|!=)[^\n]*\b(?:dtypes?|devices?)\b"
)


def _own_assertion(stack: Stack) -> ErrorLine | None:
    """``assert has_transformer_engine_layers(model)`` in the user's script fails as a bare ``AssertionError`` (or
    with the script's own words): the condition it tests is what the failure is about, so it is read as the message
    too, and the entry about that condition can be weighed on its config and version evidence. A library's bare
    assertion is read the same way only when it tests dtypes or devices (``_DTYPE_OR_DEVICE_TEST``)."""
    if stack.exc_type.rsplit(".", 1)[-1] != "AssertionError" or not stack.frames:
        return None
    last = stack.frames[-1]
    if not last.code.startswith("assert "):
        return None
    in_library = any(part in last.file.replace("\\", "/") for part in _LIBRARY_PATH)
    if in_library and (stack.message or not _DTYPE_OR_DEVICE_TEST.search(last.code)):
        return None
    return ErrorLine(stack.exc_type, f"{last.code} {stack.message}".strip(), stack.stream)


def _lines_with(literals: tuple[str, ...], text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each line holding one of ``literals``, in order: one ``str.find`` pass per literal
    (memchr speed), where one regex with alternatives would try every position of a large log."""
    spans: set[tuple[int, int]] = set()
    for literal in literals:
        index = text.find(literal)
        while index >= 0:
            start = text.rfind("\n", 0, index) + 1
            end = text.find("\n", index)
            end = len(text) if end < 0 else end
            spans.add((start, end))
            index = text.find(literal, end)
    return sorted(spans)


def _type_alone(text: str, stream: str) -> list[ErrorLine]:
    found: list[ErrorLine] = []
    for start, end in _lines_with(("Error:", "Exception:", "Failure:"), text):
        hit = _TYPE_ALONE.match(text, start, end)
        if hit is None:
            continue
        rest = text[end + 1 : end + 1 + 6 * MAX_LINE].split("\n", 6)[:6]
        parts: list[str] = []
        for line in rest:
            if not line.strip() or FRAME.match(line) or EXCEPTION.match(line.strip()):
                break
            parts.append(line.strip())
        if parts:
            found.append(ErrorLine(hit["type"], "\n".join(parts), stream))
            if len(found) >= _MAX_RECOVERED:
                break
    return found


def _unescape(value: str) -> str:
    return _ESCAPE.sub(lambda m: _UNESCAPE[m["c"]], value)


def _quoted(text: str, stream: str) -> list[ErrorLine]:
    """Messages inside another program's line: a repr, a JSON body, a server's wrapper around a quoted string."""
    found: list[ErrorLine] = []
    for start, end in _lines_with(_QUOTE_HINTS, text):
        line = text[start : min(end, start + MAX_LINE)]
        if not _QUOTE_HINT.search(line):
            continue
        if _RAISE_SOURCE.match(line) or FRAME.match(line):
            continue  # a traceback's own lines (Windows paths hold "\\n"): the traceback reader has them
        for hit in _REPR.finditer(line):
            body = _close(hit["text"], hit["q"])
            found.append(ErrorLine(hit["type"], _unescape(body).strip(), stream))
        if '\\"' in line or "\\n" in line:
            # JSON string literals (or a Debug / repr value) holding a message or a whole traceback, escaped.
            for literal in _JSON_STRING.finditer(line):
                decoded = _unescape(literal["body"])
                found.extend(find_error_lines(decoded, stream))
                found.extend(_type_alone(decoded, stream))
                if literal["body"] != decoded and not EXCEPTION.match(decoded) and " " in decoded.strip():
                    found.extend(_wrapped(decoded, stream))
        if '("' in line or "with error '" in line:
            for quote in _QUOTED.finditer(_unescape(line)):
                found.extend(_wrapped(quote["text"], stream))
    return found


def _wrapped(inner: str, stream: str) -> list[ErrorLine]:
    """A quoted message: typed when it names its type, untyped otherwise."""
    inner = inner.strip()
    typed = EXCEPTION.match(inner) or EMBEDDED_EXCEPTION.search(inner)
    if typed and typed["message"]:
        return [ErrorLine(typed["type"], typed["message"].strip(), stream)]
    return [ErrorLine("", inner, stream)] if " " in inner and len(inner) >= 15 else []


def _close(body: str, quote: str) -> str:
    """The literal up to its closing quote (``\\"`` escapes skipped); the whole rest when the paste cut it."""
    index = 0
    while True:
        end = body.find(quote, index)
        if end < 0:
            return body.rstrip(")")
        if end > 0 and body[end - 1] == "\\":
            index = end + 1
            continue
        return body[:end]


def _prefixed(text: str, stream: str) -> list[ErrorLine]:
    """A message behind an application's or a logger's prefix, its exception type left out."""
    found: list[ErrorLine] = []
    for start, end in _lines_with(_PREFIX_HINTS, text):
        line = text[start : min(end, start + MAX_LINE)].strip()
        if not _PREFIX_HINT.search(line):
            continue
        if EXCEPTION.match(line) or EMBEDDED_EXCEPTION.search(line) or FRAME.match(line):
            continue  # a typed line: the plain reader has it
        hit = _GLOG.match(line) or _PREFIXED.search(line)
        if hit and not _CODE.match(hit["message"]):
            message = hit["message"]
            if "sep" in hit.groupdict() and ", " in hit["sep"]:
                # Not an application's prefix but the message's own clause ("ERROR main expected mat1 and mat2 to
                # have the same dtype, but got: c10::Half != ..."): the message starts after the level word.
                message = line[hit.start("sep") :]
            found.append(ErrorLine("", message.strip(), stream))
    return found


def bare_error_lines(text: str, stream: str) -> list[ErrorLine]:
    """A short paste that names no exception (the caller checks the whole input for one): its lines are the
    message, as a UI or a reporter copied it. A stream holding frames is a cut traceback, not a message."""
    lines = [line.strip() for line in text.strip().split("\n", _SHORT_PASTE_LINES + 1)]
    if len(lines) > _SHORT_PASTE_LINES or any(FRAME.match(line) or line.startswith("Traceback (") for line in lines):
        return []
    kept = [line for line in (full[:MAX_LINE] for full in lines) if line and not _NOT_A_MESSAGE.search(line)]
    if not kept:
        return []
    found = [ErrorLine("", line, stream) for line in kept]
    if len(kept) > 1:
        found.append(ErrorLine("", "\n".join(kept), stream))
    return found


# Lines of a short paste that are not the message: carets, a warning (a warning is not the error; entries read
# warnings from the log), source code, a command line (a program and a few words before its first flag: a message
# that ends by suggesting a flag, "... for example: --dtype=half.", stays), a progress bar ("45%|████▌ | 9/20 [00:01<00:02, 4.1it/s]"),
# a Trainer metrics dict.
_NOT_A_MESSAGE = lazy_regex(
    r"^[\s^~]*$|(?<!\w)\w+Warning: |^warnings\.warn\(|^(?:raise|return)\s|^\$ |^(?:python3?|torchrun|accelerate|deepspeed"
    r"|bash|sh|srun|CUDA_VISIBLE_DEVICES=\S*) |^\S+(?: (?!--)\S+){0,3} --\w|\d%\|[^|\n]*\||/(?:s|it)\]$|^\{'\w+': "
)


_WORD_END = lazy_regex(r"[A-Za-z0-9_]$")
_WORD_START = lazy_regex(r"^[A-Za-z0-9_]")


def variants(message: str) -> list[str]:
    """Readings of a message that a terminal or a copy has damaged: lines wrapped at the terminal's width
    joined back (at a space, or inside a word), and a quote the cut left open closed again."""
    out: list[str] = []
    lines = [line.strip() for line in message.split("\n")[:6] if line.strip()]
    if len(lines) > 1:
        out.append(" ".join(lines))
        glued = lines[0]
        for line in lines[1:]:
            glued += line if _WORD_END.search(glued) and _WORD_START.match(line) else " " + line
        if glued != out[0]:
            out.append(glued)
    for text in (message, *out):
        last = text.rstrip()
        for quote in ("'", '"'):
            if last.count(quote) % 2 == 1 and not last.endswith(quote):
                out.append(last + quote)
    return out
