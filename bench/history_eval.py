"""Issue 22's measure: on held-out tracebacks whose fix was a library release (tests/blind22/), the share where
the fix-history answer names the fixing release or a later one for the right library, with and without a freeze.

"The answer" is what the first screen shows: for each of the first two library frames with a later change, the
change closest to the failing line. It is right when one of them is for the report's library and its release is
at or after the report's ``fixed_in``. "With a freeze" passes the version the reporter stated (``freeze``); the
versions inside the log are read in both runs, as dtypefix always does.

A report whose file says ``excluded:`` (why) is left out and counted: it became known to the work before the
measurement (for instance it was also picked as a development case).

Run:  python bench/history_eval.py [--sample tests/blind22 [--sample tests/blind22b]] [-v]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml
from packaging.version import Version

from dtypefix.matcher import explain
from dtypefix.matcher.history import Change, FrameHistory

_SHOWN = 2


def _best(frame: FrameHistory) -> Change:
    order = {"line": 0, "near": 1, "function": 2}
    return min(frame.changes, key=lambda c: order[c.closeness])


def _answer(history: tuple[FrameHistory, ...]) -> list[tuple[str, str]]:
    return [(f.library, _best(f).release) for f in history[:_SHOWN]]


def _right(answer: list[tuple[str, str]], library: str, fixed_in: str) -> bool:
    return any(lib == library and Version(rel) >= Version(fixed_in) for lib, rel in answer)


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
        frozen = _answer(explain(case["log"], freeze=case.get("freeze", "")).history)
        rows.append((path.stem, case, plain, frozen))
    n = len(rows)
    right_plain = sum(_right(p, c["library"], str(c["fixed_in"])) for _, c, p, _ in rows)
    right_frozen = sum(_right(f, c["library"], str(c["fixed_in"])) for _, c, _, f in rows)
    stated = sum(1 for _, c, _, _ in rows if c.get("freeze"))
    print(f"{'report':22} {'library':13} {'fixed_in':9} {'without a freeze':28} with a freeze")
    for name, case, plain, frozen in rows:
        show = lambda a: ", ".join(f"{lib} {rel}" for lib, rel in a) or "-"  # noqa: E731
        print(f"{name:22} {case['library']:13} {case['fixed_in']!s:9} {show(plain):28} {show(frozen)}")
    print()
    print(f"reports: {n} ({stated} state the installed version); left out: {len(excluded)}")
    for line in excluded:
        print(f"  left out {line}")
    print(f"right without a freeze: {right_plain}/{n} = {right_plain / n:.0%}")
    print(f"right with a freeze:    {right_frozen}/{n} = {right_frozen / n:.0%}")


if __name__ == "__main__":
    main()
