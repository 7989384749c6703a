"""Commands that do not surprise (issue 23, part 4): exit codes that agree with the README, commands that edit the
KB or its docs working on a checkout (found, or named with --kb-root) and refusing otherwise, the packages line,
``<html lang>``, placeholder reference URLs, and what the README says the sample is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from dtypefix.kbtools.canonical import canonical_text
from dtypefix.kbtools.lint import placeholder_url

ROOT = Path(__file__).resolve().parents[1]
MAT1 = b"RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::Half\n"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A small clone: the project file, the ledger, the schema and one area of the KB (no census)."""
    root = tmp_path / "clone"
    (root / "kb").mkdir(parents=True)
    (root / "docs").mkdir()
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    for name in ("ids.txt", "schema.json"):
        shutil.copy(ROOT / "kb" / name, root / "kb" / name)
    shutil.copytree(ROOT / "kb" / "family", root / "kb" / "family")
    return root


def test_show_of_an_unknown_id_exits_1_as_the_readme_says(cli) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "| `explain`, `search`, `show` | a cause (an entry) was found | none was found |" in readme
    result = cli("show", "DTF999")
    assert result.code == 1
    assert "no entry 'DTF999'" in result.err and "Traceback" not in result.err
    assert cli("show", "DTF001", "--format", "md").code == 0


@pytest.mark.parametrize("command", [["docs"], ["docs", "--check"], ["lint"], ["fmt"], ["fmt", "--check"]])
def test_kb_commands_refuse_outside_a_checkout(cli, tmp_path: Path, monkeypatch, command: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli(*command)
    assert result.code == 2
    assert "checkout" in result.err and "--kb-root" in result.err and len(result.err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []  # nothing written: no ./docs/kb in an unrelated folder


def test_docs_works_on_the_checkout_it_is_run_in(cli, checkout: Path, monkeypatch) -> None:
    monkeypatch.chdir(checkout / "kb" / "family")  # anywhere inside the clone
    assert cli("docs").code == 0
    pages = sorted(p.name for p in (checkout / "docs" / "kb" / "entries").glob("*.md"))
    family = sorted(
        f"{yaml.safe_load(p.read_text(encoding='utf-8'))['id']}.md" for p in (checkout / "kb" / "family").glob("*.yaml")
    )
    assert pages == family  # the clone's entries, not the installed KB's
    assert not (checkout / "docs" / "kb" / "census.md").exists()  # this clone has no census/
    monkeypatch.chdir(ROOT.parent)
    checked = cli("docs", "--check", "--kb-root", str(checkout))
    assert checked.code == 0 and str(checkout) in checked.err


def test_docs_of_a_checkout_keeps_its_census(cli, monkeypatch, tmp_path: Path, small_checkout: Path) -> None:
    """census.md is one of the pages, not "stale, to be removed" (the whole project's pages are compared in
    tests/test_docs.py)."""
    out = tmp_path / "pages"
    monkeypatch.chdir(tmp_path)
    assert cli("docs", "--out", str(out), "--kb-root", str(small_checkout)).code == 0
    assert (out / "census.md").is_file()
    result = cli("docs", "--check", "--out", str(out), "--kb-root", str(small_checkout))
    assert result.code == 0, result.out + result.err


def test_kb_root_that_is_not_a_checkout_is_refused(cli, tmp_path: Path) -> None:
    result = cli("docs", "--kb-root", str(tmp_path))
    assert result.code == 2 and "not a dtypefix checkout" in result.err


def test_lint_without_paths_checks_the_checkout_found(cli, checkout: Path, monkeypatch) -> None:
    monkeypatch.chdir(checkout)
    result = cli("lint")
    count = len(list((checkout / "kb" / "family").glob("*.yaml")))
    assert f"{count} entries" in result.err and str(checkout / "kb") in result.err


def test_fmt_never_rewrites_an_installed_kb(cli, tmp_path: Path, monkeypatch) -> None:
    installed = tmp_path / "site-packages" / "dtypefix" / "kb"
    shutil.copytree(ROOT / "kb" / "family", installed / "family")
    monkeypatch.setattr("dtypefix.cli.checkout.builtin_kb_dir", lambda: installed)
    result = cli("fmt", str(installed / "family"))
    assert result.code == 2 and "installed KB" in result.err


def test_new_finds_the_checkout_above(cli, checkout: Path, monkeypatch) -> None:
    monkeypatch.chdir(checkout / "kb" / "family")
    monkeypatch.delenv("DTYPEFIX_KB", raising=False)
    message = "ValueError: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."
    made = cli("new", "--area", "deepspeed", "--title", "Found from below", "--message", message)
    assert made.code == 0, made.err
    assert (checkout / "kb" / "deepspeed" / "found-from-below.yaml").is_file()


def test_packages_line_lists_the_training_stack(cli, tmp_path: Path) -> None:
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("jinja2==3.1.4\nmarkupsafe==2.1.5\npygments==2.18.0\ntorch==2.13.0\n", encoding="utf-8")
    out = cli("explain", "--freeze", str(freeze), "--format", "md", stdin=MAT1).out
    line = next(row for row in out.splitlines() if "packages:" in row)
    assert "packages: torch 2.13.0 (+3 not shown)" in line and "jinja2" not in line
    freeze.write_text("jinja2==3.1.4\nmarkupsafe==2.1.5\n", encoding="utf-8")
    zh = cli("explain", "--freeze", str(freeze), "--format", "md", "--lang", "zh", stdin=MAT1).out
    assert "包版本：没有训练相关的包（另有 2 个未列出）" in zh and "jinja2" not in zh


def test_run_lists_this_environments_stack_not_its_tools(cli) -> None:
    import sys

    code = "raise RuntimeError('expected mat1 and mat2 to have the same dtype, but got: float != c10::Half')"
    result = cli("run", "--format", "md", "--", sys.executable, "-c", code)
    line = next(row for row in result.err.splitlines() if "packages:" in row)
    assert "pygments" not in line and "markdown-it-py" not in line and "not shown)" in line


@pytest.mark.parametrize(("lang", "expected"), [("en", "en"), ("zh", "zh-CN"), ("both", "en")])
def test_html_says_its_language(cli, lang: str, expected: str) -> None:
    for command in (["explain"], ["show", "DTF001"], ["search", "fp16"]):
        out = cli(*command, "--format", "html", "--lang", lang, stdin=MAT1).out
        assert f'<html lang="{expected}">' in out, command


def test_lint_refuses_placeholder_reference_urls(cli, tmp_path: Path) -> None:
    assert placeholder_url("https://github.com/OWNER/REPO/issues/0")
    assert placeholder_url("https://github.com/deepspeedai/DeepSpeed/issues/0")
    assert placeholder_url("https://example.com/bug")
    assert not placeholder_url("https://github.com/deepspeedai/DeepSpeed/issues/7775")
    root = tmp_path / "kb"
    source = ROOT / "kb" / "family" / "device-mismatch.yaml"
    shutil.copytree(source.with_suffix(""), root / "private" / "copied")
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["id"] = "DTF901"
    data["references"][0]["url"] = "https://github.com/pytorch/pytorch/issues/0"
    (root / "private" / "copied.yaml").write_text(canonical_text(data), encoding="utf-8")
    result = cli("lint", str(root / "private" / "copied.yaml"))
    assert result.code == 1 and "references[0].url: a placeholder" in result.out


def test_readme_says_what_the_sample_is() -> None:
    sample = (ROOT / "examples" / "zeropp-bf16.log").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(sample.splitlines()) == 1 and "the one error line the report quotes" in readme
    assert "a real report" not in readme
