"""Every version bound cites its source: bound_problems() over affected / fixed_in / bound_refs, and lint's use of it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from dtypefix.kbtools.bounds import bound_keys, bound_problems
from dtypefix.kbtools.canonical import canonical_text
from dtypefix.kbtools.census import CensusRow, census_dir, load_census
from dtypefix.kbtools.lint import lint_paths
from dtypefix.kbtools.proofs import Check, Proof, load_proofs, proof_problems, proofs_dir, verify
from dtypefix.matcher.catalog import builtin_kb_dir, load_catalog
from dtypefix.matcher.entry import KBEntry

PR = "https://github.com/deepspeedai/DeepSpeed/pull/5461"
COMMIT = "https://github.com/deepspeedai/DeepSpeed/commit/bc48371c5e1fb8fd70fc79285e66201dbb65679b"


@pytest.fixture(scope="module")
def base(catalog) -> KBEntry:
    return next(e for e in catalog.entries if e.kind == "family")


def _entry(base: KBEntry, affected=None, fixed_in=None, refs=None) -> KBEntry:
    return dataclasses.replace(base, affected=affected or {}, fixed_in=fixed_in or {}, bound_refs=refs or {})


def test_no_bounds_no_problems(base: KBEntry) -> None:
    assert bound_problems(_entry(base)) == []


def test_the_briefing_example_is_accepted(base: KBEntry) -> None:
    entry = _entry(
        base,
        affected={"deepspeed": ">=0.14.1,<0.14.3"},
        fixed_in={"deepspeed": "0.14.3"},
        refs={"deepspeed>=0.14.1": "https://github.com/deepspeedai/DeepSpeed/pull/5370", "deepspeed<0.14.3": PR},
    )
    assert bound_problems(entry) == []


def test_each_clause_needs_a_reference(base: KBEntry) -> None:
    entry = _entry(base, affected={"deepspeed": ">=0.14.1,<0.14.3"}, refs={"deepspeed<0.14.3": PR})
    assert bound_problems(entry) == [
        (
            "affected.deepspeed",
            "bound `deepspeed>=0.14.1` has no `bound_refs` item: cite the PR or commit that establishes it",
        )
    ]


def test_fixed_in_is_the_clause_below_it(base: KBEntry) -> None:
    assert bound_keys(_entry(base, fixed_in={"liger-kernel": "0.8.2"})) == [
        ("fixed_in.liger-kernel", "liger-kernel<0.8.2")
    ]
    problems = bound_problems(_entry(base, fixed_in={"liger-kernel": "0.8.2"}))
    assert [field for field, _ in problems] == ["fixed_in.liger-kernel"]
    assert bound_problems(_entry(base, fixed_in={"liger-kernel": "0.8.2"}, refs={"liger-kernel<0.8.2": COMMIT})) == []


def test_one_reference_serves_affected_and_fixed_in(base: KBEntry) -> None:
    entry = _entry(base, affected={"peft": "<0.6.0"}, fixed_in={"peft": "0.6.0"})
    assert [field for field, _ in bound_problems(entry)] == ["affected.peft"]  # reported once, not twice


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("==0.8.1", "liger-kernel==0.8.1"),
        ("!=1.4.*", "liger-kernel!=1.4.*"),
        ("<=1.14.0", "liger-kernel<=1.14.0"),
        ("~=0.5", "liger-kernel~=0.5"),
        ("> 0.3", "liger-kernel>0.3"),
    ],
)
def test_every_operator_is_a_clause(base: KBEntry, spec: str, key: str) -> None:
    assert bound_keys(_entry(base, affected={"liger-kernel": spec})) == [("affected.liger-kernel", key)]
    assert bound_problems(_entry(base, affected={"liger-kernel": spec}, refs={key: COMMIT})) == []


def test_names_and_spaces_are_normalised(base: KBEntry) -> None:
    entry = _entry(base, affected={"Liger_Kernel": ">= 0.4.0, < 0.5.3"})
    refs = {"liger-kernel>=0.4.0": COMMIT, "liger-kernel<0.5.3": COMMIT}
    assert bound_problems(dataclasses.replace(entry, bound_refs=refs)) == []


def test_stale_reference_is_reported(base: KBEntry) -> None:
    entry = _entry(base, affected={"deepspeed": "<0.12.3"}, refs={"deepspeed<0.12.3": COMMIT, "deepspeed<0.19.3": PR})
    assert bound_problems(entry) == [
        ("bound_refs.deepspeed<0.19.3", "no `affected` clause or `fixed_in` version states this bound")
    ]


@pytest.mark.parametrize(
    "url",
    [
        "http://github.com/deepspeedai/DeepSpeed/pull/5461",
        "https://github.com/deepspeedai/DeepSpeed/issues/5538",
        "https://github.com/deepspeedai/DeepSpeed",
        "not a url",
    ],
)
def test_reference_must_be_a_change_or_release(base: KBEntry, url: str) -> None:
    entry = _entry(base, fixed_in={"deepspeed": "0.14.3"}, refs={"deepspeed<0.14.3": url})
    assert [field for field, _ in bound_problems(entry)] == ["bound_refs.deepspeed<0.14.3"]


@pytest.mark.parametrize(
    "url",
    [
        PR,
        COMMIT,
        "https://github.com/pytorch/pytorch/releases/tag/v1.13.0",
        "https://github.com/pytorch/pytorch/blob/v1.9.0/torch/utils/data/sampler.py",
        "https://pytorch.org/blog/pytorch-1.13-release/",
    ],
)
def test_pull_commit_release_or_file_at_a_tag_is_accepted(base: KBEntry, url: str) -> None:
    assert bound_problems(_entry(base, fixed_in={"deepspeed": "0.14.3"}, refs={"deepspeed<0.14.3": url})) == []


def test_malformed_key_is_reported(base: KBEntry) -> None:
    entry = _entry(base, refs={"deepspeed 0.14.3": PR})
    assert [field for field, _ in bound_problems(entry)] == ["bound_refs.deepspeed 0.14.3"]


def test_every_shipped_bound_has_a_reference(catalog) -> None:
    problems = {e.id: bound_problems(e) for e in catalog.entries}
    assert {k: v for k, v in problems.items() if v} == {}
    assert sum(len(e.bound_refs) for e in catalog.entries) > 0


def test_lint_reports_a_bound_without_reference(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    (root / "private").mkdir(parents=True)
    source = builtin_kb_dir() / "deepspeed" / "zero3-offload-clip-scale-on-gpu.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["id"] = "DTF9002"
    del data["bound_refs"]["deepspeed<0.14.3"]
    path = root / "private" / "my-entry.yaml"
    path.write_text(canonical_text(data), encoding="utf-8")
    problems = [p for p in lint_paths([path], load_catalog(cache_dir=None)) if "`bound_refs`" in p.message]
    assert len(problems) == 1
    text = path.read_text(encoding="utf-8").splitlines()
    assert text[problems[0].line - 1].startswith("  deepspeed:")  # points at the affected spec
    assert "deepspeed<0.14.3" in problems[0].message


# --- proofs: wording and behaviour by version, read in released artifacts (kbtools/proofs.py, proofs/) ---

WHEEL_27 = "torch-2.7.1-cp312-none-macosx_11_0_arm64.whl"
WHEEL_28 = "torch-2.8.0-cp312-none-macosx_11_0_arm64.whl"
SO = "torch/lib/libtorch_cpu.dylib"


def _proof(subject: str, claim: str, spec: str, checks: list[tuple[str, bool]], template: str = "") -> Proof:
    return Proof(
        path=Path("proofs/torch.yaml"),
        index=0,
        library="torch",
        subject=subject,
        claim=claim,
        spec=spec,
        wording=", different from other tensors on ",
        means="",
        template=template,
        checks=tuple(Check(v, present, f"torch-{v}.whl", SO) for v, present in checks),
    )


@pytest.fixture(scope="module")
def noted(base: KBEntry) -> dict[str, KBEntry]:
    entry = dataclasses.replace(
        base,
        id="DTF9100",
        messages=('torch >= 2.8: "... different from other tensors on cuda:0 ..."',),
        affected={"torch": ">=2.6.0"},
        fixed_in={"torch": "2.9.0"},
    )
    return {"DTF9100": entry}


def test_a_proof_that_brackets_its_boundary_holds(noted: dict[str, KBEntry]) -> None:
    proof = _proof("DTF9100", "messages[0]", ">=2.8", [("2.7.1", False), ("2.8.0", True)])
    assert proof_problems(proof, noted, []) == []


def test_a_checked_release_that_contradicts_the_spec_fails(noted: dict[str, KBEntry]) -> None:
    proof = _proof("DTF9100", "messages[0]", ">=2.8", [("2.7.1", True), ("2.8.0", True)])
    assert any("2.7.1: wording present, which contradicts" in p for p in proof_problems(proof, noted, []))


def test_each_boundary_is_checked_on_both_sides(noted: dict[str, KBEntry]) -> None:
    proof = _proof("DTF9100", "messages[0]", ">=2.8", [("2.8.0", True)])
    assert proof_problems(proof, noted, []) == [
        "boundary `>=2.8` not checked on both sides (a release inside and one outside)"
    ]


def test_the_proof_must_establish_what_the_entry_states(noted: dict[str, KBEntry]) -> None:
    """The issue's DTF463 finding: the note said 2.5, the wheels say 2.8."""
    proof = _proof("DTF9100", "affected:torch", ">=2.8", [("2.7.1", False), ("2.8.0", True)])
    assert proof_problems(proof, noted, []) == ["the subject states `>=2.6.0`, the proof establishes `>=2.8`"]
    fixed = _proof("DTF9100", "fixed_in:torch", ">=2.9.0", [("2.8.0", False), ("2.9.0", True)])
    assert proof_problems(fixed, noted, []) == []


