"""Each scoring rule on its own, with small in-memory entries and incidents (no KB, no files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dtypefix.matcher import FrameSeen, Origin, Outcome, Place, Reason, ValueSeen
from dtypefix.matcher.conditions import FrameCondition
from dtypefix.matcher.configs import parse_config
from dtypefix.matcher.entry import KBEntry, entry_from_mapping
from dtypefix.matcher.incident import build_incident
from dtypefix.matcher.score import (
    FAMILY_MARGIN,
    HIGH,
    MEDIUM,
    MIN_SCORE,
    anchor,
    check_entries,
    confidence,
    deciders,
    score_entries,
)

ERROR = "RuntimeError: boom happened here"
DS_BF16 = '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}'


def make(
    entry_id: str = "DTF900", kind: str = "cause", errors: list[dict[str, Any]] | None = None, **rest: Any
) -> KBEntry:
    match = {"errors": errors or [{"type": "RuntimeError", "message": "boom", "weight": 2}], **rest.pop("match", {})}
    data = {
        "id": entry_id,
        "title": {"en": "t", "zh": "标题"},
        "kind": kind,
        "family": rest.pop("family", "boom"),
        "severity": "error",
        "status": rest.pop("status", "active"),
        "match": match,
        "explanation": {"cause": {"en": "c", "zh": "原因"}, "fix": [{"en": "f", "zh": "修复"}]},
        "references": [],
        "examples": [],
        "counter_examples": [],
        **rest,
    }
    return entry_from_mapping(data, Path(f"{entry_id}.yaml"), f"test/{entry_id}")


def incident(text: str = ERROR, *, freeze: str = "", config: str = "", flags: str = ""):
    configs = [parse_config(config, "ds.json")] if config else []
    return build_incident(text + ("\n" + flags if flags else ""), freeze=[freeze] if freeze else [], configs=configs)


def score_of(entry: KBEntry, inc) -> float | None:
    found = score_entries([entry], inc)
    return found[0].score if found else None


OTHER = "KeyError: 'input_ids'"
"""An exception of the input's own: prose around it is not a message pasted without its type."""


# --- anchor -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("errors", "text", "weight"),
    [
        ([{"type": "RuntimeError", "message": "boom", "weight": 2}], ERROR, 2.0),
        ([{"message": "boom", "weight": 2}, {"message": "boom happened", "weight": 4}], ERROR, 4.0),
        ([{"type": "ValueError", "message": "boom", "weight": 2}], ERROR, None),
        ([{"type": "RuntimeError", "message": "boom", "weight": 2}], "prose: boom happened here\n" + OTHER, None),
        ([{"message": "boom", "weight": 2}], "prose: boom happened here", 2.0),
        # A short paste that names no exception is the message itself, pasted without its type (issue 14).
        ([{"type": "RuntimeError", "message": "boom", "weight": 2}], "boom happened here", 2.0),
    ],
    ids=["typed", "heaviest-wins", "other-type", "typed-not-in-prose", "untyped-in-prose", "typed-message-alone"],
)
def test_anchor_is_the_heaviest_matching_error_pattern(errors, text, weight) -> None:
    found = anchor(make(errors=errors), incident(text))
    assert (found[0].weight if found else None) == weight


# --- support, family margin, minimum ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("configs", "expected"),
    [
        ([], 2.0),
        ([{"path": "deepspeed.bf16.enabled", "value": True, "weight": 3}], 5.0),
        (
            [
                {"path": "deepspeed.bf16.enabled", "value": True, "weight": 3},
                {"path": "deepspeed.zero_optimization.stage", "value": 2, "weight": 1},
            ],
            4.0,
        ),
        ([{"path": "accelerate.mixed_precision", "value": "fp8", "weight": 3}], 2.0),
    ],
    ids=["anchor-only", "held-adds", "failed-subtracts", "unknown-counts-nothing"],
)
def test_score_is_anchor_plus_held_minus_failed(configs, expected) -> None:
    assert score_of(make(match={"configs": configs}), incident(config=DS_BF16)) == expected


def test_evidence_against_below_min_score_drops_the_entry() -> None:
    entry = make(match={"configs": [{"path": "deepspeed.bf16.enabled", "value": False, "weight": 3}]})
    assert MIN_SCORE > 2.0 - 3.0
    assert score_of(entry, incident(config=DS_BF16)) is None


def test_family_scores_anchor_plus_margin_whatever_its_evidence() -> None:
    family = make(kind="family", match={"configs": [{"path": "deepspeed.bf16.enabled", "value": False, "weight": 3}]})
    assert score_of(family, incident(config=DS_BF16)) == 2.0 + FAMILY_MARGIN


def test_a_cause_outranks_its_family_only_on_its_own_evidence() -> None:
    family = make("DTF001", kind="family")
    weak = make("DTF902", match={"configs": [{"path": "deepspeed.bf16.enabled", "value": True, "weight": 1}]})
    strong = make("DTF903", match={"configs": [{"path": "deepspeed.bf16.enabled", "value": True, "weight": 2}]})
    ranked = [m.entry.id for m in score_entries([weak, family], incident(config=DS_BF16))]
    assert ranked == ["DTF001", "DTF902"]
    ranked = [m.entry.id for m in score_entries([family, strong], incident(config=DS_BF16))]
    assert ranked == ["DTF903", "DTF001"]  # equal score: the cause comes first


