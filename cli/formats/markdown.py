"""``--format md``: the Markdown itself, the source of truth of every human view (the default in a pipe)."""

from __future__ import annotations

from typing import TextIO

from .base import Document, Format

__all__ = ["FORMAT"]


def _write(document: Document, stream: TextIO) -> None:
    stream.write(document.markdown())


FORMAT = Format("md", "Markdown (the default in a pipe)", _write)
