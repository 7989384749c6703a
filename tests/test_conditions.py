"""The condition language: what lint refuses at load time, pointed at file:line: field: problem."""

from __future__ import annotations

import datetime
import re
import shutil
from pathlib import Path

import pytest
import yaml

from dtypefix.cli.evidence_words import worded
from dtypefix.cli.i18n import has
from dtypefix.kbtools.canonical import canonical_text
from dtypefix.kbtools.lint import lint_paths
from dtypefix.matcher.catalog import builtin_kb_dir, load_catalog
from dtypefix.matcher.conditions import EntryError, parse_group
from dtypefix.matcher.facts import ENV_KEYS, NAMESPACES

HERE = Path("entry.yaml")


@pytest.fixture
def private_kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "private").mkdir(parents=True)
    source = builtin_kb_dir() / "deepspeed" / "zeropp-quantized-weights-under-bf16.yaml"
    shutil.copytree(source.with_suffix(""), root / "private" / "my-entry")
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["id"] = "DTF9001"
    (root / "private" / "my-entry.yaml").write_text(canonical_text(data), encoding="utf-8")
    return root


def _lint_after(root: Path, change) -> list[str]:
    path = root / "private" / "my-entry.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    text = canonical_text(data)
    path.write_text(text, encoding="utf-8")
    catalog = load_catalog([root], cache_dir=None)
    return [str(p) for p in lint_paths([root], catalog)]


def _line_of(root: Path, needle: str) -> int:
    lines = (root / "private" / "my-entry.yaml").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def _config(data, index: int, **changes) -> None:
    data["match"]["configs"][index].update(changes)


@pytest.mark.parametrize(
    ("change", "needle", "field", "problem"),
    [
        (
            lambda d: _config(d, 2, path="precison.bf16"),
            "precison.bf16",
            "match.configs[2].path",
            "unknown namespace 'precison'",
        ),
        (
            lambda d: _config(d, 2, path="precision.bf61"),
            "precision.bf61",
            "match.configs[2].path",
            "unknown key 'bf61'",
        ),
        (
            lambda d: d["match"].__setitem__("env", [{"key": "device.mpss", "value": True}]),
            "device.mpss",
            "match.env[0].key",
            "unknown environment key 'device.mpss'",
        ),
        (
            lambda d: d["match"].__setitem__(
                "env", [{"key": "gpu.min_compute_capability", "op": "<", "value": "sm89"}]
            ),
            "sm89",
            "match.env[0].value",
            "< compares numbers; 'sm89' is not a number",
        ),
        (
            lambda d: d["match"].__setitem__("env", [{"key": "os", "op": ">", "value": 3}]),
            "op: '>'",
            "match.env[0].op",
            "os is not a number",
        ),
        (lambda d: _config(d, 1, op="in", value=3), "value: 3", "match.configs[1].value", "in needs a list"),
        (lambda d: _config(d, 1, op="~", value=3), "op: '~'", "match.configs[1].op", "is not one of"),
        (
            lambda d: _config(d, 1, op="matches", value="stage(3"),
            "stage(3",
            "match.configs[1].value",
            "RE2 cannot compile",
        ),
        (
            lambda d: d["match"]["errors"][0].__setitem__("message", "mat1 (unclosed"),
            "mat1 (unclosed",
            "match.errors[0].message",
            "RE2 cannot compile",
        ),
        (
            lambda d: d["match"]["frames"][0].__setitem__("file", "deepspeed/(zero"),
            "deepspeed/(zero",
            "match.frames[0].file",
            "RE2 cannot compile",
        ),
        (
            lambda d: _config(d, 1, value=datetime.date(2024, 1, 2)),
            "2024-01-02",
            "match.configs[1].value",
            "not date",
        ),
        (
            lambda d: d["match"]["packages"][0].__setitem__("spec", "~=0.10.x"),
            "~=0.10.x",
            "match.packages[0].spec",
            "not a PEP 440 specifier",
        ),
    ],
    ids=[
        "misspelt-namespace",
        "unknown-derived-key",
        "unknown-env-key",
        "ordered-op-on-text",
        "ordered-op-on-text-key",
        "in-without-list",
        "unknown-op",
        "matches-bad-regex",
        "bad-message-regex",
        "bad-frame-regex",
        "yaml-date-value",
        "bad-specifier",
    ],
)
def test_lint_refuses_with_file_line_field_problem(private_kb: Path, change, needle, field, problem) -> None:
    problems = _lint_after(private_kb, change)
    line = _line_of(private_kb, needle)
    expected = re.compile(rf".*my-entry\.yaml:{line}: {re.escape(field)}: .*{re.escape(problem)}.*")
    assert any(expected.fullmatch(p) for p in problems), problems


