"""What users read, compared as whole strings (golden files; `pytest --update-golden` rewrites them).

A frozen copy of three entries (tests/data/golden-kb) keeps these stable while the real KB grows; the bitsandbytes
entry's fix steps declare `when` they apply, so its first screens show the step that fits each message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dtypefix.cli.json_output import report_json, to_json
from dtypefix.cli.markdown import format_check, format_entry, format_report
from dtypefix.matcher import check, explain
from dtypefix.matcher.catalog import load_catalog

DATA = Path(__file__).parent / "data"
KB = load_catalog([DATA / "golden-kb"], include_builtin=False, cache_dir=None)
EXAMPLE = DATA / "golden-kb" / "family" / "zeropp-quantized-weights-under-bf16"
LOG = (EXAMPLE / "liger-640.log").read_text(encoding="utf-8")
CONFIG = (EXAMPLE / "liger-640.ds.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["en", "zh", "both"])
def test_explain_with_config(golden, lang: str) -> None:
    report = explain(LOG, configs=[("ds_config.json", CONFIG)], catalog=KB)
    golden(f"explain-zeropp-{lang}.md", format_report(report, lang, top=2))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_details(golden, lang: str) -> None:
    report = explain(LOG, configs=[("ds_config.json", CONFIG)], catalog=KB)
    golden(f"explain-zeropp-details-{lang}.md", format_report(report, lang, top=2, details=True))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_error_line_only(golden, lang: str) -> None:
    golden(f"explain-line-only-{lang}.md", format_report(explain(LOG, catalog=KB), lang))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_out_of_scope(golden, lang: str) -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB\n"
    golden(f"explain-oom-{lang}.md", format_report(explain(oom, catalog=KB), lang))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_check(golden, lang: str) -> None:
    report = check(configs=[("ds_config.json", CONFIG)], flags="--bf16 True", catalog=KB)
    golden(f"check-zeropp-{lang}.md", format_check(report, lang))


BNB = DATA / "golden-kb" / "peft" / "bnb-kernel-input-dtype-or-device-check"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("kind", "log"),
    [("dtype", "deepke-591-bf16-old-bnb.log"), ("device", "colossalai-6399-galore8bit-cpu-offload.log")],
)
def test_first_screen_shows_the_step_that_fits(golden, kind: str, log: str, lang: str) -> None:
    report = explain((BNB / log).read_text(encoding="utf-8"), catalog=KB)
    golden(f"explain-step-{kind}-{lang}.md", format_report(report, lang))


def test_no_known_cause(golden) -> None:
    golden("explain-none-en.md", format_report(explain("KeyError: 'input_ids'\n", catalog=KB), "en"))


def test_show_entry(golden) -> None:
    entry = KB.get("DTF001")
    assert entry is not None
    golden("show-DTF001-both.md", format_entry(entry, "both").replace(str(DATA), "<data>"))


def test_json(golden) -> None:
    report = explain(LOG, configs=[("ds_config.json", CONFIG)], catalog=KB)
    text = to_json(report_json(report)).replace(str(DATA), "<data>")
    golden("explain-zeropp.json", text)