def test_a_census_row_is_held_to_its_versions(noted: dict[str, KBEntry]) -> None:
    template = "but got {arg} is on {device}, different from other tensors on {device}"
    row = CensusRow("torch", "torch[3]", template, "x", "RuntimeError", "error", "", "", ">=2.5", ("DTF003",))
    proof = _proof("census:torch", "versions", ">=2.8", [("2.7.1", False), ("2.8.0", True)], template)
    assert proof_problems(proof, noted, [row]) == ["the subject states `>=2.5`, the proof establishes `>=2.8`"]
    assert proof_problems(proof, noted, [dataclasses.replace(row, versions=">=2.8")]) == []


def test_verify_rereads_the_artifact(tmp_path: Path) -> None:
    """verify() opens the wheel and searches the member: a real zip, not a stand-in."""
    import zipfile

    for name, body in (
        (WHEEL_27, b"found at least two devices, "),
        (WHEEL_28, b"x, different from other tensors on y"),
    ):
        with zipfile.ZipFile(tmp_path / name, "w") as archive:
            archive.writestr(SO, body)
    proof = dataclasses.replace(
        _proof("DTF9100", "messages[0]", ">=2.8", []),
        checks=(Check("2.7.1", False, WHEEL_27, SO), Check("2.8.0", True, WHEEL_28, SO)),
    )
    assert verify(proof, tmp_path) == []
    wrong = dataclasses.replace(proof, checks=(Check("2.7.1", True, WHEEL_27, SO),))
    assert [problem for _, problem in verify(wrong, tmp_path)] == [f"wording is absent in {SO}"]
    missing = dataclasses.replace(proof, checks=(Check("2.6.0", False, "torch-2.6.0.whl", SO),))
    assert [problem for _, problem in verify(missing, tmp_path)] == ["artifact not downloaded"]


