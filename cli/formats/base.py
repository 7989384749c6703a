"""What every output format shares: the document a command hands over, and the format record the registry holds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from dtypefix.matcher import Report

__all__ = ["Document", "Format"]


@dataclass(frozen=True)
class Document:
    """One command's answer, ready for any format: each builds only what it needs (``--format json`` never renders
    Markdown, and never loads rich)."""

    markdown: Callable[[], str]
    """The Markdown every human format shows."""
    data: Callable[[], Any]
    """The JSON document (contract 1.x for ``explain``, ``check`` and ``run``)."""
    report: Report | None = None
    """The matcher's answer, for formats that point at places in the user's code (``github``); None for ``show``,
    ``search`` and ``report``, which such a format prints as Markdown."""
    lang: str = "en"
    """``en``, ``zh`` or ``both``: the language of the Markdown, and of what a format words itself."""


@dataclass(frozen=True)
class Format:
    """One ``--format`` choice."""

    name: str
    help: str
    """A few words for ``--format``'s help."""
    write: Callable[[Document, TextIO], None]
