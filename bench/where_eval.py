"""How well the first screen says where it broke (issue 20): on the blind sample (tests/blind20/) and the H100
recordings (recordings/h100-2026-11/, MANIFEST.yaml).

For multi-line positives (the log has frames, so a line can be named), on the English first screen
(``dtypefix explain`` without ``--details``):

- line + owner: a "Where" line names ``file:line`` and whose code it is; where the blind sample wrote down the
  failing line (``site``), the named line must be that one;
- operands: an "Operands" line names both sides with their dtypes or devices; where the sample wrote down the two
  values (``operands``), both must appear (as torch names them today: float32, bfloat16, cuda:0);
- specific cause first: the first match is a cause entry, not a family entry;

and for look-alikes (recordings that should abstain): any answer at medium or high confidence.

Run from a checkout with dtypefix installed:  python bench/where_eval.py [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dtypefix.cli.markdown import format_report
from dtypefix.cli.where_words import readable_value
from dtypefix.matcher import explain
from dtypefix.matcher.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]
BLIND = ROOT / "tests" / "blind20"
RECORDINGS = Path("/work/shared/recordings/h100-2026-11")


@dataclass(frozen=True)
class Case:
    name: str
    log: str
    positive: bool
    site: dict[str, Any] | str | None
    operands: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    case: Case
    multi_line: bool
    line_and_owner: bool
    operands: bool
    specific: bool
    answered: str
    """First match and confidence, or ``-``."""
    where: str


def _blind(folder: Path = BLIND) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data.get("excluded"):  # became known to the work before the measurement (the file says how)
            continue
        values = tuple(v for v in data.get("operands") or [] if _is_value(v))
        cases.append(Case(f"blind/{data['id']}", data["log"], data["kind"] == "positive", data.get("site"), values))
    return cases


def _recordings() -> list[Case]:
    manifest = yaml.safe_load((RECORDINGS / "MANIFEST.yaml").read_text(encoding="utf-8"))
    return [
        Case(
            f"h100/{Path(item['log']).stem}",
            (RECORDINGS / item["log"]).read_text(encoding="utf-8", errors="replace"),
            item["expected"] == "diagnose",
            None,
            (),
        )
        for item in manifest["logs"]
    ]


_VALUE = re.compile(r"^(?:c10::)?(?:Float|Half|BFloat16|Double|float|half|double|bfloat16|cpu|cuda(?::\d+)?)$", re.I)


def _is_value(value: str) -> bool:
    return bool(_VALUE.match(value))


def _line(screen: str, label: str) -> str:
    found = re.search(rf"^\*\*{label}:\*\* (.*)$", screen, re.MULTILINE)
    return found.group(1) if found else ""


_READABLE = re.compile(
    r"^(?:float(?:16|32|64)|bfloat16|int(?:32|64)|float8\w*|cpu|cuda(?::\d+)?|mps|xpu(?::\d+)?|meta)$"
)
_NAMED_LINE = re.compile(r"`[^`]+:\d+`")
_OWNER_WORDS = (
    "your code",
    "your notebook cell",
    "an installed package",
    "the model repository's own code",
    "inside torch",
)


def evaluate(case: Case, catalog: Any) -> Outcome:
    report = explain(case.log, catalog=catalog)
    screen = format_report(report, "en")
    where = _line(screen, "Where")
    operands = _line(screen, "Operands")
    frames = sum(len(s.frames) for s in report.incident.stacks)
    multi_line = frames > 0 and case.log.strip().count("\n") > 0
    line_and_owner = bool(_NAMED_LINE.search(where)) and any(w in where for w in _OWNER_WORDS)
    if line_and_owner and case.site:
        # ``{file: ..., line: N}``, or ``file:line`` as one string (tests/blind28a writes it so)
        file, line = (case.site["file"], case.site["line"]) if isinstance(case.site, dict) else case.site.rsplit(":", 1)
        base = Path(str(file).replace("\\", "/")).name
        line_and_owner = f"{base}:{line}`" in where
    if case.operands:
        expected = [readable_value(v.removeprefix("c10::")) for v in case.operands]
        named = all(re.search(rf"[ (（]{re.escape(v)}[)）, ，]", operands) for v in expected)
    else:
        values = re.findall(r"[(（](?:[^()（）]*, )?([\w:.]+)(?:, not on the line)?[)）]", operands)
        named = sum(bool(_READABLE.match(v)) for v in values) >= 2
    first = report.matches[0] if report.matches else None
    specific = first is not None and not first.entry.is_family
    answered = f"{first.entry.id} {first.confidence}" if first else "-"
    return Outcome(case, multi_line, line_and_owner, named, specific, answered, where)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures only, as JSON")
    parser.add_argument("--only", choices=("blind", "h100"), help="evaluate one set")
    parser.add_argument("--sample", type=Path, default=BLIND, help="the blind sample's folder (default tests/blind20)")
    args = parser.parse_args(argv)
    catalog = load_catalog([ROOT / "kb"])
    figures: dict[str, Any] = {}
    for label, load in ((args.sample.name, lambda: _blind(args.sample)), ("h100", _recordings)):
        if args.only and (label == "h100") != (args.only == "h100"):
            continue
        cases = load()
        outcomes = [evaluate(c, catalog) for c in cases]
        positives = [o for o in outcomes if o.case.positive and o.multi_line]
        lookalikes = [o for o in outcomes if not o.case.positive]
        loud = [o for o in lookalikes if o.answered.endswith(("medium", "high"))]
        figures[label] = {
            "cases": len(outcomes),
            "multi_line_positives": len(positives),
            "line_and_owner": sum(o.line_and_owner for o in positives),
            "operands": sum(o.operands for o in positives),
            "specific_first": sum(o.specific for o in positives),
            "lookalikes": len(lookalikes),
            "lookalikes_medium_or_high": len(loud),
        }
        if not args.json:
            print(f"## {label}\n")
            print("| case | line+owner | operands | specific | first answer | Where |")
            print("| --- | --- | --- | --- | --- | --- |")
            for o in outcomes:
                if o.case.positive and not o.multi_line:
                    continue
                mark = {True: "yes", False: "no"}
                print(
                    f"| {o.case.name} | {mark[o.line_and_owner]} | {mark[o.operands]} | {mark[o.specific]} | "
                    f"{o.answered} | {o.where[:90]} |"
                )
            print()
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for label, f in figures.items():
            n = f["multi_line_positives"] or 1
            print(
                f"{label}: {f['multi_line_positives']} multi-line positives; line+owner {f['line_and_owner']} "
                f"({100 * f['line_and_owner'] // n} %), operands {f['operands']} ({100 * f['operands'] // n} %), "
                f"specific cause first {f['specific_first']} ({100 * f['specific_first'] // n} %); look-alikes "
                f"{f['lookalikes']}, at medium/high {f['lookalikes_medium_or_high']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
