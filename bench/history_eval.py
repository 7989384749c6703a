"""Issue 22's measure: on held-out tracebacks whose fix was a library release (tests/blind22/), the share where
the fix-history answer names the fixing release or a later one for the right library, with and without a freeze.

"The answer" is what the first screen shows: for each of the two library frames it names, the change closest to
the failing line. It is right when one of them is for the report's library and its release is at or after the
report's ``fixed_in``. "With a freeze" passes the version the reporter stated (``freeze``); the versions inside the
log are read in both runs, as dtypefix always does. A report whose bug no release fixed (``fixed_in: null``) is
counted apart: there the answer must not claim a change to the failing line or next to it.

A report whose file says ``excluded:`` (why) is left out and counted: it became known to the work before the
measurement (for instance it was also picked as a development case).

Run:  python bench/history_eval.py [--sample tests/blind22 [--sample tests/blind22b]] [-v]
      (the development set: --sample tests/data/history_dev)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml
from packaging.version import Version

from dtypefix.matcher import explain
from dtypefix.matcher.history import FrameHistory, best_change, shown


def _answer(history: tuple[FrameHistory, ...]) -> list[tuple[str, str, str]]:
    return [(f.library, best_change(f).release, best_change(f).closeness) for f in shown(history)]


def _own(answer: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The answer less its file-level leads (changes to another function beside the failing one)."""
    return [a for a in answer if a[2] != "file"]


def _right(answer: list[tuple[str, str, str]], library: str, fixed_in: object) -> bool:
    if fixed_in is None:  # no release fixed it: right when nothing claims the failing line or its neighbours
        return not any(lib == library and close in ("line", "near") for lib, _, close in answer)
    return any(lib == library and Version(rel) >= Version(str(fixed_in)) for lib, rel, _ in answer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=Path, action="append", help="a sample folder (repeatable; tests/blind22)")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    samples = args.sample or [Path(__file__).resolve().parent.parent / "tests" / "blind22"]
    rows = []
    excluded = []
    for path in sorted(p for sample in samples for p in sample.glob("*.yaml")):
        case = yaml.safe_load(path.read_text(encoding="utf-8"))
        if case.get("excluded"):
            excluded.append(f"{path.parent.name}/{path.stem}: {case['excluded']}")
            continue
        plain = _answer(explain(case["log"]).history)
        frozen = _answer(explain(case["log"], freeze=case.get("freeze") or "").history)
        rows.append((path.stem, case, plain, frozen))
    fixed = [r for r in rows if r[1]["fixed_in"] is not None]
    n = len(fixed)
    right_plain = sum(_right(p, c["library"], c["fixed_in"]) for _, c, p, _ in fixed)
    right_frozen = sum(_right(f, c["library"], c["fixed_in"]) for _, c, _, f in fixed)
    stated = sum(1 for _, c, _, _ in fixed if c.get("freeze"))
    print(f"{'report':22} {'library':13} {'fixed_in':9} {'without a freeze':36} with a freeze")
    for name, case, plain, frozen in rows:
        show = lambda a: ", ".join(f"{lib} {rel} ({close})" for lib, rel, close in a) or "-"  # noqa: E731
        print(f"{name:22} {case['library']:13} {case['fixed_in']!s:9} {show(plain):36} {show(frozen)}")
    print()
    unfixed = [r for r in rows if r[1]["fixed_in"] is None]
    if unfixed:
        honest = sum(_right(p, c["library"], None) and _right(f, c["library"], None) for _, c, p, f in unfixed)
        print(f"reports no release fixed: {len(unfixed)}, answered without a false claim: {honest}")
    print(f"reports: {n} ({stated} state the installed version); left out: {len(excluded)}")
    for line in excluded:
        print(f"  left out {line}")
    print(f"right without a freeze: {right_plain}/{n} = {right_plain / n:.0%}")
    print(f"right with a freeze:    {right_frozen}/{n} = {right_frozen / n:.0%}")
    # The same, counting only changes to the failing function itself (a "file" lead, a later change to a function
    # beside it, is the weaker tier): what the answers are worth without it.
    strict_plain = sum(_right(_own(p), c["library"], c["fixed_in"]) for _, c, p, _ in fixed)
    strict_frozen = sum(_right(_own(f), c["library"], c["fixed_in"]) for _, c, _, f in fixed)
    print(f"without the file-level leads: {strict_plain}/{n} = {strict_plain / n:.0%} without a freeze, ", end="")
    print(f"{strict_frozen}/{n} = {strict_frozen / n:.0%} with one")


if __name__ == "__main__":
    main()
