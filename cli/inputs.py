"""Reading what the user gave: files and stdin, bounded, with one-line errors instead of tracebacks.

This is the only place (with the commands) that touches the file system for input. A log can be gigabytes:
it is read once, in chunks, and only what explaining needs is kept (:mod:`.keep`): its head (where pasted
versions and configs tend to be), its tail, and a window around every error in between.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from dtypefix.matcher.configs import Config, ConfigError, parse_config
from dtypefix.matcher.source import decode

from .keep import HEAD_BYTES, Keeper

__all__ = ["HEAD_BYTES", "InputError", "read_config", "read_log", "read_text_file", "this_env_freeze"]

TAIL_BYTES = 4 << 20
_CHUNK = 1 << 20


class InputError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def _read_bounded(stream: BinaryIO, name: str) -> tuple[bytes, bool]:
    """What explaining needs of ``stream`` (:class:`~.keep.Keeper`): head, tail and every error between;
    the flag says whether anything was left out.

    Binary input is refused on its first chunk (the same test :func:`read_log` makes on the head), not at end of
    file: ``explain /dev/urandom`` would otherwise read for ever.
    """
    keeper = Keeper(TAIL_BYTES)
    first = True
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        if first and _looks_binary(chunk):
            raise InputError(_BINARY.format(name=name))
        first = False
        keeper.add(chunk)
    return keeper.value()


_BINARY = "{name}: looks like binary data, not a log; pass the text output of the failing run"


def _looks_binary(data: bytes) -> bool:
    sample = data[:65536]
    if not sample:
        return False
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False  # UTF-16 text from Windows
    bad = sum(1 for byte in sample if byte < 9 or 13 < byte < 32)
    return bad / len(sample) > 0.10


@contextlib.contextmanager
def _reading(label: str) -> Iterator[None]:
    """Turn the operating system's reasons for not reading a file into one-line input errors."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{label}: is a directory, not a file") from None
    except PermissionError:
        raise InputError(f"{label}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{label}: cannot read: {exc.strerror or exc}") from None


def read_log(path: str | None) -> str:
    """The log from ``path`` or stdin (``None`` or ``-``); raises :class:`InputError`."""
    name = "standard input" if path is None or path == "-" else path
    with _reading(name):
        if name == "standard input":
            if sys.stdin is None or sys.stdin.isatty():
                raise InputError("no input: pipe a log into dtypefix or give a file (dtypefix explain --help)")
            data, _ = _read_bounded(sys.stdin.buffer, name)
        else:
            if Path(name).is_dir():
                raise IsADirectoryError(name)
            with Path(name).open("rb") as handle:
                data, _ = _read_bounded(handle, name)
    if not data.strip():
        raise InputError(f"{name}: empty input: nothing to explain")
    if _looks_binary(data):
        raise InputError(_BINARY.format(name=name))
    return decode(data)


SMALL_FILE_BYTES = 16 << 20
"""A config or a freeze is kilobytes; anything past this is the wrong file (a model, ``/dev/zero``)."""


def read_text_file(path: str, what: str) -> str:
    """A small text file (freeze, config); raises :class:`InputError` with ``what`` in the message.

    Reads at most :data:`SMALL_FILE_BYTES` (``/dev/zero`` or a checkpoint given by mistake is refused after a
    bounded read) and looks at the first block for binary content before reading the rest.
    """
    with _reading(f"{what} {path}"), Path(path).open("rb") as handle:
        first = handle.read(65536)
        if _looks_binary(first):
            raise InputError(f"{what} {path}: binary data, not text")
        rest = handle.read(SMALL_FILE_BYTES - len(first) + 1)
    data = first + rest
    if len(data) > SMALL_FILE_BYTES:
        raise InputError(f"{what} {path}: larger than {SMALL_FILE_BYTES >> 20} MB; not a {what} file")
    if _looks_binary(data):
        raise InputError(f"{what} {path}: binary data, not text")
    return decode(data)


def read_config(path: str) -> tuple[str, Config]:
    """Read and parse a ``--config`` file (its text is kept for ``report``); raises :class:`InputError`."""
    text = read_text_file(path, "config")
    try:
        return text, parse_config(text, Path(path).name, strict=True)
    except ConfigError as exc:
        where = f"{path}:{exc.line}" if exc.line else path
        raise InputError(f"config {where}: {exc.problem}") from None


def this_env_freeze() -> str:
    """``name==version`` for every distribution installed in the running interpreter (no torch import)."""
    from importlib.metadata import distributions

    lines = set()
    for dist in distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if name and dist.version:
            lines.add(f"{name}=={dist.version}")
    return "\n".join(sorted(lines))
