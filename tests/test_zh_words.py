"""Chinese output holds no English label, heading or origin word: every KB example is rendered in zh, with every
piece of evidence (``--details``), and searched for the English side of the renderers' own strings.

What the user's input and the entries' own prose contribute (code spans, the entry's text) is taken out first: a
quoted ``RuntimeError`` or ``ZeRO-3`` in Chinese prose is right; ``（launch command）`` or ``affected:`` is not.
"""

from __future__ import annotations

import re

import pytest

from dtypefix.cli.i18n import strings
from dtypefix.cli.markdown import fill, format_check, format_report
from dtypefix.kbtools.lint import example_incident
from dtypefix.matcher import KBEntry, Report, explain_incident
from dtypefix.matcher.catalog import load_catalog
from dtypefix.matcher.entry import Example
from dtypefix.matcher.observation import Origin

_CATALOG = load_catalog(cache_dir=None)
_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_FIELD = re.compile(r"\{[^}]*\}")
_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")


def _english_fragments() -> list[str]:
    """The English side of every string that reads differently in Chinese, cut at its placeholders."""
    found: set[str] = set()
    for en, zh in strings().values():
        if en == zh:
            continue
        for part in _FIELD.split(_CODE.sub(" ", en)):
            words = part.strip(" .,:;()\"'")
            # Two words or more: a lone word (``config``, ``Error``) is as likely a quote from the input.
            if " " in words and re.search(r"[a-z]{3}", words) and not words.startswith("dtypefix"):
                found.add(words)
    found.update(strings()[key][0] for key in ("affected", "fixed_in"))
    found.update(en for key, (en, _) in strings().items() if key.startswith("origin.") and key != "origin.traceback")
    return sorted(found, key=len, reverse=True)


_FRAGMENTS = _english_fragments()


def _own_text(entry: KBEntry) -> list[str]:
    texts = [entry.title.zh, entry.cause.zh, *(s.zh for s in entry.fix), *(s.zh for s in entry.does_not_help)]
    return [t for t in texts if t] + ([entry.notes.zh] if entry.notes else [])


def _leaks(text: str, report: Report) -> list[str]:
    for match in report.matches:
        for own in _own_text(match.entry):
            text = text.replace(fill(own, match.groups), " ")
    text = _CODE.sub(" ", text)
    text = _LINK.sub(" ", text)  # reference titles are the sources' own
    return [f for f in _FRAGMENTS if re.search(rf"(?<![A-Za-z]){re.escape(f)}(?![A-Za-z])", text)]


def _cases() -> list[tuple[str, Example]]:
    return [(entry.id, example) for entry in _CATALOG.active for example in entry.examples]


def test_every_origin_and_every_fragment_is_worded_in_both_languages() -> None:
    table = strings()
    for origin in Origin:
        en, zh = table[f"origin.{origin.name.lower()}"]
        assert en and zh, origin
    assert "launch command" in _FRAGMENTS and "affected" in _FRAGMENTS  # the search below looks for these


@pytest.mark.parametrize(("entry_id", "example"), _cases(), ids=lambda v: v if isinstance(v, str) else v.input.name)
def test_chinese_output_has_no_english_words(entry_id: str, example: Example) -> None:
    report = explain_incident(example_incident(example), _CATALOG)
    text = format_report(report, "zh", top=3, details=True)
    assert not _leaks(text, report), f"{example.input}: English in the Chinese output: {_leaks(text, report)}"


def test_chinese_check_output_has_no_english_words() -> None:
    from dtypefix.matcher import check

    config = '{"zero_optimization": {"stage": 3, "zero_quantized_weights": true}, "bf16": {"enabled": true}}'
    report = check(configs=[("ds.json", config)], flags="--bf16 True", catalog=_CATALOG)
    text = format_check(report, "zh", details=True)
    assert report.matches and not _leaks(text, report), _leaks(text, report)


def test_an_unreadable_config_is_framed_in_chinese() -> None:
    from dtypefix.matcher import explain

    report = explain(
        "RuntimeError: mat1 and mat2 must have the same dtype\n", configs=[("ds.json", "{not json")], catalog=_CATALOG
    )
    (note,) = report.incident.notes
    assert note.subject == "ds.json" and str(note).startswith("ds.json")
    zh = format_report(report, "zh")
    assert "无法读取 ds.json" in zh and "- ds.json" not in zh
    assert f"- {note}" in format_report(report, "en")  # English reads as before


def test_chinese_entry_pages_have_no_english_words() -> None:
    from dtypefix.cli.markdown import example_groups, format_entry

    for entry in _CATALOG.active:
        text = format_entry(entry, "zh")
        groups = example_groups(entry)  # what show fills the entry's placeholders with
        for own in [*_own_text(entry), *entry.messages]:  # the wording section quotes the messages as printed
            text = text.replace(fill(own, groups), " ")
        text = _LINK.sub(" ", _CODE.sub(" ", text))
        text = re.sub(r"```text\n.*?```", " ", text, flags=re.S)  # the error patterns, as a template
        leaks = [f for f in _FRAGMENTS if re.search(rf"(?<![A-Za-z]){re.escape(f)}(?![A-Za-z])", text)]
        assert not leaks, f"{entry.id}: {leaks}"
