"""kbtools/prove.py and the claims of kbtools/proofs.py: which releases a claim's boundaries need, which literals a
message offers, which notes are claims, and how the coverage is tallied. Offline: no download, no index."""

from __future__ import annotations

import dataclasses
import zipfile
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from dtypefix.kbtools.proofs import (
    Check,
    Claim,
    Proof,
    RepoTag,
    coverage,
    note_spec,
    proof_problems,
    repo_grep,
    stated_claims,
    verify,
)
from dtypefix.kbtools.prove import Scanner, boundary_releases, candidates, prove, record_yaml, tag_releases
from dtypefix.matcher.entry import KBEntry


@pytest.fixture(scope="module")
def base(catalog) -> KBEntry:
    return next(e for e in catalog.entries if e.kind == "family")


RELEASES = [Version(v) for v in ("0.29.3", "0.30.0", "0.30.1", "1.3.0", "1.4.0", "1.7.0", "1.8.0", "2.0.0rc1")]


def _picked(spec: str) -> list[str]:
    return [str(v) for v in boundary_releases(SpecifierSet(spec), RELEASES)]


def test_each_boundary_reads_the_last_release_outside_and_the_first_inside() -> None:
    assert _picked(">=0.30,<1.4") == ["0.29.3", "0.30.0", "1.3.0", "1.4.0"]
    assert _picked("<=1.3.0") == ["1.3.0", "1.4.0"]
    assert _picked(">1.3.0") == ["1.3.0", "1.4.0"]
    assert _picked("==0.30.0") == ["0.29.3", "0.30.0", "0.30.1"]
    # a run left out: both ends of the run and the releases around it; pre-releases are never read
    assert _picked("<2,!=1.4.*,!=1.7.*") == ["1.3.0", "1.4.0", "1.7.0", "1.8.0"]


@pytest.mark.parametrize(
    ("note", "library", "spec"),
    [
        ('torch >= 2.8: "x"', "torch", ">=2.8"),
        ('accelerate 0.30-1.7: "x"', "accelerate", ">=0.30,<1.8"),
        ('triton 2.2 – 3.1: "x"', "triton", ">=2.2,<3.2"),
        ('bitsandbytes <= 0.44.x: "x"', "bitsandbytes", "<0.45"),
        ('accelerate 1.7+: "x"', "accelerate", ">=1.7"),
        ('torch 1.12.0 only: "x"', "torch", "==1.12.0"),
        ('DeepSpeed 0.12.6 - 0.15.1 (inference): "x"', "deepspeed", ">=0.12.6,<0.15.2"),
        ('TE <= 1.4: "x"', "transformer-engine", "<=1.4"),
        ('torch < 2.4 on MPS: "x"', "torch", "<2.4"),
    ],
)
def test_a_note_that_starts_with_a_package_and_versions_is_a_claim(note: str, library: str, spec: str) -> None:
    parsed = note_spec(note)
    assert parsed is not None
    assert (parsed.library, parsed.spec) == (library, spec)
    assert note[parsed.end :].strip() == '"x"'


@pytest.mark.parametrize(
    "note",
    ['transformers ~4.5-4.8: "x"', 'torch 2.x up to 2.12: "x"', 'all releases: "x"', 'DeepSpeed inference 0.12: "x"'],
)
def test_approximate_or_qualified_notes_are_not_claims(note: str) -> None:
    assert note_spec(note) is None


def test_candidates_are_the_literal_runs_longest_first() -> None:
    found = candidates('"ValueError: Passing in a `FP8RecipeKwargs` object requires {x}." (more)')
    assert found[0] == "Passing in a `FP8RecipeKwargs` object requires"
    assert "object requires" in found and "FP8RecipeKwargs" in found
    assert all(not c.startswith("ValueError") for c in found)
    # a C++ sentence streamed piece by piece: its clauses are candidates too
    assert "but found at least two devices" in candidates('"Expected all, but found at least two devices, a and b!"')


def _claim(spec: str = ">=0.30,<1.4") -> Claim:
    return Claim("DTF9200", "messages[0]", "accelerate", spec)


