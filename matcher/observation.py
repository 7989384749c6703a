"""What a condition saw in the input, as types: the renderers word it, the JSON output serialises it.

A held frame is a :class:`FrameSeen` (not ``"path:line in fn :: code"`` to be split again), a value is a
:class:`ValueSeen`, a matched message or log line a :class:`TextSeen`; where each was read is a :class:`Place`
whose :class:`Origin` is an enum (never ``"launch command"`` in English). Nothing here holds words a reader sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["FrameSeen", "Note", "Observation", "Origin", "Place", "TextSeen", "ValueSeen"]


class Origin(str, Enum):
    """Which part of the input a value, version or text was read from. The values are the JSON ``source``
    strings of contract 1.x (a config file is named by :attr:`Place.file` instead)."""

    TRACEBACK = "traceback"
    """An exception or ``Type: message`` line."""
    LOG = "log"
    """Any other line of the log (a warning, a banner, an ``nvidia-smi`` table)."""
    LAUNCH = "launch command"
    """A launch command line (``torchrun train.py --bf16 True``)."""
    CONFIG = "config"
    """A config file the user gave (``--config``): :attr:`Place.file` names it."""
    PASTED = "pasted"
    """A config pasted inside the log or report."""
    FREEZE = "freeze"
    """A ``pip freeze`` / requirements line."""
    TABLE = "table"
    """A ``pip list`` / ``conda list`` row."""
    LABELLED = "labelled"
    """An environment report (``collect_env``, ``transformers env``: ``Name: version``)."""
    BANNER = "banner"
    """DeepSpeed's start-up banner."""
    ENVIRONMENT = "environment"
    """The running interpreter's own packages (``--this-env``, ``dtypefix run``)."""


@dataclass(frozen=True)
class Place:
    """Where something was read."""

    origin: Origin
    file: str = ""
    """For :attr:`Origin.CONFIG`: the file's name (``ds_config.json``); empty otherwise."""

    @classmethod
    def of_config(cls, origin: str) -> Place:
        """The place of a parsed config, from :attr:`~dtypefix.matcher.configs.Config.origin` (a file name, or
        ``pasted`` for one found inside the log)."""
        return cls(Origin.PASTED) if origin == Origin.PASTED.value else cls(Origin.CONFIG, origin)

    @property
    def key(self) -> str:
        """The JSON ``source``: the file name of a config, else the origin's value."""
        return self.file or self.origin.value


@dataclass(frozen=True)
class FrameSeen:
    """A traceback frame a frame condition matched."""

    path: str
    """The file as printed, with ``/`` separators."""
    line: int
    function: str
    code: str = ""
    """The source line printed under the frame, when the condition asked about it (``code:``); else empty."""

    @property
    def short_path(self) -> str:
        """The path from the package down (what follows ``site-packages/``), the part a reader recognises."""
        return self.path.rsplit("site-packages/", 1)[-1]


@dataclass(frozen=True)
class ValueSeen:
    """A config value, package version or environment fact that was read and compared."""

    value: Any
    """As read (a bool, number, string or list); the renderers show it as JSON / YAML write it."""
    auto: Place | None = None
    """For a DeepSpeed ``"auto"`` resolved from elsewhere: where its value came from."""


@dataclass(frozen=True)
class TextSeen:
    """Text an error or log pattern matched: ``Type: first line`` of an exception, or the matched line."""

    text: str


Observation = FrameSeen | ValueSeen | TextSeen


@dataclass(frozen=True)
class Note:
    """A config that could not be read, shown with the answer (and failed by lint for an example)."""

    subject: str
    """The config's name as the user gave it (``ds_config.json``, ``config #1``)."""
    problem: str
    """The reader's reason, as :class:`~dtypefix.matcher.configs.ConfigError` words it (quoted by the renderers)."""
    line: int = 0
    """Where in the config, when known."""

    def __str__(self) -> str:
        where = f"{self.subject}:{self.line}" if self.line else self.subject
        return f"{where}: {self.problem}"