def test_a_broken_private_entry_is_skipped_at_run_time(private_kb: Path) -> None:
    _lint_after(private_kb, lambda d: _config(d, 2, path="precison.bf16"))
    catalog = load_catalog([private_kb], cache_dir=None)
    assert catalog.get("DTF9001") is None
    assert any("precison" in problem for problem in catalog.problems)


def test_entry_error_carries_its_parts() -> None:
    with pytest.raises(EntryError) as caught:
        parse_group({"configs": [{"path": "deepspeed", "value": 1}]}, HERE, "match")
    error = caught.value
    assert (error.path, error.field, error.keys) == (HERE, "match.configs[0].path", ["match", "configs", 0, "path"])
    assert (
        str(error) == f"{HERE}: match.configs[0].path: unknown namespace 'deepspeed' (one of {', '.join(NAMESPACES)})"
    )


def test_every_namespace_and_env_key_has_words() -> None:
    for name, namespace in NAMESPACES.items():
        assert namespace.doc and namespace.title, name
        assert namespace.detect is not None or namespace.keys or name == "flags", name
    for key in ENV_KEYS:
        assert has(f"env.{key}"), key


def test_schema_operators_are_the_condition_operators() -> None:
    import json

    from dtypefix.matcher.conditions import OPS

    schema = json.loads((builtin_kb_dir() / "schema.json").read_text(encoding="utf-8"))
    group = schema["properties"]["match"]["properties"]
    for kind in ("configs", "env"):
        assert group[kind]["items"]["properties"]["op"]["enum"] == list(OPS), kind


def test_a_namespace_added_in_the_registry_alone_works_end_to_end() -> None:
    """torchtune was added as one Namespace (commit "Config namespace for torchtune ..."): detection, lookups,
    the derived precision, lint's vocabulary and the decider wording all follow from the registry."""
    from dtypefix.cli.evidence_words import decider_words
    from dtypefix.matcher.configs import parse_config
    from dtypefix.matcher.facts import config_fact
    from dtypefix.matcher.incident import build_incident

    text = (
        "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\ntokenizer:\n  _component_: x\ndtype: fp16\n"
    )
    config = parse_config(text, "recipe.yaml")
    incident = build_incident("", configs=[config])
    assert config.kind == "torchtune"
    assert config_fact(incident, "torchtune.dtype").value == "fp16"
    assert config_fact(incident, "precision.fp16").value is True
    assert parse_group({"configs": [{"path": "torchtune.dtype", "value": "bf16"}]}, HERE, "match")["configs"]
    assert decider_words("torchtune-config", "en") == "your torchtune config: `--config FILE`"


def test_an_unquoted_hash_in_a_pattern_is_reported(private_kb: Path) -> None:
    path = private_kb / "private" / "my-entry.yaml"
    text = path.read_text(encoding="utf-8")
    first = next(line for line in text.splitlines() if line.strip().startswith("- type: RuntimeError"))
    text = text.replace(
        first, first + "\n      message: expected dtype #1 but got #2\n      weight: 1\n    - type: RuntimeError", 1
    )
    path.write_text(text, encoding="utf-8")
    catalog = load_catalog([private_kb], cache_dir=None)
    problems = [str(p) for p in lint_paths([private_kb], catalog)]
    assert any("unquoted ' #'" in p for p in problems), problems


