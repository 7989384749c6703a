"""No regex reaches a reader: every example of every entry, rendered in both languages with --details, and every
entry page, are free of pattern syntax (evidence is worded by cli/evidence_words.py)."""

from __future__ import annotations

import re

import pytest

from dtypefix.cli.markdown import format_check, format_entry, format_report
from dtypefix.kbtools.lint import example_incident
from dtypefix.matcher import check
from dtypefix.matcher.explain import explain_incident

# Syntax that only a regex writes (`.*` is left out: prose names `torch.cuda.*` and PEP 440 `!=1.4.*`).
REGEX_SYNTAX = re.compile(r"\(\?P<|\(\?:|\(\?i\)|\\[dswbS.()\[\]]|\[\^|\|\w+\)\?|\.\+\?")


def _leaks(text: str) -> list[str]:
    # Code blocks quoted from entries (shell commands, Python) may hold backslashes; evidence and headings may not.
    outside_code = re.sub(r"```.*?```", "", text, flags=re.S)
    return [m.group(0) for m in REGEX_SYNTAX.finditer(outside_code)]


def test_no_regex_in_any_explanation(catalog) -> None:
    leaks = {}
    for entry in catalog.entries:
        for example in entry.examples:
            report = explain_incident(example_incident(example), catalog)
            text = format_report(report, "both", top=3, details=True)
            found = _leaks(text)
            if found:
                leaks[str(example.input.name)] = found[:3]
    assert leaks == {}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_regex_on_entry_pages(catalog, lang: str) -> None:
    leaks = {e.id: _leaks(format_entry(e, lang))[:3] for e in catalog.entries}
    assert {k: v for k, v in leaks.items() if v} == {}


def test_no_regex_in_check_output(catalog) -> None:
    report = check(
        configs=[
            (
                "ds.json",
                '{"zero_optimization": {"stage": 3, "zero_quantized_weights": true}, "bf16": {"enabled": true}}',
            )
        ],
        catalog=catalog,
    )
    assert report.matches and _leaks(format_check(report, "both", details=True)) == []
