"""Words that agree with the evidence printed beside them (issue 23, part 2)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dtypefix.cli.markdown import format_check, format_entry, format_report
from dtypefix.matcher.catalog import Catalog
from dtypefix.matcher.explain import check, explain_incident, incident_from

ROOT = Path(__file__).resolve().parents[1]
KB = ROOT / "kb"
FSDP2_LOG = KB / "fsdp" / "fsdp2-lora-adapters-fp32-with-bf16-base" / "twinkle-182.log"


def _explain(catalog: Catalog, text: str, lang: str = "en", details: bool = False, **inputs) -> str:
    return format_report(explain_incident(incident_from(text, **inputs), catalog), lang, details=details)


def test_check_with_both_precisions_does_not_say_some_evidence_failed(catalog: Catalog) -> None:
    config = '{"fp16": {"enabled": true}, "bf16": {"enabled": true}, "zero_optimization": {"stage": 2}}'
    report = check(configs=[("ds.json", config)], catalog=catalog)
    assert report.matches[0].entry.id == "DTF216"
    for lang, some_failed in (("en", "some does not"), ("zh", "另一部分不成立")):
        text = format_check(report, lang)
        assert some_failed not in text
        assert "✘" not in text  # indeed nothing failed
    assert "all of this cause's own evidence in the input holds" in format_check(report, "en")


def test_no_promise_of_inputs_below_when_none_is_listed(catalog: Catalog) -> None:
    report = explain_incident(incident_from(FSDP2_LOG.read_text(encoding="utf-8")), catalog)
    assert report.matches[0].entry.id == "DTF356" and report.deciders == ()
    for lang in ("en", "zh"):
        text = format_report(report, lang)
        assert "the inputs below" not in text and "补充下面提到的输入" not in text
    assert "the input does not show the rest" in format_report(report, "en")


@pytest.mark.parametrize("area", ["deepspeed", "fsdp", "peft", "accelerate"])
def test_confidence_words_match_what_is_printed(catalog: Catalog, area: str) -> None:
    """Over real example logs: a promise of inputs below comes with the list of inputs; "some does not" comes
    with a failed piece of evidence."""
    for log in sorted((KB / area).glob("*/*.log"))[:12]:
        text = format_report(explain_incident(incident_from(log.read_text(encoding="utf-8")), catalog), "en", top=1)
        first = text.split("\n---\n")[0]
        if "the inputs below would" in first:
            assert "**To decide between the candidates, add:**" in first, log
        if "some does not" in first:
            assert "✘" in format_report(
                explain_incident(incident_from(log.read_text(encoding="utf-8")), catalog), "en", top=1, details=True
            ), log


def test_this_env_is_called_this_environment(catalog: Catalog) -> None:
    text = _explain(
        catalog, FSDP2_LOG.read_text(encoding="utf-8"), details=True, environment="peft==0.13.0\ntorch==2.5.1\n"
    )
    assert "(in this environment)" in text
    assert "pip freeze / requirements line" not in text
    zh = _explain(
        catalog,
        FSDP2_LOG.read_text(encoding="utf-8"),
        "zh",
        details=True,
        environment="peft==0.13.0\ntorch==2.5.1\n",
    )
    assert "（当前环境）" in zh
    # A --freeze file still says where it was read.
    frozen = _explain(catalog, FSDP2_LOG.read_text(encoding="utf-8"), details=True, freeze="peft==0.13.0\n")
    assert "pip freeze / requirements line" in frozen


def test_device_fix_does_not_send_the_reader_to_a_bracket_that_is_not_there(catalog: Catalog) -> None:
    text = _explain(
        catalog,
        "RuntimeError: Expected all tensors to be on the same device, but found at least two "
        "devices, cuda:0 and cpu!\n",
    )
    assert text.startswith("# DTF003")
    assert "Read the bracket" not in text and "when it has none" in text


def test_show_prints_no_template_placeholder(catalog: Catalog) -> None:
    for entry in catalog.entries:
        names = {n for e in entry.errors for n in re.findall(r"\(\?P<(\w+)>", e.pattern)}
        text = format_entry(entry, "both")
        assert not re.search(r"\{\{\s*\w+\s*\}\}", text), entry.id
        assert not [n for n in names if f"<{n}>" in text], entry.id
    dtf356 = format_entry(catalog.get("DTF356"), "en")  # type: ignore[arg-type]
    assert "`bfloat16` and `float32` parameters" in dtf356


def test_a_cut_error_ends_with_an_ellipsis_between_words(catalog: Catalog) -> None:
    message = "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::Half " + " ".join(
        f"word{i}" for i in range(100)
    )
    text = _explain(catalog, message + "\n")
    error = next(line for line in text.splitlines() if line.startswith("**Error:**"))
    assert error.endswith(" …`") and re.search(r"word\d+ …`$", error)


def test_no_match_prints_the_error_once(catalog: Catalog) -> None:
    for lang in ("en", "zh"):
        text = _explain(catalog, "KeyError: 'input_ids'\n", lang)
        assert text.count("input_ids") == 1


def test_config_given_a_log_says_so(cli) -> None:
    result = cli("explain", str(ROOT / "examples" / "zeropp-bf16.log"), "--config", str(FSDP2_LOG))
    assert result.code == 2
    assert "looks like a log, not a config" in result.err and "found character" not in result.err