def test_a_comment_cut_in_prose_is_reported_and_fmt_keeps_the_file(private_kb: Path) -> None:
    """A plain value with "PR #1706": YAML reads the rest as a comment; lint says so, fmt does not make it final."""
    from dtypefix.cli.app import main

    path = private_kb / "private" / "my-entry.yaml"
    text = path.read_text(encoding="utf-8")
    title = next(line for line in text.splitlines() if line.strip().startswith("en:"))
    cut = title.split("en:")[0] + "en: Fixed by PR #1706 in peft 0.12.0"
    text = text.replace(title, cut, 1)
    path.write_text(text, encoding="utf-8")
    catalog = load_catalog([private_kb], cache_dir=None)
    line = text.splitlines().index(cut) + 1
    assert any(f":{line}: en: an unquoted ' #'" in str(p) for p in lint_paths([private_kb], catalog))
    assert main(["fmt", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == text


# --- the kind registry ------------------------------------------------------------------------------------------
def test_every_kind_is_in_the_schema_the_canonical_order_and_the_words() -> None:
    """A kind is one module plus its words: the schema's ``match`` block and the canonical order follow from it."""
    import json

    from dtypefix.kbtools.canonical import condition_fields
    from dtypefix.matcher.conditions import KINDS, match_schema

    schema = json.loads((builtin_kb_dir() / "schema.json").read_text(encoding="utf-8"))
    assert schema["properties"]["match"] == match_schema(), "kb/schema.json is stale: run `dtypefix docs`"
    for kind in KINDS:
        assert set(kind.fields) <= set(condition_fields()), kind.key
        assert set(kind.schema["properties"]) == {*kind.fields, "weight", "required"}, kind.key
        assert kind.doc and kind.key in schema["properties"]["match"]["properties"], kind.key
        assert worded(kind.condition), f"{kind.name}: no words in cli/evidence_words.py"
        assert kind.condition.kind == kind.name, kind.key


@pytest.mark.parametrize(
    ("group", "problem"),
    [
        ({"configs": [{"path": "precision.fp16", "value": "yes"}]}, "precision.fp16 holds a bool, so 'yes' can never"),
        ({"configs": [{"path": "model.load_in_8bit", "op": ">", "value": 1}]}, "is not a number: > does not apply"),
        ({"env": [{"key": "os", "value": "mac"}]}, "os holds one of linux, windows, macos, so 'mac' can never"),
        ({"env": [{"key": "gpu.count", "value": "two"}]}, "gpu.count holds a number, so 'two' can never match"),
        ({"env": [{"key": "device.mps", "op": "matches", "value": "x"}]}, "device.mps is bool: matches"),
        ({"gpu_memory": [{"below_gib": "24GB"}]}, "must be a number of GiB above 0"),
    ],
)
def test_a_comparison_that_can_never_hold_is_refused(group: dict, problem: str) -> None:
    with pytest.raises(EntryError, match=re.escape(problem)):
        parse_group(group, HERE, "match")


# Real output: nvidia-smi's table row (github.com/a904055262/PVE-manager-status/issues/14) and torch's
# out-of-memory message on an H100 (/work/shared/recordings/h100-2026-11/logs/neg_cuda_oom.log).
_SMI = (
    "|   0  NVIDIA GeForce GTX 1660        On  |   00000000:03:00.0 Off |                  N/A |\n"
    "| 54%   59C    P0             53W /  120W |    2079MiB /   6144MiB |     15%      Default |\n"
)
_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 148.50 GiB. GPU 0 has a total capacity of "
    "79.18 GiB of which 68.40 GiB is free.\n"
)


@pytest.mark.parametrize(
    ("text", "outcome", "seen"),
    [(_SMI, "held", 6.0), (_OOM, "failed", 79.18), ("RuntimeError: boom\n", "unknown", None)],
)
def test_gpu_memory_reads_nvidia_smi_and_the_oom_message(text: str, outcome: str, seen: float | None) -> None:
    from dtypefix.cli.evidence_words import describe
    from dtypefix.matcher import ValueSeen
    from dtypefix.matcher.incident import build_incident

    (condition,) = parse_group({"gpu_memory": [{"below_gib": 24}]}, HERE, "match")["gpu_memory"]
    evidence = condition.evaluate(build_incident(text))
    assert evidence.outcome.value == outcome
    assert evidence.observed == (ValueSeen(seen) if seen is not None else None)
    assert "GiB" in describe(evidence, "en") and "GiB" in describe(evidence, "zh")
    if seen is None:
        assert evidence.decider == "gpu"


def test_check_decides_an_entry_on_gpu_memory_alone() -> None:
    """The example kind end to end: YAML -> registry -> check's rules (decides, asks) -> words."""
    from dtypefix.matcher.entry import entry_from_mapping
    from dtypefix.matcher.incident import build_incident
    from dtypefix.matcher.score import check_entries

    data = {
        "id": "DTF9002",
        "title": {"en": "t", "zh": "标题"},
        "kind": "cause",
        "family": "f",
        "severity": "error",
        "status": "active",
        "match": {"errors": [{"message": "boom"}], "gpu_memory": [{"below_gib": 24, "weight": 3}]},
        "explanation": {"cause": {"en": "c", "zh": "原因"}, "fix": [{"en": "f", "zh": "修复"}]},
        "references": [],
        "examples": [],
        "counter_examples": [],
    }
    entry = entry_from_mapping(data, HERE, "test/gpu")
    assert entry.checkable
    findings, conditional = check_entries([entry], build_incident(_SMI))
    assert [m.entry.id for m in findings] == ["DTF9002"] and not conditional
    assert check_entries([entry], build_incident(_OOM)) == ([], [])


def test_a_pattern_reads_as_a_template_with_optional_groups_left_out() -> None:
    from dtypefix.cli.evidence_words import readable

    # `(?:x|)` and `(?:…|$)` are optional like `(?:x)?`: a reader sees the words that must be there
    assert readable(r"same dtype(?:, but got \w+|)") == "same dtype"
    assert readable(r"torch\.zeros\(\)(?:[^.\w]|$)") == "torch.zeros()"
    # a long alternation keeps its first few in an answer's evidence line, all of them on a reference page
    pattern = r"torch\.(?:tensor|Tensor|as_tensor|from_numpy|arange|ones)\("
    assert readable(pattern, most=4) == "torch.{tensor, Tensor, as_tensor, from_numpy, …}("
    assert readable(pattern) == "torch.{tensor, Tensor, as_tensor, from_numpy, arange, ones}("
