"""Docs: generated KB docs are current, every command is documented with help and an example."""

from __future__ import annotations

from pathlib import Path

import pytest

from dtypefix.cli.app import app, main
from dtypefix.cli.docs import generate_docs, kb_pages, to_html_site

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["explain", "run", "check", "search", "show", "new", "lint", "fmt", "docs", "report", "scan"]


def test_generated_kb_docs_are_current(catalog) -> None:
    pages = kb_pages(catalog)
    assert "census.md" in pages
    stale = [
        p
        for p, text in pages.items()
        if not (ROOT / "docs/kb" / p).is_file() or (ROOT / "docs/kb" / p).read_text(encoding="utf-8") != text
    ]
    assert stale == [], "docs/kb is stale: run `dtypefix docs` and commit the result"


def test_generated_schema_and_docs_are_current() -> None:
    """kb/schema.json's match block, docs/json-output.schema.json and the generated blocks of the docs come from
    the registries (cli/generated.py); a kind or a JSON field added without `dtypefix docs` fails here."""
    from dtypefix.cli.generated import generated_files

    files = generated_files(ROOT)
    assert set(files) == {
        "kb/schema.json",
        "docs/json-output.schema.json",
        "docs/entry-format.md",
        "docs/json-output.md",
        "census/operands.json",
        "census/raises.json",
        "census/calls.json",
    }
    stale = [name for name, text in files.items() if (ROOT / name).read_text(encoding="utf-8") != text]
    assert stale == [], f"{stale} stale: run `dtypefix docs` and commit the result"


def test_every_command_is_registered() -> None:
    main(["--help"])  # registers the commands
    assert sorted(c.name or c.callback.__name__ for c in app.registered_commands) == sorted(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(cli, command: str) -> None:
    result = cli(command, "--help")
    assert result.code == 0
    assert "Example:" in result.out, result.out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_is_in_the_readme(command: str) -> None:
    assert f"`dtypefix {command}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_html_site_links_work_offline(catalog, tmp_path: Path) -> None:
    site = to_html_site(generate_docs(catalog.entries))
    assert "index.html" in site
    for name, html in site.items():
        for target in __import__("re").findall(r'href="([^"#:]+\.html)"', html):
            assert (Path(name).parent / target).as_posix().replace("entries/../", "") in site, (name, target)


def test_coverage_table_lists_every_entry(catalog) -> None:
    coverage = generate_docs(catalog.entries)["coverage.md"]
    for entry in catalog.entries:
        assert f"[{entry.id}]" in coverage
