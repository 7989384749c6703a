"""Real reports with established causes (tests/corpus/): held-out reports must be explained by the right entry.

The corpus is a sample of public issue threads; `expected.yaml` maps each established cause to the entries
that explain it. The held-out reports are used by no KB entry, so they measure how well entries generalise;
`python bench/corpus_eval.py` prints the whole table.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dtypefix.matcher import explain
from dtypefix.matcher.catalog import load_catalog
from dtypefix.matcher.configs import ConfigError, parse_config

CORPUS = Path(__file__).parent / "corpus"
EXPECTED = yaml.safe_load((CORPUS / "expected.yaml").read_text(encoding="utf-8"))
CATALOG = load_catalog(cache_dir=None)


def evaluate(report: dict) -> list[str]:
    """Ranked entry ids for one corpus report; a `config` that is not a config (a launch command) joins the log."""
    text = report["log"]
    configs = []
    if (report.get("config") or "").strip():
        try:
            configs.append(parse_config(report["config"], "config"))
        except ConfigError:
            text = report["config"] + "\n" + text
    result = explain(text, freeze=report.get("environment") or "", configs=configs, catalog=CATALOG)
    return [m.entry.id for m in result.matches]


def _load(name: str) -> dict:
    data: dict = yaml.safe_load((CORPUS / f"{name}.yaml").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", EXPECTED["held_out"])
def test_held_out_report_is_explained_by_the_right_entry(name: str) -> None:
    report = _load(name)
    ranked = evaluate(report)
    if report["kind"] == "negative":
        assert ranked == [], f"{name} is not a dtype/device failure but matched {ranked}"
    else:
        wanted = EXPECTED["keys"][report["key"]]
        assert ranked and ranked[0] in wanted, f"{name}: ranked {ranked[:3]}, expected one of {wanted}"


def test_no_negative_report_is_claimed() -> None:
    claimed = {}
    for path in sorted(CORPUS.glob("*.yaml")):
        if path.name == "expected.yaml":
            continue
        report = yaml.safe_load(path.read_text(encoding="utf-8"))
        if report["kind"] == "negative":
            ranked = evaluate(report)
            if ranked:
                claimed[report["id"]] = ranked
    assert claimed == {}
