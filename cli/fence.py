"""Putting input text into Markdown without letting it become Markdown.

Every view (Markdown, the terminal through rich, HTML through markdown-it-py, the ready-to-paste ``report``) is
rendered from Markdown, and much of what it shows was written by whoever produced the log: error messages, code
lines, launch flags, config files, package versions, GPU names. A message holding a line of three backticks
closes a fixed ```` ``` ```` fence and what follows it becomes live Markdown (a heading, a link); an odd number of
backticks closes a code span early. So input text reaches Markdown only through these functions:

- :func:`code_span` and :func:`code_block` pick a fence longer than any backtick run inside (CommonMark's own
  rule), so nothing inside can close it; a span is one line, since block structure (a heading, a fence) is read
  before spans and a line break inside a span would end it;
- :func:`plain` escapes what would start inline Markdown (links, autolinks, emphasis, HTML, entities) in text
  shown as prose;
- :func:`fill` puts values into a trusted template (a KB entry's ``{{name}}`` placeholders), each the right way
  for where its placeholder stands: inside one of the template's code spans, the whole span is fenced again
  around the value; outside, the value is escaped.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["code_block", "code_span", "fill", "plain"]

_BACKTICKS = re.compile(r"`+")
# Every ASCII character that can start or end an inline construct, or a table cell (GFM), in CommonMark; an
# underscore between two letters or digits cannot (``ds_config.json`` stays as it is).
_INLINE_SYNTAX = re.compile(r"([\\`*\[\]<>!&|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
# A code span as the KB's authors write them: a run of backticks, content, the same run (templates are trusted
# and short, so the lazy match is fine here; input text never goes through this pattern).
_TEMPLATE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def _longest_run(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def _one_line(text: str) -> str:
    return " ".join(text.splitlines()) if "\n" in text or "\r" in text else text


def code_span(text: str) -> str:
    """``text`` as inline code on one line, fenced by more backticks than its longest run.

    A space pads the content when it starts or ends with a backtick or a space: CommonMark removes exactly one
    such space on each side, so the content reads as given.
    """
    text = _one_line(text)
    fence = "`" * (_longest_run(text) + 1)
    if text[:1] in ("`", " ") or text[-1:] in ("`", " "):
        return f"{fence} {text} {fence}"
    return f"{fence}{text}{fence}"


def code_block(text: str, info: str = "") -> list[str]:
    """``text`` as a fenced code block (its lines), the fence longer than any backtick run inside.

    ``info`` is a language name (``text``, ``json``, ``yaml``); anything but word characters is dropped, since a
    backtick in a backtick fence's info string would make the line ordinary text.
    """
    fence = "`" * max(3, _longest_run(text) + 1)
    return [fence + re.sub(r"[^\w+-]", "", info), *text.rstrip("\n").split("\n"), fence]


def plain(text: str) -> str:
    """``text`` shown as prose: one line, every character that could start a link, emphasis, HTML or an entity
    escaped with a backslash (which every CommonMark renderer, rich's included, shows as the character)."""
    return _INLINE_SYNTAX.sub(r"\\\1", _one_line(text))


def fill(template: str, placeholder: re.Pattern[str], value: Callable[[re.Match[str]], str]) -> str:
    """Replace each ``placeholder`` in the Markdown ``template`` with ``value(match)``, safely for its place.

    Inside a code span of the template the span is rebuilt with :func:`code_span` around the filled content;
    elsewhere the value goes in through :func:`plain`.
    """

    def prose(part: str) -> str:
        return placeholder.sub(lambda m: plain(value(m)), part)

    out: list[str] = []
    position = 0
    for span in _TEMPLATE_SPAN.finditer(template):
        out.append(prose(template[position : span.start()]))
        content = span.group(2)
        if placeholder.search(content):
            out.append(code_span(placeholder.sub(value, content)))
        else:
            out.append(span.group(0))
        position = span.end()
    out.append(prose(template[position:]))
    return "".join(out)
