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
    # The data the matcher reads at run time: the fix-history index and the operand roles.
    expected |= {
        f"dtypefix/matcher/{p.relative_to(ROOT / 'matcher').as_posix()}"
        for p in (ROOT / "matcher" / "data").rglob("*")
        if p.is_file()
    }
    expected |= {"dtypefix/census/operands.json", "dtypefix/census/raises.json", "dtypefix/census/calls.json"}
    missing = sorted(expected - names)
    assert missing == []
    assert not any(n.startswith(("kb/", "matcher/", "kbtools/", "cli/")) for n in names), (
        "no top-level kb/matcher/cli modules"
    )


def _floors(requirements: list[str]) -> dict[str, str]:
    """``{name: lowest version}`` of requirements written ``name>=X`` (or ``name>=X,<Y``)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    floors = {}
    for line in requirements:
        requirement = Requirement(line)
        lows = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        if lows:
            floors[canonicalize_name(requirement.name)] = lows[0]
    return floors


def test_lowest_constraints_pin_every_declared_floor() -> None:
    """CI's second run installs constraints/lowest.txt: each runtime floor (and the test tools that matter) must be
    pinned there at exactly the version pyproject.toml declares, or the floor is claimed but never tested."""
    from packaging.utils import canonicalize_name

    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = {}
    for line in (root / "constraints" / "lowest.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name.strip())] = version.strip()
    from packaging.version import Version

    def same(pin: str | None, low: str) -> bool:
        return pin is not None and Version(pin) == Version(low)

    runtime = _floors(project["dependencies"])
    assert runtime and all(same(pins.get(name), low) for name, low in runtime.items()), (runtime, pins)
    tests = _floors(project["optional-dependencies"]["test"])
    for name in ("pytest", "hypothesis", "numpy"):
        assert same(pins.get(name), tests[name]), (name, tests[name], pins.get(name))
