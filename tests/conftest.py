"""Shared fixtures: the built-in catalog (loaded once, no cache) and a CLI runner that captures output."""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from dtypefix.matcher.catalog import Catalog, load_catalog

DATA = Path(__file__).parent / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/ from the current output")


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """Compare text with tests/golden/<name> as a whole string; --update-golden rewrites the file."""

    def check(name: str, text: str) -> None:
        path = Path(__file__).parent / "golden" / name
        if request.config.getoption("--update-golden"):
            path.write_text(text, encoding="utf-8")
            return
        assert path.exists(), f"{path} missing: run pytest --update-golden"
        assert text == path.read_text(encoding="utf-8"), f"{path} differs: review, then run pytest --update-golden"

    return check


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog(cache_dir=None)


@pytest.fixture(scope="session")
def small_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout with one entry, the census rows and no mined census: for tests of what ``docs`` does with its
    folders, which do not depend on the KB's size. On the whole checkout, ``docs`` explains every mined message
    (half a minute)."""
    import shutil

    root = tmp_path_factory.mktemp("checkout")
    repo = Path(__file__).resolve().parents[1]
    shutil.copy(repo / "pyproject.toml", root / "pyproject.toml")
    (root / "kb" / "family").mkdir(parents=True)
    for name in ("ids.txt", "schema.json"):
        shutil.copy(repo / "kb" / name, root / "kb" / name)
    shutil.copy(repo / "kb" / "family" / "mat1-mat2-dtype.yaml", root / "kb" / "family")
    shutil.copytree(repo / "kb" / "family" / "mat1-mat2-dtype", root / "kb" / "family" / "mat1-mat2-dtype")
    (root / "census").mkdir()
    for rows in (repo / "census").glob("*.yaml"):
        shutil.copy(rows, root / "census" / rows.name)
    return root


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user cache, no private KB, English and no colour unless a test says otherwise."""
    monkeypatch.setenv("DTYPEFIX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DTYPEFIX_KB", raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@dataclass
class Result:
    code: int
    out: str
    err: str


class _Stdin(io.TextIOWrapper):
    def isatty(self) -> bool:
        return False


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Run ``dtypefix ARGS`` in-process with ``stdin`` bytes; returns exit code and captured output."""
    from dtypefix.cli.app import main

    def run(*args: str, stdin: bytes | None = None) -> Result:
        data = stdin if stdin is not None else b""
        monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(data), encoding="utf-8"))
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


__all__ = ["DATA", "Result", "read"]
os.environ.setdefault("COLUMNS", "100")
