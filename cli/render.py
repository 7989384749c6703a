"""Markdown as HTML: the ``html`` format's page and the docs site (markdown-it-py, imported only when used)."""

from __future__ import annotations

__all__ = ["markdown_to_html"]

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
    from html import escape  # here: the HTML format is the only one that needs it

    from markdown_it import MarkdownIt

    # No raw HTML and no images: a page built from a log must never load anything from elsewhere.
    body = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image").render(markdown)
    return (
        f'<!doctype html>\n<html lang="{_HTML_LANG.get(lang, "en")}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n{body}</body></html>\n"
    )
