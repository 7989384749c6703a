"""How many corpus reports (tests/corpus/) dtypefix explains with the right entry first. Prints a table.

Run from the project root:  python bench/corpus_eval.py
"""

from __future__ import annotations

from pathlib import Path

import yaml

from dtypefix.matcher import explain
from dtypefix.matcher.catalog import load_catalog
from dtypefix.matcher.configs import ConfigError, parse_config

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"


def main() -> None:
    expected = yaml.safe_load((CORPUS / "expected.yaml").read_text(encoding="utf-8"))
    held = set(expected["held_out"])
    catalog = load_catalog(cache_dir=None)
    totals: dict[str, list[int]] = {"held out": [0, 0], "used as KB examples": [0, 0]}
    print("| report | kind | established cause | first match | right |\n| --- | --- | --- | --- | --- |")
    for path in sorted(CORPUS.glob("*.yaml")):
        if path.name == "expected.yaml":
            continue
        report = yaml.safe_load(path.read_text(encoding="utf-8"))
        text, configs = report["log"], []
        if (report.get("config") or "").strip():
            try:
                configs.append(parse_config(report["config"], "config"))
            except ConfigError:
                text = report["config"] + "\n" + text
        matches = explain(text, freeze=report.get("environment") or "", configs=configs, catalog=catalog).matches
        first = matches[0].entry.id if matches else "—"
        if report["kind"] == "negative":
            right = not matches
        else:
            right = bool(matches) and first in expected["keys"].get(report["key"], [])
        group = "held out" if report["id"] in held else "used as KB examples"
        totals[group][0] += right
        totals[group][1] += 1
        mark = "yes" if right else "no"
        print(
            f"| {report['id']}{' (held out)' if report['id'] in held else ''} | {report['kind']} | {report['key']} | {first} | {mark} |"
        )
    print()
    for group, (right, total) in totals.items():
        print(f"{group}: {right}/{total} right first")


if __name__ == "__main__":
    main()
