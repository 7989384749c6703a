"""Output formats: one module per ``--format`` choice, found through :data:`FORMATS`.

A command hands over a :class:`~.base.Document` (Markdown, JSON data and the report, each built only when asked)
and :func:`emit` gives it to the chosen format. Adding a format is one module with its :class:`~.base.Format` and
its line in :data:`FORMATS`; ``--format``'s choices and help follow.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TextIO

from . import github, html, json, markdown, term
from .base import Document, Format

__all__ = ["FORMATS", "Document", "Format", "choose", "emit"]

FORMATS: Mapping[str, Format] = MappingProxyType(
    {f.name: f for f in (markdown.FORMAT, term.FORMAT, json.FORMAT, html.FORMAT, github.FORMAT)}
)


def choose(name: str | None, stream: TextIO) -> Format:
    """No choice means the terminal view on a TTY and plain Markdown in a pipe."""
    if name is not None:
        return FORMATS[name]
    return FORMATS["term"] if stream.isatty() else FORMATS["md"]


def emit(name: str | None, stream: TextIO, document: Document) -> None:
    """The one place ``--format`` picks a renderer."""
    choose(name, stream).write(document, stream)
