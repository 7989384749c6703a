"""How well the first screen says where it broke (issue 20): on the blind sample (tests/blind20/) and the H100
recordings (recordings/h100-2026-11/, MANIFEST.yaml).

For multi-line positives (the log has frames, so a line can be named), on the English first screen
(``dtypefix explain`` without ``--details``):

- line + owner: a "Where" line names ``file:line`` and whose code it is; where the blind sample wrote down the
  failing line (``site``), the Where line must name that one. The Where line names the line that raised and, for a
  library's line, the line that called it (the user's own, or the other package's / the check's caller when the
  paste shows none of the user's frames): a collector who wrote down the caller's line where a library raised on
  the caller's argument (tests/blind28a's README) and one who wrote down the raising line are both answered by that
  screen, so either counts. A paste that ends before its error line is answered with the last line it reaches;
- operands: an "Operands" line names both sides with their dtypes or devices. Where the sample wrote down the
  values (``operands``), each must appear (as torch names them today: float32, bfloat16, cuda:0); an item that is
  no dtype or device and no word of the error message is an expression of the code the collector read (``big_neg``)
  and must appear as an expression; and the line must name two sides, each with a value or as such an expression
  (a message naming one dtype is answered by the tensor and the device or setting that refuses it; a side shown as
  "not int64" is named with all such a message says of its dtype: the screen cannot honestly say more). Where the
  sample wrote down nothing checkable (and on the H100 recordings), two sides with values are needed; a side that
  is a number literal (``-1e9`` written into a float16 tensor) is its own value;
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
from dtypefix.matcher.incident import build_incident

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
    """dtypes and devices the collector wrote down."""
    expressions: tuple[str, ...] = ()
    """Expressions of the code the collector wrote down as a side (``big_neg``)."""


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
        items = [str(v) for v in data.get("operands") or []]
        values = tuple(v for v in items if _is_value(v))
        # Not a dtype and not the message's own word for a side (``weight``, ``FP16 gradients``): an expression.
        message = _error_text(data["log"])
        expressions = tuple(v for v in items if not _is_value(v) and v not in message and v in data["log"])
        name = f"blind/{data['id']}"
        cases.append(Case(name, data["log"], data["kind"] == "positive", data.get("site"), values, expressions))
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


# Every dtype and device name torch, Triton and the samples print (Float8_e4m3fn, fp8e4nv, int8, Byte, mps...).
_VALUE = re.compile(
    r"^(?:c10::)?(?:float(?:16|32|64)?|half|double|bfloat16|Float8_\w+|float8_\w+|fp8\w+|u?int(?:8|16|32|64)|complex(?:32|64|128)|"
    r"byte|char|short|int|long|bool|cpu|cuda(?::\d+)?|mps|xpu(?::\d+)?|npu|meta)$",
    re.I,
)


def _is_value(value: str) -> bool:
    return bool(_VALUE.match(value))


def _error_text(log: str) -> str:
    """The error message as dtypefix reads it: where the message's own words for its sides are."""
    primary = build_incident(log).primary
    return primary.message if primary is not None else ""


def _line(screen: str, label: str) -> str:
    found = re.search(rf"^\*\*{label}:\*\* (.*)$", screen, re.MULTILINE)
    return found.group(1) if found else ""


_READABLE = re.compile(
    r"^(?:float(?:16|32|64)|bfloat16|u?int(?:8|16|32|64)|complex(?:32|64|128)|float8\w*|fp8\w+|bool|cpu|cuda(?::\d+)?|mps"
    r"|(?:xpu|npu|hpu|mps)(?::\d+)?|meta)$"
)
_NUMBER = re.compile(r"^`[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?`")
_NAMED_LINE = re.compile(r"`[^`]+:\d+`")
_OWNER_WORDS = (
    "your code",
    "your notebook cell",
    "an installed package",
    "the model repository's own code",
    "own code, run from a checkout",
    "inside torch",
)


_NOT = re.compile(r"(?<=[(（, ])not ([\w:.]+)(?: or [\w:.]+)*")


def _unlike(side: str) -> str:
    """``index (not int64)`` read as ``index (int64)``: the value the side is shown not to have counts as its value."""
    return _NOT.sub(lambda m: m[1] if _READABLE.match(m[1]) else m[0], side)


_CODE = re.compile(r"`[^`]*`")
# What a side that is the GPU a check refused adds after its device: the GPUs the log names and what the check needs
# (``compute device (cuda: Tesla T4, sm_75; needs sm_89+)``): the side's value is still ``cuda``.
_GPU = re.compile(r"(?<=\bcuda): [^()]*(?=\))")


def _sides(operands: str) -> int:
    """How many sides the Operands line names with a dtype or device (or as a number literal, its own value). A value
    read from the log may be followed by where it was set: ``precision (float16, from `--fp16` in the log)``."""
    count = 0
    for side in map(_unlike, operands.split(" · ")):
        # code (the side's expression, ``from `x.half()` at `run.py:3` ``) holds no bracket of the details
        details = _CODE.sub("`…`", side)
        values = re.findall(
            r"[(（](?:[^()（）]*, )?([\w:.]+)(?:, (?:not on the line|from `…` (?:at `…`|in the log)))?[)）]", details
        )
        count += any(_READABLE.match(v) for v in values) or bool(_NUMBER.match(side))
    return count


def evaluate(case: Case, catalog: Any) -> Outcome:
    report = explain(case.log, catalog=catalog)
    screen = format_report(report, "en")
    where = _line(screen, "Where")
    operands = _GPU.sub("", _line(screen, "Operands"))
    frames = sum(len(s.frames) for s in report.incident.stacks)
    multi_line = frames > 0 and case.log.strip().count("\n") > 0
    line_and_owner = bool(_NAMED_LINE.search(where)) and any(w in where for w in _OWNER_WORDS)
    if line_and_owner and case.site:
        # ``{file: ..., line: N}``, or ``file:line`` as one string (tests/blind28a writes it so)
        file, line = (case.site["file"], case.site["line"]) if isinstance(case.site, dict) else case.site.rsplit(":", 1)
        base = Path(str(file).replace("\\", "/")).name
        line_and_owner = f"{base}:{line}`" in where
    sides = _sides(operands)
    if case.operands or case.expressions:
        expected = [readable_value(v) for v in case.operands]
        values = all(re.search(rf"[ (（]{re.escape(v)}[)）, ，]", operands) for v in expected)
        shown = re.findall(r"`([^`]+)`", operands)
        expressions = all(any(e in s for s in shown) for e in case.expressions)
        named = values and expressions and sides + len(case.expressions) >= 2
    else:
        named = sides >= 2
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
