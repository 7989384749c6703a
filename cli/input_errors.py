"""Bad input, said in one line: the error every reader raises, and what each reader checks first.

Shared by :mod:`.inputs` (explain's log, configs, freeze files) and :mod:`.logfiles` (gzip logs and per-rank
folders, for ``explain`` and ``scan``), so that neither imports the other's private helpers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["BINARY", "TAIL_BYTES", "InputError", "looks_binary", "reading"]

TAIL_BYTES = 4 << 20
"""How much of a log's end is kept whatever its size (see :class:`~.keep.Keeper`)."""


BINARY = "{name}: looks like binary data, not a log; pass the text output of the failing run"
"""Said of an input whose first chunk is binary: refused there, not at its end (``explain /dev/urandom`` ends)."""


class InputError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def looks_binary(data: bytes) -> bool:
    """More than a tenth of the first 64 KB is control bytes: a binary file, not a log."""
    sample = data[:65536]
    if not sample:
        return False
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False  # UTF-16 text from Windows
    bad = len(sample) - len(sample.translate(None, _CONTROL_BYTES))  # counted in C: scan calls this per job
    return bad / len(sample) > 0.10


_CONTROL_BYTES = bytes(b for b in range(256) if b < 9 or 13 < b < 32)


@contextlib.contextmanager
def reading(label: str) -> Iterator[None]:
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
