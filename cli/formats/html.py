"""``--format html``: a standalone page of the same Markdown, for pasting into a wiki."""

from __future__ import annotations

from typing import TextIO

from ..render import markdown_to_html
from .base import Document, Format

__all__ = ["FORMAT"]


def _write(document: Document, stream: TextIO) -> None:
    stream.write(markdown_to_html(document.markdown(), lang=document.lang))


FORMAT = Format("html", "a standalone HTML page", _write)
