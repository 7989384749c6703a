"""The shipped KB passes lint; lint rejects each kind of bad entry, pointing at file:line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from dtypefix.kbtools.canonical import canonical_text
from dtypefix.kbtools.lint import lint_paths
from dtypefix.matcher.catalog import builtin_kb_dir, load_catalog


def test_shipped_kb_is_clean(catalog) -> None:
    problems = lint_paths([builtin_kb_dir()], catalog)
    assert [str(p) for p in problems] == []


@pytest.fixture
def private_kb(tmp_path: Path) -> Path:
    """A private KB holding one valid copy of the mat1/mat2 family entry under a new id."""
    root = tmp_path / "kb"
    (root / "private").mkdir(parents=True)
    source = builtin_kb_dir() / "family" / "mat1-mat2-dtype.yaml"
    shutil.copytree(source.with_suffix(""), root / "private" / "my-entry")
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["id"] = "DTF9001"
    data["kind"] = "cause"
    (root / "private" / "my-entry.yaml").write_text(canonical_text(data), encoding="utf-8")
    return root


def _edit(root: Path, change) -> Path:
    path = root / "private" / "my-entry.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(canonical_text(data), encoding="utf-8")
    return path


def _lint(root: Path) -> list[str]:
    catalog = load_catalog([root], cache_dir=None)
    return [str(p) for p in lint_paths([root], catalog)]


def test_broken_regex_is_rejected(private_kb: Path) -> None:
    _edit(private_kb, lambda d: d["match"]["errors"][0].__setitem__("message", "mat1 (unclosed"))
    problems = _lint(private_kb)
    assert any("my-entry.yaml:" in p and "RE2 cannot compile" in p for p in problems), problems


@pytest.mark.parametrize("pattern", [r"(?=mat1)mat1", r"(a+)\1", r"(?<!x)mat1"])
def test_regex_without_linear_time_engine_is_rejected(private_kb: Path, pattern: str) -> None:
    _edit(private_kb, lambda d: d["match"]["errors"][0].__setitem__("message", pattern))
    assert any("RE2 cannot compile" in p for p in _lint(private_kb))


def test_catastrophic_backtracking_pattern_runs_in_linear_time(private_kb: Path) -> None:
    # (a+)+$ is the classic exponential pattern for backtracking engines; RE2 accepts and runs it linearly.
    from dtypefix.matcher.regex import compile_pattern

    assert compile_pattern(r"(a+)+$").search("a" * 50_000 + "!") is None


def test_example_won_by_another_entry_is_rejected(private_kb: Path) -> None:
    # Make the private entry's own examples lose: its anchor weight drops below the built-in family entry's.
    def change(d):
        for item in d["match"]["errors"]:
            item["weight"] = 0.5

    _edit(private_kb, change)
    problems = _lint(private_kb)
    assert any("ranks DTF001" in p and "first" in p for p in problems), problems


def test_missing_chinese_is_rejected(private_kb: Path) -> None:
    _edit(private_kb, lambda d: d["explanation"]["cause"].__setitem__("zh", "TODO"))
    problems = _lint(private_kb)
    assert any("explanation.cause.zh: no Chinese text" in p for p in problems), problems


def test_duplicate_id_is_rejected(private_kb: Path) -> None:
    _edit(private_kb, lambda d: d.__setitem__("id", "DTF001"))
    catalog = load_catalog([private_kb], cache_dir=None)
    problems = [str(p) for p in lint_paths([builtin_kb_dir(), private_kb], catalog)]
    assert any("DTF001" in p and "also used by" in p for p in problems), problems


def test_non_canonical_file_is_rejected(private_kb: Path) -> None:
    path = private_kb / "private" / "my-entry.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("severity: error", "severity:   error"), encoding="utf-8")
    problems = _lint(private_kb)
    assert any("not in canonical form" in p for p in problems), problems


def test_reference_must_be_a_url(private_kb: Path) -> None:
    _edit(private_kb, lambda d: d["references"][0].__setitem__("url", "https://not a url"))
    problems = _lint(private_kb)
    assert any("references" in p for p in problems), problems


def test_schema_problem_points_to_line(private_kb: Path) -> None:
    path = _edit(private_kb, lambda d: d.__setitem__("severity", "fatal"))
    problems = _lint(private_kb)
    line = next(
        i for i, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text.startswith("severity:")
    )
    assert any(f"my-entry.yaml:{line}: severity" in p for p in problems), problems


def test_private_entry_reusing_a_builtin_id_is_rejected(private_kb: Path) -> None:
    _edit(private_kb, lambda d: d.__setitem__("id", "DTF003"))
    problems = _lint(private_kb)
    assert any("DTF003 is also used by" in p and "device-mismatch.yaml" in p for p in problems), problems
