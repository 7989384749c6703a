"""Output formats: the ``--format`` enum mapped to functions that turn Markdown or data into text.

Markdown is produced first for every human format; the terminal and HTML views only present it. rich and
markdown-it-py are imported inside the functions that need them, so ``--format json`` never loads them.
"""

from __future__ import annotations

import enum
import html
import sys
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["OutputFormat", "emit", "markdown_to_html", "print_markdown"]


class OutputFormat(str, enum.Enum):
    """``--format`` choices."""

    md = "md"
    term = "term"
    json = "json"
    html = "html"

    @classmethod
    def resolve(cls, chosen: OutputFormat | None, stream: TextIO) -> OutputFormat:
        """No choice means the terminal view on a TTY and plain Markdown in a pipe."""
        if chosen is not None:
            return chosen
        return cls.term if stream.isatty() else cls.md


# Inline and self-contained: the page is pasted into wikis and opened offline, so it loads nothing.
_STYLE = (
    "body{max-width:60rem;margin:1.5rem auto;padding:0 1rem;font:16px/1.5 system-ui,-apple-system,'Segoe UI',"
    "'Noto Sans','PingFang SC','Microsoft YaHei',sans-serif;color:#1f2328}"
    "code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}"
    "pre{background:#f6f8fa;padding:.75rem;overflow-x:auto;border-radius:6px}"
    "h1{font-size:1.5rem}h2{font-size:1.25rem}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;"
    "padding:.25rem .5rem}"
)


# ``--lang`` -> the page's BCP 47 language; ``both`` prints English first, so the page says English.
_HTML_LANG = {"en": "en", "zh": "zh-CN", "both": "en"}


def markdown_to_html(markdown: str, title: str = "dtypefix", lang: str = "en") -> str:
    """A standalone HTML page for pasting into a wiki (markdown-it-py, CommonMark + tables), in ``lang`` (a
    screen reader and a browser's font choice for Chinese go by ``<html lang>``)."""
    from markdown_it import MarkdownIt

    # No raw HTML and no images: a page built from a log must never load anything from elsewhere.
    body = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image").render(markdown)
    return (
        f'<!doctype html>\n<html lang="{_HTML_LANG.get(lang, "en")}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n{body}</body></html>\n"
    )


def print_markdown(markdown: str, fmt: OutputFormat, stream: TextIO | None = None, lang: str = "en") -> None:
    """Write ``markdown`` as Markdown, HTML or rich terminal output (colour obeys NO_COLOR)."""
    out = stream or sys.stdout
    if fmt is OutputFormat.html:
        out.write(markdown_to_html(markdown, lang=lang))
    elif fmt is OutputFormat.term:
        from rich.console import Console
        from rich.markdown import Markdown

        Console(file=out, soft_wrap=False).print(Markdown(markdown))
    else:
        out.write(markdown)


def emit(
    fmt: OutputFormat | None,
    stream: TextIO,
    *,
    markdown: Callable[[], str],
    data: Callable[[], Any],
    lang: str = "en",
) -> None:
    """The one place ``--format`` picks a renderer: JSON from ``data``, every other format from ``markdown``."""
    chosen = OutputFormat.resolve(fmt, stream)
    if chosen is OutputFormat.json:
        from .json_output import to_json

        stream.write(to_json(data()))
    else:
        print_markdown(markdown(), chosen, stream, lang)