# --- required, exclude, fixed_in, status ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("config", "kept"),
    [(DS_BF16, False), ("", True)],
    ids=["required-failed-drops", "required-unknown-keeps"],
)
def test_required_condition(config, kept) -> None:
    entry = make(match={"configs": [{"path": "deepspeed.bf16.enabled", "value": False, "required": True, "weight": 0}]})
    assert (score_of(entry, incident(config=config)) is not None) is kept


@pytest.mark.parametrize(
    ("exclude", "excluded"),
    [
        ({"configs": [{"path": "precision.bf16", "value": True}]}, True),
        ({"configs": [{"path": "precision.fp16", "value": True}]}, False),
        ({"errors": [{"message": "happened here"}]}, True),
        ({"errors": [{"type": "ValueError", "message": "happened here"}]}, False),
    ],
    ids=["held-config", "failed-config", "error-pattern", "error-pattern-other-type"],
)
def test_exclusion_holds_like_an_anchor(exclude, excluded) -> None:
    entry = make(match={"exclude": exclude})
    assert (score_of(entry, incident(config=DS_BF16)) is None) is excluded


@pytest.mark.parametrize(("installed", "expected"), [("0.14.2", 2.0), ("0.15.0", 0.0)], ids=["before-fix", "fixed"])
def test_installed_fix_counts_against(installed, expected) -> None:
    entry = make(fixed_in={"deepspeed": "0.14.3"})
    found = score_entries([entry], incident(freeze=f"deepspeed=={installed}"))
    if expected < MIN_SCORE:
        assert found == []
    else:
        assert found[0].score == expected and found[0].fixed is None
    if installed == "0.15.0":
        entry = make(fixed_in={"deepspeed": "0.14.3"}, errors=[{"message": "boom", "weight": 4}])
        match = score_entries([entry], incident(freeze="deepspeed==0.15.0"))[0]
        assert match.score == 2.0 and match.fixed is not None and match.fixed.reason is Reason.FIXED


def test_retired_entries_never_match() -> None:
    assert score_of(make(status="retired"), incident()) is None


# --- confidence ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("score", "word"), [(HIGH, "high"), (HIGH - 0.5, "medium"), (MEDIUM, "medium"), (MEDIUM - 0.5, "low")]
)
def test_confidence_thresholds(score, word) -> None:
    assert confidence(score) == word


# --- deciders --------------------------------------------------------------------------------------------------
def test_deciders_name_the_input_that_settles_close_candidates() -> None:
    a = make("DTF910", match={"configs": [{"path": "deepspeed.bf16.enabled", "value": True, "weight": 2}]})
    b = make("DTF911", match={"packages": [{"name": "deepspeed", "spec": "<1", "weight": 2}]})
    c = make("DTF912", match={"packages": [{"name": "peft", "spec": "<1", "weight": 1}]})  # too light to matter
    found = deciders(score_entries([a, b, c], incident()))
    assert {(d.key, d.entries) for d in found} == {("deepspeed-config", ("DTF910",)), ("freeze", ("DTF911",))}


def test_no_deciders_for_a_lone_high_confidence_answer() -> None:
    a = make(
        match={
            "configs": [{"path": "deepspeed.bf16.enabled", "value": True, "weight": 3}],
            "packages": [{"name": "x", "spec": "<1"}],
        }
    )
    matches = score_entries([a], incident(config=DS_BF16))
    assert matches[0].confidence == "high" and deciders(matches) == []


# --- evidence carries data, not words --------------------------------------------------------------------------
def test_evidence_is_structured() -> None:
    entry = make(
        match={
            "configs": [{"path": "deepspeed.bf16.enabled", "value": True}],
            "packages": [{"name": "deepspeed", "spec": "<1"}],
        }
    )
    match = score_entries([entry], incident(config=DS_BF16))[0]
    anchor_ev, package_ev, config_ev = match.evidence
    assert (anchor_ev.outcome, anchor_ev.reason, anchor_ev.where) == (
        Outcome.HELD,
        Reason.MATCHED,
        Place(Origin.TRACEBACK),
    )
    assert (config_ev.outcome, config_ev.reason, config_ev.observed, config_ev.where) == (
        Outcome.HELD,
        Reason.FOUND,
        ValueSeen(True),
        Place(Origin.CONFIG, "ds.json"),
    )
    assert (package_ev.outcome, package_ev.reason, package_ev.decider) == (
        Outcome.UNKNOWN,
        Reason.NOT_GIVEN,
        "freeze",
    )


