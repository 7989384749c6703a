"""Reading what the user gave: files and stdin, bounded, with one-line errors instead of tracebacks.

This is the only place (with the commands) that touches the file system for input. A log can be gigabytes:
it is read once, in chunks, and only what explaining needs is kept (:mod:`.keep`): its head (where pasted
versions and configs tend to be), its tail, and a window around every error in between.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import BinaryIO

from dtypefix.matcher.configs import Config, ConfigError, parse_config
from dtypefix.matcher.source import decode

from .input_errors import BINARY, TAIL_BYTES, InputError, looks_binary, reading
from .keep import HEAD_BYTES, Keeper

__all__ = ["HEAD_BYTES", "InputError", "checked_text", "read_config", "read_log", "read_text_file", "this_env_freeze"]

_CHUNK = 1 << 20


def _read_bounded(stream: BinaryIO, name: str) -> tuple[bytes, bool]:
    """What explaining needs of ``stream`` (:class:`~.keep.Keeper`): head, tail and every error between;
    the flag says whether anything was left out. Binary input is refused on its first chunk, not at its end."""
    keeper = Keeper(TAIL_BYTES)
    while chunk := stream.read(_CHUNK):
        if not keeper.seen and looks_binary(chunk):
            raise InputError(BINARY.format(name=name))
        keeper.add(chunk)
    return keeper.value()


def read_log(path: str | None) -> str:
    """The log from ``path`` or stdin (``None`` or ``-``); raises :class:`InputError`."""
    name = "standard input" if path is None or path == "-" else path
    with reading(name):
        if name == "standard input":
            if sys.stdin is None or sys.stdin.isatty():
                raise InputError("no input: pipe a log into dtypefix or give a file (dtypefix explain --help)")
            data, _ = _read_bounded(sys.stdin.buffer, name)
        else:
            from .logfiles import read_bytes  # gzip and per-rank folders; imported when a file is named

            data = read_bytes(Path(name))
    return checked_text(name, data)


def checked_text(name: str, data: bytes) -> str:
    """The log text of ``data`` as ``explain`` reads it; raises :class:`InputError` when it is empty or binary."""
    if not data.strip():
        raise InputError(f"{name}: empty input: nothing to explain")
    if looks_binary(data):
        raise InputError(BINARY.format(name=name))
    return decode(data)


SMALL_FILE_BYTES = 16 << 20
"""A config or a freeze is kilobytes; anything past this is the wrong file (a model, ``/dev/zero``)."""


def read_text_file(path: str, what: str) -> str:
    """A small text file (freeze, config); raises :class:`InputError` with ``what`` in the message.

    Reads at most :data:`SMALL_FILE_BYTES` (``/dev/zero`` or a checkpoint given by mistake is refused after a
    bounded read) and looks at the first block for binary content before reading the rest.
    """
    with reading(f"{what} {path}"), Path(path).open("rb") as handle:
        first = handle.read(65536)
        if looks_binary(first):
            raise InputError(f"{what} {path}: binary data, not text")
        rest = handle.read(SMALL_FILE_BYTES - len(first) + 1)
    data = first + rest
    if len(data) > SMALL_FILE_BYTES:
        raise InputError(f"{what} {path}: larger than {SMALL_FILE_BYTES >> 20} MB; not a {what} file")
    if looks_binary(data):
        raise InputError(f"{what} {path}: binary data, not text")
    return decode(data)


def read_config(path: str) -> tuple[str, Config]:
    """Read and parse a ``--config`` file (its text is kept for ``report``); raises :class:`InputError`."""
    text = read_text_file(path, "config")
    try:
        return text, parse_config(text, Path(path).name, strict=True)
    except ConfigError as exc:
        if _LOG_LINE.search(text):  # the parser's complaint would hide the real mistake
            raise InputError(
                f"config {path}: this looks like a log, not a config; give it as the log: dtypefix explain {path}"
            ) from None
        where = f"{path}:{exc.line}" if exc.line else path
        raise InputError(f"config {where}: {exc.problem}") from None


# A traceback header or an exception line (``RuntimeError: ...``, ``[rank0]: ValueError: ...``) starts a line.
_LOG_LINE = re.compile(
    r"^(?:\[[^\]]*\]:?\s*)?(?:Traceback \(most recent call last\)|[\w.]*(?:Error|Exception): )", re.M
)


def this_env_freeze() -> str:
    """``name==version`` for every distribution installed in the running interpreter (no torch import)."""
    from importlib.metadata import distributions

    lines = set()
    for dist in distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if name and dist.version:
            lines.add(f"{name}=={dist.version}")
    return "\n".join(sorted(lines))