def _fake(found: dict[str, set[str]]):  # release -> literals present in its artifact
    def artifact(version: Version) -> Path:
        return Path(f"accelerate-{version}-py3-none-any.whl")

    def scan(path: Path, literals: list[str], member: str) -> dict[str, str]:
        version = path.name.split("-")[1]
        return {lit: "accelerate/accelerator.py" for lit in literals if lit in found.get(version, set())}

    return artifact, scan


def test_prove_records_the_first_literal_that_agrees_at_every_boundary() -> None:
    artifact, scan = _fake({"0.30.0": {"old", "common"}, "1.3.0": {"old", "common"}, "1.4.0": {"common"}})
    outcome = prove(_claim(), ["common", "old"], RELEASES, artifact, scan=scan)
    assert outcome.problem == ""
    assert outcome.wording == "old"
    assert [(c.version, c.present, c.file) for c in outcome.checks] == [
        ("0.29.3", False, "*"),
        ("0.30.0", True, "accelerate/accelerator.py"),
        ("1.3.0", True, "accelerate/accelerator.py"),
        ("1.4.0", False, "*"),
    ]
    text = record_yaml(outcome, means="why")
    assert "    spec: '>=0.30,<1.4'\n    wording: 'old'\n    means: 'why'\n" in text


def test_prove_reports_a_contradiction_and_a_boundary_it_cannot_bracket() -> None:
    artifact, scan = _fake({"0.30.0": {"old"}, "1.3.0": {"old"}, "1.4.0": {"old"}})
    assert (
        prove(_claim(), ["old"], RELEASES, artifact, scan=scan).problem == "contradicts `>=0.30,<1.4`: 1.4.0: present"
    )
    early = [v for v in RELEASES if v >= Version("0.30.0")]  # nothing listed before the lower bound
    artifact, scan = _fake({"0.30.0": {"old"}, "1.3.0": {"old"}})
    assert prove(_claim(), ["old"], early, artifact, scan=scan).problem.startswith("no release listed on both sides")


def test_coverage_counts_a_claim_proven_only_by_a_record_that_holds(base: KBEntry) -> None:
    entry = dataclasses.replace(base, id="DTF9200", messages=('accelerate 0.30-1.3: "x"',), affected={}, fixed_in={})
    entries = {"DTF9200": entry}
    claims = stated_claims(entries, [])
    assert claims == [Claim("DTF9200", "messages[0]", "accelerate", ">=0.30,<1.4")]
    checks = tuple(
        Check(v, p, f"accelerate-{v}.whl", "*")
        for v, p in (("0.29.3", False), ("0.30.0", True), ("1.3.0", True), ("1.4.0", False))
    )
    proof = Proof(
        Path("proofs/accelerate.yaml"), 0, "accelerate", "DTF9200", "messages[0]", ">=0.30,<1.4", "x", "", "", checks
    )
    good = coverage(claims, [proof], {proof.where: proof_problems(proof, entries, [])})
    assert (good.total, good.proven, good.contradicted, good.unproven) == (1, 1, 0, ())
    wrong = dataclasses.replace(proof, checks=(*checks[:3], Check("1.4.0", True, "accelerate-1.4.0.whl", "*")))
    bad = coverage(claims, [wrong], {wrong.where: proof_problems(wrong, entries, [])})
    assert (bad.proven, bad.contradicted) == (0, 1)
    assert coverage(claims, [], {}).unproven == tuple(claims)


def _accelerate_claim(base: KBEntry) -> tuple[dict[str, KBEntry], list[Claim]]:
    entry = dataclasses.replace(base, id="DTF9201", messages=('accelerate 0.30-1.3: "x"',), affected={}, fixed_in={})
    entries = {"DTF9201": entry}
    return entries, stated_claims(entries, [])


def _record(checks: tuple[tuple[str, bool], ...], **extra: str) -> Proof:
    done = tuple(Check(v, p, f"accelerate-{v}.whl", "*") for v, p in checks)
    return Proof(
        Path("proofs/accelerate.yaml"),
        0,
        "accelerate",
        "DTF9201",
        "messages[0]",
        ">=0.30,<1.4",
        "x",
        "",
        "",
        done,
        **extra,
    )


