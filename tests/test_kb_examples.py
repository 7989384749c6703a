"""Every entry's examples rank it first; its counter-examples do not. One test runs them all (semgrep-style).

Adding an entry with its example files adds its tests here without touching Python.
"""

from __future__ import annotations

import pytest

from dtypefix.kbtools.lint import run_example
from dtypefix.matcher.catalog import load_catalog
from dtypefix.matcher.entry import Example

_CATALOG = load_catalog(cache_dir=None)


def _cases(kind: str) -> list[tuple[str, Example]]:
    cases = []
    for entry in _CATALOG.active:
        for example in getattr(entry, kind):
            cases.append((entry.id, example))
    return cases


def _rank(example: Example) -> list[str]:
    return [m.entry.id for m in run_example(example, _CATALOG)]


def test_catalog_loads_without_problems() -> None:
    assert _CATALOG.problems == ()


@pytest.mark.parametrize(
    ("entry_id", "example"), _cases("examples"), ids=lambda v: v if isinstance(v, str) else v.input.name
)
def test_example_ranks_its_entry_first(entry_id: str, example: Example) -> None:
    ranked = _rank(example)
    assert ranked, f"{example.input}: nothing matched"
    assert ranked[0] == entry_id, f"{example.input}: ranked {ranked[:3]}, expected {entry_id} first"


@pytest.mark.parametrize(
    ("entry_id", "example"), _cases("counter_examples"), ids=lambda v: v if isinstance(v, str) else v.input.name
)
def test_counter_example_does_not_rank_entry_first(entry_id: str, example: Example) -> None:
    ranked = _rank(example)
    assert not ranked or ranked[0] != entry_id, f"{example.input}: {entry_id} ranked first"


def test_every_entry_has_two_examples_and_a_counter_example() -> None:
    for entry in _CATALOG.active:
        assert len(entry.examples) >= 2, entry.id
        assert len(entry.counter_examples) >= 1, entry.id
