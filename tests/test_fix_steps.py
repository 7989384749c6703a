"""The first screen shows the fix step that fits (issue 23, part 1): steps declare `when` they apply, over the
same facts as `match`; examples say which step their answer shows first, and lint checks it."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from dtypefix.cli.markdown import format_report
from dtypefix.kbtools.canonical import canonical_text
from dtypefix.kbtools.lint import example_incident
from dtypefix.matcher.catalog import Catalog
from dtypefix.matcher.entry import applicable_step
from dtypefix.matcher.explain import explain_incident, incident_from

ROOT = Path(__file__).resolve().parents[1]
BNB = ROOT / "kb" / "peft" / "bnb-kernel-input-dtype-or-device-check"


def _first_fix(catalog: Catalog, log: Path, lang: str = "en") -> str:
    text = format_report(explain_incident(incident_from(log.read_text(encoding="utf-8")), catalog), lang)
    return next(line for line in text.splitlines() if line.startswith(("**Fix:**", "**解决方法：**")))


def test_each_message_kind_gets_its_own_step(catalog: Catalog) -> None:
    assert _first_fix(catalog, BNB / "deepke-591-bf16-old-bnb.log").startswith("**Fix:** Dtype messages:")
    assert _first_fix(catalog, BNB / "comfyui-6610-nf4-cpu-weight.log").startswith("**Fix:** Device messages:")
    assert _first_fix(catalog, BNB / "deepke-591-bf16-old-bnb.log", "zh").startswith("**解决方法：** dtype 类报错")


def test_a_message_no_step_declares_gets_the_general_step(catalog: Catalog) -> None:
    entry = catalog.get("DTF309")
    assert entry is not None
    incident = incident_from(
        "Exception: FP4 quantization state not initialized. Please call .cuda() or .to(device) first.\n"
    )
    assert applicable_step(entry, incident) == 0
    incident = incident_from(
        "RuntimeError: All input tensors need to be on the same GPU, but found some tensors to not be on a GPU\n"
    )
    assert applicable_step(entry, incident) == 1


def test_unscale_fp16_shows_the_fix_not_the_search(catalog: Catalog) -> None:
    for log in sorted((ROOT / "kb" / "family" / "unscale-fp16-gradients").glob("*.log")):
        assert _first_fix(catalog, log).startswith("**Fix:** Keep trainable weights fp32"), log.name


def test_every_example_declares_the_step_its_answer_shows(catalog: Catalog) -> None:
    """The KB as a whole: what lint checks per entry, in one pass over the entries that use `when`."""
    conditional = [e for e in catalog.entries if any(step.when for step in e.fix)]
    assert len(conditional) >= 3
    for entry in conditional:
        steps = [applicable_step(entry, example_incident(ex)) for ex in entry.examples]
        shown = {step + 1 for step in steps}
        for example, step in zip(entry.examples, steps, strict=True):
            assert step + 1 == example.step, (entry.id, example.input)
        assert {i + 1 for i, step in enumerate(entry.fix) if step.when} <= shown, entry.id


def _private_copy(tmp_path: Path, change) -> Path:
    root = tmp_path / "kb"
    source = BNB.with_suffix(".yaml")
    shutil.copytree(BNB, root / "private" / "copied")
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["id"] = "DTF902"
    change(data)
    path = root / "private" / "copied.yaml"
    path.write_text(canonical_text(data), encoding="utf-8")
    return path


def test_lint_reports_an_example_whose_answer_shows_another_step(cli, tmp_path: Path) -> None:
    def wrong(data: dict) -> None:
        data["examples"][2]["step"] = 1  # deepke: its answer shows the dtype step (3)

    result = cli("lint", str(_private_copy(tmp_path, wrong)))
    assert result.code == 1
    assert "the answer shows fix step 3 first; the example says step 1" in result.out


def test_lint_reports_a_condition_no_example_exercises(cli, tmp_path: Path) -> None:
    def untested(data: dict) -> None:
        data["explanation"]["fix"][3]["when"] = {"log": [{"pattern": "CPU-only version of bitsandbytes"}]}

    result = cli("lint", str(_private_copy(tmp_path, untested)))
    assert result.code == 1 and "explanation.fix[3].when: no example's answer shows this step first" in result.out


def test_when_takes_the_condition_kinds_of_match_only(cli, tmp_path: Path) -> None:
    def errors(data: dict) -> None:
        data["explanation"]["fix"][3]["when"] = {"errors": [{"message": "anything"}]}

    result = cli("lint", str(_private_copy(tmp_path, errors)))
    assert result.code == 1 and "when" in result.out


def test_a_quantized_model_moved_by_a_pipeline_sees_omit_device_first(catalog: Catalog) -> None:
    """No real log of `pipeline(..., device=0)` moving a 4-bit model is in the KB, so no `when` can be tested for
    it: the first step names the pipeline's move itself."""
    log = ROOT / "kb" / "peft" / "quantized-model-cast-or-move-rejected" / "sa2va-73-to-on-4bit.log"
    assert "omit `device=`" in _first_fix(catalog, log)
    assert "不要再给 `device=`" in _first_fix(catalog, log, "zh")
