"""The keyword prefilter never drops a match: ranking from candidates equals ranking over the whole KB."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dtypefix.matcher.catalog import load_catalog
from dtypefix.matcher.configs import ConfigError, parse_config
from dtypefix.matcher.explain import explain_incident
from dtypefix.matcher.incident import build_incident
from dtypefix.matcher.prefilter import choose_keywords, leading_text, required_words
from dtypefix.matcher.score import score_entries

CATALOG = load_catalog(cache_dir=None)
CORPUS = Path(__file__).parent / "corpus"


def _inputs() -> list[tuple[str, str]]:
    found = [(e.input.name, e.input.read_text(encoding="utf-8")) for entry in CATALOG.active for e in entry.examples]
    found += [
        (e.input.name, e.input.read_text(encoding="utf-8")) for entry in CATALOG.active for e in entry.counter_examples
    ]
    for path in sorted(CORPUS.glob("*.yaml")):
        if path.name != "expected.yaml":
            found.append((path.name, yaml.safe_load(path.read_text(encoding="utf-8"))["log"]))
    return found


@pytest.mark.parametrize(("name", "text"), _inputs(), ids=lambda v: v if len(v) < 60 else "")
def test_candidates_rank_like_the_whole_kb(name: str, text: str) -> None:
    incident = build_incident(text)
    fast = [(m.entry.id, m.score) for m in explain_incident(incident, CATALOG).matches]
    full = [(m.entry.id, m.score) for m in score_entries(CATALOG.active, incident)]
    assert fast == full, name


def test_keywords_are_whole_required_words() -> None:
    assert "dtype" in required_words(r"expected mat1 and mat2 to have the same dtype, but got: (?P<l>\S+)")
    assert required_words(r"Half|BFloat16") == []  # only alternatives: no word is required
    assert "expect" not in required_words(r"expect(ed)? scalar type")  # a word cut by an optional part is not whole
    assert choose_keywords([["dtype", "mat1"], ["dtype", "scalar"], ["dtype"]]) == ["mat1", "scalar", "dtype"]


def test_configs_do_not_change_candidate_selection() -> None:
    text = "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16"
    try:
        config = parse_config(
            '{"bf16": {"enabled": true}, "zero_optimization": {"stage": 3, "zero_quantized_weights": true}}', "ds.json"
        )
    except ConfigError:  # pragma: no cover
        pytest.fail("config did not parse")
    incident = build_incident(text, configs=[config])
    assert [m.entry.id for m in explain_incident(incident, CATALOG).matches] == [
        m.entry.id for m in score_entries(CATALOG.active, incident)
    ]


@pytest.mark.parametrize(
    ("pattern", "lead"),
    [
        (r"Unknown mixed_precision mode: (?P<mode>\w+)", ("Unknown mixed_precision mode: ", False)),
        (r"(?i)Bfloat16 is only supported on GPUs", ("Bfloat16 is only supported on GPUs", True)),
        (r"expected (scalar type|dtype) Half", ("expected ", False)),
        (r"\bmat1 and mat2", ("", False)),
        (r"(?P<a>\w+) must match", ("", False)),
    ],
)
def test_leading_text_is_the_literal_start_of_every_match(pattern: str, lead: tuple[str, bool]) -> None:
    assert leading_text(pattern) == lead