def test_every_shipped_proof_holds(catalog) -> None:
    """The records in proofs/ establish what the KB and the census state (lint runs the same check)."""
    kb = builtin_kb_dir()
    proofs = load_proofs(proofs_dir(kb))
    census = load_census(census_dir(kb))
    by_id = {e.id: e for e in catalog.entries}
    assert proofs, "no proof records found beside the KB"
    assert {p.where: proof_problems(p, by_id, census) for p in proofs if proof_problems(p, by_id, census)} == {}


def test_lint_fails_a_claim_the_proof_contradicts(tmp_path: Path) -> None:
    """A private KB with a proofs/ folder beside it: the entry says 2.5, the proof read 2.8 in the wheels."""
    root = tmp_path / "kb"
    (root / "private").mkdir(parents=True)
    source = builtin_kb_dir() / "devices" / "fused-adam-resumed-step-on-cpu.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["id"] = "DTF9003"
    data["messages"] = [m.replace("torch >= 2.8:", "torch >= 2.5:") for m in data["messages"]]
    path = root / "private" / "my-entry.yaml"
    path.write_text(canonical_text(data), encoding="utf-8")
    (tmp_path / "proofs").mkdir()
    record = {
        "subject": "DTF9003",
        "claim": "messages[1]",
        "spec": ">=2.8",
        "wording": ", different from other tensors on ",
        "checked": [
            {"version": "2.7.1", "present": False, "artifact": WHEEL_27, "file": SO},
            {"version": "2.8.0", "present": True, "artifact": WHEEL_28, "file": SO},
        ],
    }
    (tmp_path / "proofs" / "torch.yaml").write_text(yaml.safe_dump({"library": "torch", "records": [record]}))
    problems = [p for p in lint_paths([path], load_catalog(cache_dir=None)) if p.path.name == "torch.yaml"]
    assert [p.message for p in problems] == [
        "DTF9003 messages[1]: the subject states `>=2.5`, the proof establishes `>=2.8`"
    ]
    assert problems[0].line == 3
