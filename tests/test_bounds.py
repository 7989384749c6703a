"""Every version bound cites its source: bound_problems() over affected / fixed_in / bound_refs, and lint's use of it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from dtypefix.kbtools.bounds import bound_keys, bound_problems
from dtypefix.kbtools.canonical import canonical_text
from dtypefix.kbtools.lint import lint_paths
from dtypefix.matcher.catalog import builtin_kb_dir, load_catalog
from dtypefix.matcher.entry import KBEntry

PR = "https://github.com/deepspeedai/DeepSpeed/pull/5461"
COMMIT = "https://github.com/deepspeedai/DeepSpeed/commit/bc48371c5e1fb8fd70fc79285e66201dbb65679b"


@pytest.fixture(scope="module")
def base(catalog) -> KBEntry:
    return next(e for e in catalog.entries if e.kind == "family")


def _entry(base: KBEntry, affected=None, fixed_in=None, refs=None) -> KBEntry:
    return dataclasses.replace(base, affected=affected or {}, fixed_in=fixed_in or {}, bound_refs=refs or {})


def test_no_bounds_no_problems(base: KBEntry) -> None:
    assert bound_problems(_entry(base)) == []


def test_the_briefing_example_is_accepted(base: KBEntry) -> None:
    entry = _entry(
        base,
        affected={"deepspeed": ">=0.14.1,<0.14.3"},
        fixed_in={"deepspeed": "0.14.3"},
        refs={"deepspeed>=0.14.1": "https://github.com/deepspeedai/DeepSpeed/pull/5370", "deepspeed<0.14.3": PR},
    )
    assert bound_problems(entry) == []


def test_each_clause_needs_a_reference(base: KBEntry) -> None:
    entry = _entry(base, affected={"deepspeed": ">=0.14.1,<0.14.3"}, refs={"deepspeed<0.14.3": PR})
    assert bound_problems(entry) == [
        (
            "affected.deepspeed",
            "bound `deepspeed>=0.14.1` has no `bound_refs` item: cite the PR or commit that establishes it",
        )
    ]


def test_fixed_in_is_the_clause_below_it(base: KBEntry) -> None:
    assert bound_keys(_entry(base, fixed_in={"liger-kernel": "0.8.2"})) == [
        ("fixed_in.liger-kernel", "liger-kernel<0.8.2")
    ]
    problems = bound_problems(_entry(base, fixed_in={"liger-kernel": "0.8.2"}))
    assert [field for field, _ in problems] == ["fixed_in.liger-kernel"]
    assert bound_problems(_entry(base, fixed_in={"liger-kernel": "0.8.2"}, refs={"liger-kernel<0.8.2": COMMIT})) == []


def test_one_reference_serves_affected_and_fixed_in(base: KBEntry) -> None:
    entry = _entry(base, affected={"peft": "<0.6.0"}, fixed_in={"peft": "0.6.0"})
    assert [field for field, _ in bound_problems(entry)] == ["affected.peft"]  # reported once, not twice


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("==0.8.1", "liger-kernel==0.8.1"),
        ("!=1.4.*", "liger-kernel!=1.4.*"),
        ("<=1.14.0", "liger-kernel<=1.14.0"),
        ("~=0.5", "liger-kernel~=0.5"),
        ("> 0.3", "liger-kernel>0.3"),
    ],
)
def test_every_operator_is_a_clause(base: KBEntry, spec: str, key: str) -> None:
    assert bound_keys(_entry(base, affected={"liger-kernel": spec})) == [("affected.liger-kernel", key)]
    assert bound_problems(_entry(base, affected={"liger-kernel": spec}, refs={key: COMMIT})) == []


def test_names_and_spaces_are_normalised(base: KBEntry) -> None:
    entry = _entry(base, affected={"Liger_Kernel": ">= 0.4.0, < 0.5.3"})
    refs = {"liger-kernel>=0.4.0": COMMIT, "liger-kernel<0.5.3": COMMIT}
    assert bound_problems(dataclasses.replace(entry, bound_refs=refs)) == []


def test_stale_reference_is_reported(base: KBEntry) -> None:
    entry = _entry(base, affected={"deepspeed": "<0.12.3"}, refs={"deepspeed<0.12.3": COMMIT, "deepspeed<0.19.3": PR})
    assert bound_problems(entry) == [
        ("bound_refs.deepspeed<0.19.3", "no `affected` clause or `fixed_in` version states this bound")
    ]


@pytest.mark.parametrize(
    "url",
    [
        "http://github.com/deepspeedai/DeepSpeed/pull/5461",
        "https://github.com/deepspeedai/DeepSpeed/issues/5538",
        "https://github.com/deepspeedai/DeepSpeed",
        "not a url",
    ],
)
def test_reference_must_be_a_change_or_release(base: KBEntry, url: str) -> None:
    entry = _entry(base, fixed_in={"deepspeed": "0.14.3"}, refs={"deepspeed<0.14.3": url})
    assert [field for field, _ in bound_problems(entry)] == ["bound_refs.deepspeed<0.14.3"]


@pytest.mark.parametrize(
    "url",
    [
        PR,
        COMMIT,
        "https://github.com/pytorch/pytorch/releases/tag/v1.13.0",
        "https://github.com/pytorch/pytorch/blob/v1.9.0/torch/utils/data/sampler.py",
        "https://pytorch.org/blog/pytorch-1.13-release/",
    ],
)
def test_pull_commit_release_or_file_at_a_tag_is_accepted(base: KBEntry, url: str) -> None:
    assert bound_problems(_entry(base, fixed_in={"deepspeed": "0.14.3"}, refs={"deepspeed<0.14.3": url})) == []


def test_malformed_key_is_reported(base: KBEntry) -> None:
    entry = _entry(base, refs={"deepspeed 0.14.3": PR})
    assert [field for field, _ in bound_problems(entry)] == ["bound_refs.deepspeed 0.14.3"]


def test_every_shipped_bound_has_a_reference(catalog) -> None:
    problems = {e.id: bound_problems(e) for e in catalog.entries}
    assert {k: v for k, v in problems.items() if v} == {}
    assert sum(len(e.bound_refs) for e in catalog.entries) > 0


def test_lint_reports_a_bound_without_reference(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    (root / "private").mkdir(parents=True)
    source = builtin_kb_dir() / "deepspeed" / "zero3-offload-clip-scale-on-gpu.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["id"] = "DTF9002"
    del data["bound_refs"]["deepspeed<0.14.3"]
    path = root / "private" / "my-entry.yaml"
    path.write_text(canonical_text(data), encoding="utf-8")
    problems = [p for p in lint_paths([path], load_catalog(cache_dir=None)) if "`bound_refs`" in p.message]
    assert len(problems) == 1
    text = path.read_text(encoding="utf-8").splitlines()
    assert text[problems[0].line - 1].startswith("  deepspeed:")  # points at the affected spec
    assert "deepspeed<0.14.3" in problems[0].message
