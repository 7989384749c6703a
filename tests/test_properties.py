"""Property-based: any text, and any mutation of real tracebacks, goes through the whole pipeline safely.

No exception escapes, JSON output is valid, and the answer does not depend on line endings or ANSI colour.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtypefix.cli.json_output import report_json
from dtypefix.matcher import explain
from dtypefix.matcher.catalog import load_catalog

CATALOG = load_catalog(cache_dir=None)
SEEDS = [e.input.read_text(encoding="utf-8") for entry in CATALOG.active for e in entry.examples][:60]


def _ids(text: str) -> list[str]:
    return [m.entry.id for m in explain(text, catalog=CATALOG).matches]


def _colour(text: str) -> str:
    return "".join(f"\x1b[3{i % 7}m{line}\x1b[0m\n" for i, line in enumerate(text.splitlines()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=3000))
def test_arbitrary_text_never_raises_and_serialises(text: str) -> None:
    report = explain(text, catalog=CATALOG)
    json.loads(json.dumps(report_json(report)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(SEEDS),
    st.lists(st.tuples(st.integers(min_value=0, max_value=4000), st.text(max_size=20)), max_size=5),
    st.integers(min_value=0, max_value=3),
)
def test_mutated_real_tracebacks_never_raise(seed: str, edits: list[tuple[int, str]], cut: int) -> None:
    text = seed
    for position, insert in edits:
        at = position % (len(text) + 1)
        text = text[:at] + insert + text[at:]
    if cut:
        text = text[: len(text) * cut // 4]
    report = explain(text, catalog=CATALOG)
    json.loads(json.dumps(report_json(report)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SEEDS))
def test_line_endings_and_colour_do_not_change_the_answer(seed: str) -> None:
    expected = _ids(seed)
    assert _ids(seed.replace("\n", "\r\n")) == expected
    assert _ids(_colour(seed)) == expected


# --- the joined-message scan finds what a search per message finds --------------------------------------------
_WORDS = st.sampled_from(["dtype", "Half", "Float", "cuda:0", "cpu", "mat1", "\n", " ", "'", "!", "x"])
_MESSAGE = st.lists(_WORDS, min_size=1, max_size=8).map("".join)
_PATTERNS = [
    r"mat1.*Half",
    r"^Half",
    r"Float$",
    r"(?:\s*$|\n)",
    r"cpu[^!]*cuda:0",
    r"^dtype[\s\S]*x$",
    r"\Acpu",
    r"Half\b",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_MESSAGE, min_size=1, max_size=40, unique=True), st.sampled_from(_PATTERNS))
def test_the_joined_scan_agrees_with_a_search_per_message(messages: list[str], pattern: str) -> None:
    from pathlib import Path

    from dtypefix.matcher.conditions import ErrorCondition
    from dtypefix.matcher.incident import build_incident

    text = "".join(
        f'Traceback (most recent call last):\n  File "a.py", line {i}, in f\nRuntimeError: {m!r}\n'
        for i, m in enumerate(messages)
    )
    incident = build_incident(text)
    condition = ErrorCondition.parse({"message": pattern, "type": "RuntimeError"}, Path("p.yaml"), "errors[0]")
    naive = next(
        (message for _, message in incident.exceptions if condition.message.search(message)),
        None,
    )
    hit = condition.find(incident)
    assert (hit is None) == (naive is None)
    if hit is not None and naive is not None:
        assert hit.seen.text.endswith(naive.splitlines()[0][:200])
