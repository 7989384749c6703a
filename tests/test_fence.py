"""Input text never becomes Markdown: no heading, link or HTML from a log (issue 24 item 7)."""

from __future__ import annotations

import json
import re

import pytest
from markdown_it import MarkdownIt

from dtypefix.cli.fence import code_block, code_span, fill, plain

MARKDOWN = MarkdownIt("commonmark", {"html": False})
INJECTIONS = [
    "x\n```\n# Injected heading\n[click](https://evil.example/)\n```",
    "odd ` [click](https://evil.example/) `` ``` <https://evil.example/>",
    "`` ` ``` ```` [click](https://evil.example/)",
    "````\n~~~\n# Injected heading",
    "<a href='https://evil.example/'>x</a> &lt;b&gt; *em* _em_ ![img](https://evil.example/p.png)",
]


def _no_live_markup(html: str) -> None:
    assert "<a " not in html and "<h1" not in html and "<img" not in html and "<em>" not in html, html


@pytest.mark.parametrize("text", INJECTIONS)
def test_a_code_span_holds_any_text(text: str) -> None:
    html = MARKDOWN.render(f"the error {code_span(text)} here\n")
    _no_live_markup(html)
    assert html.count("<code>") == 1


@pytest.mark.parametrize("text", INJECTIONS)
def test_a_code_block_holds_any_text(text: str) -> None:
    html = MARKDOWN.render("\n".join(["# Error", "", *code_block(text, "te`xt"), "", "after"]) + "\n")
    _no_live_markup(html.replace("<h1>Error</h1>", ""))
    assert html.count("<pre>") == 1 and html.rstrip().endswith("<p>after</p>")


@pytest.mark.parametrize("text", INJECTIONS)
def test_plain_text_stays_plain(text: str) -> None:
    html = MARKDOWN.render(f"- GPU: {plain(text)}\n")
    _no_live_markup(html)
    assert "<code>" not in html


def test_a_code_span_shows_its_content_unchanged() -> None:
    for text in ["a`b", "`lead", "trail`", " both ", "plain", "``"]:
        html = MARKDOWN.render(code_span(text))
        shown = re.search(r"<code>(.*)</code>", html, re.S)
        assert shown is not None and shown.group(1) == text.replace("&", "&amp;"), (text, html)


def test_fill_refences_a_template_span_and_escapes_prose() -> None:
    placeholder = re.compile(r"\{\{\s*(\w+)\s*\}\}")
    template = "reads `query.dtype: {{q}}` and prints {{q}}; `unrelated`"
    filled = fill(template, placeholder, lambda m: "x` [click](https://evil.example/) `")
    html = MARKDOWN.render(filled)
    _no_live_markup(html)
    assert "<code>unrelated</code>" in html


def test_no_match_answer_with_odd_backticks_has_no_link(cli) -> None:  # type: ignore[no-untyped-def]
    log = "ValueError: odd ` [click](https://evil.example/) ` ``` x\n"
    for fmt in ("md", "html"):
        result = cli("explain", "--format", fmt, stdin=log.encode())
        assert result.code == 1, result.err
        html = result.out if fmt == "html" else MARKDOWN.render(result.out)
        assert 'href="https://evil.example/' not in html, html


def test_report_error_block_cannot_be_closed_by_the_message(cli) -> None:  # type: ignore[no-untyped-def]
    log = (
        "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n    f('```')\n"
        "ValueError: boom\n```\n# Injected\n[click](https://evil.example/)\n"
        "torchrun t.py --note `[x](https://evil.example/)`\n"
    )
    result = cli("report", "--format", "md", stdin=log.encode())
    assert result.code == 0, result.err
    html = MARKDOWN.render(result.out)
    assert "<h1>Injected" not in html and 'href="https://evil.example/' not in html, result.out
    assert json.loads(cli("report", "--format", "json", stdin=log.encode()).out)["error"]
