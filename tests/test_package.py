"""Packaging: the wheel holds every module and every KB file; the public API is exported."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import dtypefix.matcher

ROOT = Path(__file__).resolve().parents[1]


def test_exported_members_are_complete() -> None:
    public = {name for name in dir(dtypefix.matcher) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(dtypefix.matcher, name)).__name__ == "module"}
    assert set(dtypefix.matcher.__all__) == public - modules - {"annotations"}


@pytest.mark.slow
def test_wheel_contains_every_module_and_kb_file(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("dtypefix-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = set()
    for folder, package in (("matcher", "dtypefix/matcher"), ("kbtools", "dtypefix/kbtools"), ("cli", "dtypefix/cli")):
        expected |= {f"{package}/{p.relative_to(ROOT / folder).as_posix()}" for p in (ROOT / folder).rglob("*.py")}
    kb = ROOT / "kb"
    expected |= {
        f"dtypefix/kb/{p.relative_to(kb).as_posix()}"
        for p in kb.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    missing = sorted(expected - names)
    assert missing == []
    assert not any(n.startswith(("kb/", "matcher/", "kbtools/", "cli/")) for n in names), (
        "no top-level kb/matcher/cli modules"
    )
