"""The common ``dtypefix explain`` command lines, run without building the typer application.

A cold ``explain`` is what users run most, and importing typer and click and building the command from its
annotations cost about a third of its start-up: as much as dtypefix's own work on a typical log. The command lines
this module takes are the plain ones (``explain LOG``, ``explain -`` or stdin, ``--format``, ``--lang``, ``--top``,
``--details``, ``--config``, ``--freeze``, ``--this-env``, ``--kb``) with values it can check itself; anything else
(``--help``, a value it would have to refuse, an option it does not know, another command) goes to the typer
application, so every usage error and help text is still typer's own. Both paths call the same
:func:`~.explain_command.explain_command`; ``tests/test_fastpath.py`` runs the same command lines through both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .formats import FORMATS
from .settings import Lang

__all__ = ["ExplainLine", "explain_line"]

_REPEATED = {"--freeze": "freeze", "--config": "config", "-c": "config", "--kb": "kb"}
_SINGLE = {"--lang": "lang", "-l": "lang", "--format": "fmt", "-f": "fmt", "--top": "top", "-n": "top"}
_FLAGS = {"--this-env": "this_env", "--details": "details"}


@dataclass
class ExplainLine:
    """An ``explain`` command line, read into the arguments of :func:`~.explain_command.explain_command`."""

    file: str | None = None
    freeze: list[str] = field(default_factory=list)
    config: list[str] = field(default_factory=list)
    this_env: bool = False
    lang: Lang | None = None
    fmt: str | None = None
    top: int = 3
    details: bool = False
    kb: list[Path] = field(default_factory=list)


def _single(line: ExplainLine, name: str, value: str) -> bool:
    """Set a one-valued option; False when the value is one typer would refuse (it says why, not us)."""
    if name == "lang":
        if value not in Lang.__members__:
            return False
        line.lang = Lang(value)
    elif name == "fmt":
        if value not in FORMATS:
            return False
        line.fmt = value
    else:
        if not (value.isascii() and value.isdigit()) or int(value) < 1:
            return False
        line.top = int(value)
    return True


def explain_line(argv: list[str]) -> ExplainLine | None:
    """``argv`` (without the program name) read as a plain ``explain`` command line, or None to let typer run it."""
    if not argv or argv[0] != "explain":
        return None
    line = ExplainLine()
    files: list[str] = []
    rest = argv[1:]
    index = 0
    while index < len(rest):
        token = rest[index]
        index += 1
        if token == "-" or not token.startswith("-"):
            files.append(token)
            continue
        name, equals, value = token.partition("=")
        if name in _FLAGS and not equals:
            setattr(line, _FLAGS[name], True)
            continue
        if name not in _REPEATED and name not in _SINGLE:
            return None  # --help, --, an unknown or abbreviated option: typer decides
        if not equals:
            if index >= len(rest):
                return None
            value = rest[index]
            index += 1
        if not value or (value.startswith("-") and value != "-"):
            return None
        if name in _REPEATED:
            attribute = _REPEATED[name]
            getattr(line, attribute).append(Path(value) if attribute == "kb" else value)
        elif not _single(line, _SINGLE[name], value):
            return None
    if len(files) > 1:
        return None
    line.file = files[0] if files else None
    return line