def test_auto_is_resolved_from_the_launch_flags_and_says_so() -> None:
    entry = make(match={"configs": [{"path": "deepspeed.bf16.enabled", "value": True}]})
    auto = '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}}'
    resolved = score_entries([entry], incident(config=auto, flags="torchrun train.py --bf16 True"))[0].evidence[1]
    assert resolved.outcome is Outcome.HELD
    assert isinstance(resolved.observed, ValueSeen) and resolved.observed.auto == Place(Origin.LAUNCH)
    unresolved = score_entries([entry], incident(config=auto))[0].evidence[1]
    assert (unresolved.outcome, unresolved.reason) == (Outcome.UNKNOWN, Reason.AUTO_UNRESOLVED)


# --- check -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("configs", "reported"),
    [
        ([{"path": "deepspeed.bf16.enabled", "value": True, "weight": 3}], True),
        ([{"path": "deepspeed.bf16.enabled", "value": True, "weight": 2}], False),
        (
            [
                {"path": "deepspeed.bf16.enabled", "value": True, "weight": 3},
                {"path": "deepspeed.zero_optimization.stage", "value": 2, "weight": 1},
            ],
            False,
        ),
    ],
    ids=["held-enough", "below-medium", "one-failed"],
)
def test_check_reports_configs_that_hold(configs, reported) -> None:
    entry = make(match={"configs": configs})
    findings, conditional = check_entries([entry], incident("", config=DS_BF16))
    assert (bool(findings), conditional) == (reported, [])


@pytest.mark.parametrize(
    ("freeze", "kind"), [("", "conditional"), ("transformers==4.26.0", "finding"), ("transformers==4.40.0", "none")]
)
def test_check_a_version_not_given_is_not_a_finding(freeze, kind) -> None:
    entry = make(
        match={
            "configs": [{"path": "deepspeed.bf16.enabled", "value": True, "weight": 3}],
            "packages": [{"name": "transformers", "spec": "<4.27", "weight": 2}],
        }
    )
    findings, conditional = check_entries([entry], incident("", config=DS_BF16, freeze=freeze))
    assert {"conditional": ([], [entry.id]), "finding": ([entry.id], []), "none": ([], [])}[kind] == (
        [m.entry.id for m in findings],
        [m.entry.id for m in conditional],
    )


@pytest.mark.parametrize(
    ("text", "anchored"),
    [
        ("UserWarning: boom happened in a warning\n", True),
        (
            "UserWarning: boom happened in a warning\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'messages'\n",
            False,
        ),
        ("NotImplementedError: boom here\n    with inputs: x\n`cutlass` is not supported because: bf16\n", True),
    ],
    ids=["warning-alone", "warning-before-an-unrelated-crash", "multi-line-message-read-whole"],
)
def test_untyped_pattern_searches_the_text_only_without_another_exception(text, anchored) -> None:
    entry = make(errors=[{"message": "(?s)boom.*(?:warning|bf16)", "weight": 1}])
    assert (anchor(entry, incident(text)) is not None) is anchored


# --- a frame's source line -------------------------------------------------------------------------------------
CUT_TRACEBACK = """Traceback (most recent call last):
  File "/env/site-packages/transformers/modeling_utils.py", line 3977, in from_pretrained
    dispatch_model(model, **device_map_kwargs)
RuntimeError: boom happened here"""


@pytest.mark.parametrize(
    ("code", "held"),
    [(r"\bdispatch_model\(", True), (r"\bmodel\.to\(", False)],
)
def test_a_frame_code_pattern_reads_the_line_under_the_frame(code: str, held: bool) -> None:
    condition = FrameCondition.parse({"file": r"modeling_utils\.py", "code": code}, Path("x.yaml"), "frames[0]")
    frame_ev = condition.evaluate(incident(CUT_TRACEBACK))
    assert frame_ev.outcome is (Outcome.HELD if held else Outcome.FAILED)
    if held:
        assert isinstance(frame_ev.observed, FrameSeen)
        assert frame_ev.observed.code.endswith("dispatch_model(model, **device_map_kwargs)")


def test_a_frame_code_pattern_excludes_like_any_frame() -> None:
    entry = make(match={"exclude": {"frames": [{"function": "^from_pretrained$", "code": r"dispatch_model\("}]}})
    assert score_of(entry, incident(CUT_TRACEBACK)) is None
    assert score_of(entry, incident(CUT_TRACEBACK.replace("dispatch_model", "model.to"))) is not None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_confidence_words_ask_for_inputs_only_when_some_are_missing(lang: str) -> None:
    from dtypefix.cli.i18n import t
    from dtypefix.cli.markdown import _confidence_line

    asks = t("conf.medium", lang)
    config = {"configs": [{"path": "deepspeed.bf16.enabled", "value": True, "weight": 1}]}
    pending = make(match={**config, "packages": [{"name": "deepspeed", "spec": "<1", "weight": 1}]})
    settled = make(match=config)
    known = score_entries([settled], incident(config=DS_BF16))[0]
    unknown = score_entries([pending], incident(config=DS_BF16))[0]
    assert known.confidence == unknown.confidence == "medium"
    assert asks not in _confidence_line(known, lang, asked=True)
    assert asks in _confidence_line(unknown, lang, asked=True)  # the answer lists the input that would settle it
    assert _confidence_line(unknown, lang).endswith(t("conf.medium.unasked", lang))
