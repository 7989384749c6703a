"""Where a log comes from, behind one interface: a file, standard input, or a folder of per-rank logs (torchrun's
``--log-dir`` layout, ``*rank<N>*`` files). Text already in hand (``run``'s captured output, the hook's exception)
goes to the matcher as it is.

Every source reads to the one text the pipeline parses (:func:`~dtypefix.matcher.explain.incident_from`); a
folder's ranks come back in torchrun's console shape (``[rankN]:`` lines and its root-cause summary), so the
headline rank is chosen exactly as for a merged log. Reading is bounded and every failure is an
:class:`~.inputs.InputError` (exit code 2), never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .inputs import read_log

__all__ = ["DirectorySource", "FileSource", "LogSource", "StreamSource", "source_for"]


class LogSource(Protocol):
    """A log to explain."""

    @property
    def name(self) -> str:
        """What the user calls it, for messages (``train.log``, ``standard input``)."""

    def read(self) -> str:
        """The log's text; raises :class:`InputError` when it cannot be read or holds nothing to explain."""


@dataclass(frozen=True)
class FileSource:
    """One log file: read once, in chunks, keeping what explaining needs (head, tail, every error between)."""

    path: str

    @property
    def name(self) -> str:
        return self.path

    def read(self) -> str:
        return read_log(self.path)


@dataclass(frozen=True)
class StreamSource:
    """Standard input (``torchrun train.py 2>&1 | dtypefix explain``)."""

    name: str = "standard input"

    def read(self) -> str:
        return read_log(None)


@dataclass(frozen=True)
class DirectorySource:
    """A folder of per-rank logs, read as one multi-rank incident."""

    path: str

    @property
    def name(self) -> str:
        return self.path

    def read(self) -> str:
        from .logfiles import read_log_dir  # imports .inputs, as this module does

        return read_log_dir(self.path)


def source_for(argument: str | None) -> LogSource:
    """The source a command-line argument names: standard input for none or ``-``, a folder, or a file."""
    if argument is None or argument == "-":
        return StreamSource()
    if Path(argument).is_dir():
        return DirectorySource(argument)
    return FileSource(argument)