def test_a_claim_is_proven_by_one_record_per_boundary(base: KBEntry) -> None:
    """Two literals, each separating one boundary, prove the claim together; either alone does not."""
    entries, claims = _accelerate_claim(base)
    low = _record((("0.29.3", False), ("0.30.0", True)), boundary=">=0.30")
    high = dataclasses.replace(_record((("1.3.0", True), ("1.4.0", False)), boundary="<1.4.0"), index=1)
    assert proof_problems(low, entries, []) == proof_problems(high, entries, []) == []
    both = coverage(claims, [low, high], {})
    assert (both.proven, both.unproven) == (1, ())
    assert coverage(claims, [low], {}).unproven == tuple(claims)
    wrong = _record((("0.29.3", False), ("0.30.0", True)), boundary="<2.0")
    assert "boundary `<2.0` is not a clause of `>=0.30,<1.4`" in proof_problems(wrong, entries, [])


def test_an_unprovable_record_keeps_its_reason_and_is_not_a_proof(base: KBEntry) -> None:
    entries, claims = _accelerate_claim(base)
    record = _record((("0.29.3", False), ("0.30.0", True)), unprovable="no release after 1.3 yet")
    assert proof_problems(record, entries, []) == []  # the open boundary is what the reason explains
    tally = coverage(claims, [record], {record.where: []})
    assert (tally.proven, tally.unproven, tally.unprovable) == (0, (), ((claims[0], "no release after 1.3 yet"),))
    contradicted = _record((("0.29.3", True),), unprovable="why")  # its checks must still agree with the spec
    assert proof_problems(contradicted, entries, []) != []


def test_releases_are_read_at_their_tags_in_a_repository_mirror(tmp_path: Path) -> None:
    """A real git repository with two tags: tag_releases lists them, repo_grep and verify read them."""
    import subprocess

    work = tmp_path / "work"
    work.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (work / "pkg").mkdir()
    for tag, text in (("v1.4", "old wording"), ("v1.5", "new wording")):
        (work / "pkg" / "utils.py").write_text(f"raise ValueError('{text}')\n")
        git("add", "-A")
        git("commit", "-qm", tag)
        git("tag", tag)
    git("tag", "v1.6rc1")
    mirror = tmp_path / "mirror" / "acme+engine"
    subprocess.run(["git", "clone", "-q", "--mirror", str(work), str(mirror / "repo")], check=True)
    assert tag_releases(["v1.4", "v1.5", "v1.6rc1", "nightly"]) == {Version("1.4"): "v1.4", Version("1.5"): "v1.5"}
    tag = RepoTag(mirror / "repo", "acme/engine", "v1.5")
    assert repo_grep(tag, "new wording", "*") == ["pkg/utils.py"]
    assert repo_grep(tag, "old wording", "pkg/utils.py") == []
    proof = Proof(
        Path("proofs/engine.yaml"),
        0,
        "engine",
        "DTF9202",
        "messages[0]",
        ">=1.5",
        "new wording",
        "",
        "",
        (Check("1.4", False, "acme/engine@v1.4", "pkg/utils.py"), Check("1.5", True, "acme/engine@v1.5", "*")),
    )
    assert verify(proof, tmp_path / "mirror") == []
    wrong = dataclasses.replace(proof, checks=(Check("1.4", True, "acme/engine@v1.4", "pkg/utils.py"),))
    assert [problem for _, problem in verify(wrong, tmp_path / "mirror")] == ["wording is absent in pkg/utils.py"]


def test_a_header_is_read_when_named_and_left_out_of_star(tmp_path: Path) -> None:
    """A behaviour can live in a header only (torch's size-1 stride rule in ATen/native/ForeachUtils.h): naming the
    member reads it, while ``*`` keeps to the code that runs."""
    wheel = tmp_path / "torch-2.5.0-cp312-none-macosx_11_0_arm64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("torch/include/ATen/native/ForeachUtils.h", "if (size[dim] == 1)\n")
        archive.writestr("torch/optim/adam.py", "fused = True\n")
    header = "torch/include/ATen/native/ForeachUtils.h"
    assert Scanner()(wheel, ["if (size[dim] == 1)"], header) == {"if (size[dim] == 1)": header}
    assert Scanner()(wheel, ["if (size[dim] == 1)", "fused = True"], "*") == {"fused = True": "torch/optim/adam.py"}
