"""``--format term``: the Markdown drawn by rich for a terminal (the default on one); colour obeys NO_COLOR."""

from __future__ import annotations

from typing import TextIO

from .base import Document, Format

__all__ = ["FORMAT"]


def _write(document: Document, stream: TextIO) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    Console(file=stream, soft_wrap=False).print(Markdown(document.markdown()))


FORMAT = Format("term", "rich terminal view (the default on a terminal)", _write)
