"""Wording and behaviour by version, proven: what was read in which released artifact (``proofs/<library>.yaml``).

An entry's ``affected`` / ``fixed_in`` bounds, its "wording by version" notes (``messages``) and a census row's
``versions`` are claims about releases. A proof record backs one claim with the releases checked at each boundary
of its spec: for each, the artifact read (a wheel or sdist as ``pip download --no-deps`` fetches it, or a repository
at a tag), the file inside it, and whether the literal ``wording`` is there. ``wording`` is the message text itself,
or for a behaviour the source line whose presence shows it (``means`` says what it shows)::

    library: torch
    records:
      - subject: DTF463              # an entry id, or census:<file stem> with `template:` naming the row
        claim: messages[0]           # affected:<pkg> | fixed_in:<pkg> | messages[<i>] | versions (census)
        spec: '>=2.8.0'              # the releases where the wording / behaviour is present
        wording: different from other tensors on
        checked:
          - {version: 2.7.1, present: false, artifact: torch-2.7.1-cp312-none-macosx_11_0_arm64.whl,
             file: torch/lib/libtorch_cpu.dylib}
          - {version: 2.8.0, present: true, ...}

Two kinds of check, both pure functions here: :func:`proof_problems` (offline, run by ``dtypefix lint``) fails a
record whose checked versions contradict its spec, that does not check both sides of each boundary, or whose spec
is not what its subject states; :func:`verify` re-reads the artifacts (``python -m dtypefix.kbtools.proofs
verify DIR`` with the files downloaded into DIR) so that every ``present`` is a fact anyone can reproduce.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name, canonicalize_version
from packaging.version import InvalidVersion, Version

from dtypefix.matcher.entry import KBEntry

from .census import CensusRow, census_dir, load_census

__all__ = [
    "READABLE",
    "Check",
    "Claim",
    "Coverage",
    "NoteSpec",
    "Proof",
    "RepoTag",
    "coverage",
    "kb_coverage",
    "load_proofs",
    "note_spec",
    "proof_problems",
    "proofs_dir",
    "repo_grep",
    "stated_claims",
    "unbracketed",
    "verify",
    "wanted",
]

_VERSION = r"\d+(?:\.(?:\d+|x))*"
# `torch >= 2.8:`, `accelerate 0.30-1.7:` (0.30 up to the last 1.7.x), `accelerate 1.7+:`, `torch 1.12.0 only:`,
# each optionally followed by a parenthesis or `on <device>` before the colon. Anything else before the version
# (`DeepSpeed inference 0.12.6 - 0.15.1:`) or an approximate one (`~4.5-4.8`, `>= 0.0.21 or so`) is not a claim.
_NOTE_SPEC = re.compile(
    r"^\s*(?P<name>[A-Za-z][\w.-]*)\s*(?:"
    r"(?P<spec>(?:[<>=!~]=?\s*[\w.+*]+\s*,?\s*)+)"
    rf"|(?P<low>{_VERSION})\s*[-–]\s*(?P<high>{_VERSION})\s*"
    rf"|(?P<plus>{_VERSION})\+\s*"
    rf"|(?P<only>{_VERSION})\s+only\s*"
    r")(?:\([^()]*\)\s*|on\s+[\w.]+\s*)?:"
)
# Names a note may use for a package besides its PyPI name.
_ALIASES = {"te": "transformer-engine"}


@dataclass(frozen=True)
class Check:
    """One released version read at a boundary."""

    version: str
    present: bool
    """Whether ``wording`` is in ``file`` of that release."""
    artifact: str
    """The wheel / sdist file name as ``pip download --no-deps`` saves it, or ``owner/repo@tag`` for a fetched repo."""
    file: str
    """The member read inside the artifact (a .py file, or a compiled library whose string table holds the text);
    ``*`` reads every Python file and compiled library in it (how an absence is shown where the module did not
    exist yet)."""


@dataclass(frozen=True)
class Proof:
    """One claim about releases and the releases read to establish it."""

    path: Path
    index: int
    library: str
    subject: str
    """An entry id (``DTF463``) or ``census:<file stem>``."""
    claim: str
    """Which statement of the subject: ``affected:<pkg>``, ``fixed_in:<pkg>``, ``messages[<i>]`` or ``versions``."""
    spec: str
    """PEP 440: the releases of ``library`` where ``wording`` is present."""
    wording: str
    means: str
    template: str
    """For a census subject: the row's template."""
    checks: tuple[Check, ...]
    boundary: str = ""
    """One clause of ``spec`` (``<0.45.0``) when the record reads only the releases around it: a claim whose
    boundaries no single line separates (a message reformatted between them, a behaviour bounded by two changes)
    is proven by one record per boundary, each with the literal that separates that boundary."""
    unprovable: str = ""
    """Why the claim cannot be proven from artifacts reachable here (a boundary release that is not published yet,
    a behaviour no line of the released code separates, a wording the code assembles at run time). Such a record
    is not a proof: the claim stays unproven, but with its reason in the data instead of silent. Its ``checked``
    (possibly empty) must still agree with the spec."""

    @property
    def where(self) -> str:
        return f"{self.path.name}[{self.index}] {self.subject} {self.claim}"

    @property
    def key(self) -> tuple[str, str, str, SpecifierSet | None]:
        """What it proves: matches :attr:`Claim.key` of the claim it backs (two census rows may share a template)."""
        return (self.subject, self.claim, self.template, _spec(self.spec))


@dataclass(frozen=True)
class NoteSpec:
    """The package and PEP 440 spec a ``messages`` note starts with (``accelerate 0.30-1.7:`` is ``>=0.30,<1.8``)."""

    library: str
    """Canonical PyPI name."""
    spec: str
    end: int
    """Where the note's text after the colon begins."""


def _after(version: str) -> str:
    """The first version after every ``version`` release: ``1.7`` and ``1.7.x`` -> ``1.8``, ``0.15.1`` -> ``0.15.2``."""
    parts = version.split(".")
    if parts[-1] == "x":
        parts = parts[:-1]
    parts[-1] = str(int(parts[-1]) + 1)
    return ".".join(parts)


def _floor(version: str) -> str:
    parts = [p for p in version.split(".") if p != "x"]
    return ".".join(parts) if len(parts) > 1 else f"{parts[0]}.0"


def note_spec(text: str) -> NoteSpec | None:
    """What a note claims, or None when it does not start with a package and a version range (see ``_NOTE_SPEC``)."""
    found = _NOTE_SPEC.match(text)
    if found is None:
        return None
    name = canonicalize_name(found.group("name"))
    library = _ALIASES.get(name, name)
    if found.group("low"):
        spec = f">={_floor(found.group('low'))},<{_after(found.group('high'))}"
    elif found.group("plus"):
        spec = f">={_floor(found.group('plus'))}"
    elif found.group("only"):
        spec = f"=={found.group('only')}"
    else:
        clauses = []
        for clause in found.group("spec").replace(" ", "").strip(",").split(","):
            op, version = re.fullmatch(r"([<>=!~]=?)(.*)", clause).groups()  # type: ignore[union-attr]
            if version.endswith(".x"):
                op, version = ("<", _after(version)) if op in {"<=", "<"} else (op, _floor(version))
            clauses.append(f"{op}{version}")
        spec = ",".join(clauses)
    return NoteSpec(library, spec, found.end())


@dataclass(frozen=True)
class Claim:
    """One statement about releases that a proof record can back."""

    subject: str
    claim: str
    library: str
    spec: str
    template: str = ""

    @property
    def key(self) -> tuple[str, str, str, SpecifierSet | None]:
        return (self.subject, self.claim, self.template, _spec(self.spec))


def stated_claims(entries: Mapping[str, KBEntry], census: Iterable[CensusRow]) -> list[Claim]:
    """Every version claim of the KB and the census: bounds, notes that start with a spec, census ``versions``."""
    claims: list[Claim] = []
    for entry in sorted(entries.values(), key=lambda e: e.id):
        for name, spec in entry.affected.items():
            claims.append(Claim(entry.id, f"affected:{name}", canonicalize_name(name), str(spec)))
        for name, version in entry.fixed_in.items():
            claims.append(Claim(entry.id, f"fixed_in:{name}", canonicalize_name(name), f">={version}"))
        for index, text in enumerate(entry.messages):
            note = note_spec(text)
            if note is not None:
                claims.append(Claim(entry.id, f"messages[{index}]", note.library, note.spec))
    for row in census:
        if row.versions:
            stem = row.where.split("[", 1)[0]
            claims.append(
                Claim(f"census:{stem}", "versions", canonicalize_name(row.library), row.versions, row.template)
            )
    return claims


@dataclass(frozen=True)
class Coverage:
    """How many of the stated claims a proof record establishes, and which do not have one."""

    total: int
    proven: int
    contradicted: int
    """Claims with a record that does not establish them (lint fails these)."""
    unproven: tuple[Claim, ...]
    """Claims with no record at all."""
    unprovable: tuple[tuple[Claim, str], ...]
    """Claims whose record says why no artifact reachable here can prove them, with that reason."""
    by_library: tuple[tuple[str, int, int], ...]
    """(library, claims, proven), most claims first."""


def coverage(claims: list[Claim], proofs: list[Proof], problems: Mapping[str, list[str]]) -> Coverage:
    """Tally ``claims`` against ``proofs``; ``problems`` maps a record's ``where`` to what :func:`proof_problems` said."""
    good: set[tuple[str, str, str, SpecifierSet | None]] = set()
    bad: set[tuple[str, str, str, SpecifierSet | None]] = set()
    why: dict[tuple[str, str, str, SpecifierSet | None], str] = {}
    sides: dict[tuple[str, str, str, SpecifierSet | None], set[str]] = defaultdict(set)
    for proof in proofs:
        if problems.get(proof.where):
            bad.add(proof.key)
        elif proof.unprovable:
            why.setdefault(proof.key, proof.unprovable)
        elif proof.boundary:
            sides[proof.key].add(_clause(proof.boundary))
        else:
            good.add(proof.key)
    for key, covered in sides.items():  # proven when every boundary of the spec has a record of its own
        if key[3] is not None and {_clause(str(c)) for c in key[3]} <= covered:
            good.add(key)
    proven = [c for c in claims if c.key in good - bad]
    contradicted = [c for c in claims if c.key in bad]
    unprovable = [(c, why[c.key]) for c in claims if c.key in why and c.key not in good | bad]
    done = {c.key for c in proven + contradicted} | {c.key for c, _ in unprovable}
    unproven = tuple(c for c in claims if c.key not in done)
    libraries = sorted({c.library for c in claims}, key=lambda n: (-sum(c.library == n for c in claims), n))
    by_library = tuple((n, sum(c.library == n for c in claims), sum(c.library == n for c in proven)) for n in libraries)
    return Coverage(len(claims), len(proven), len(contradicted), unproven, tuple(unprovable), by_library)


def proofs_dir(kb_dir: Path) -> Path:
    """The proofs beside a KB checkout (``<repo>/proofs`` next to ``<repo>/kb``)."""
    return kb_dir.resolve().parent / "proofs"


def load_proofs(folder: Path) -> list[Proof]:
    """Every record of every ``proofs/*.yaml`` (empty when there is no such folder)."""
    proofs: list[Proof] = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for index, record in enumerate(data["records"]):
            checks = tuple(
                Check(str(c["version"]), bool(c["present"]), str(c["artifact"]), str(c["file"]))
                for c in record.get("checked") or ()
            )
            proofs.append(
                Proof(
                    path=path,
                    index=index,
                    library=str(data["library"]),
                    subject=str(record["subject"]),
                    claim=str(record["claim"]),
                    spec=str(record["spec"]),
                    wording=str(record.get("wording", "")),
                    means=str(record.get("means", "")),
                    template=str(record.get("template", "")),
                    checks=checks,
                    boundary=str(record.get("boundary", "")),
                    unprovable=str(record.get("unprovable", "")),
                )
            )
    return proofs


def kb_coverage(kb_dir: Path, entries: Mapping[str, KBEntry]) -> Coverage:
    """:func:`coverage` of the claims stated by ``entries`` and the census beside ``kb_dir`` by the proofs beside it
    (what ``dtypefix lint`` reports as a warning count and ``dtypefix docs`` publishes)."""
    census = load_census(census_dir(kb_dir))
    proofs = load_proofs(proofs_dir(kb_dir))
    problems = {p.where: proof_problems(p, entries, census) for p in proofs}
    return coverage(stated_claims(entries, census), proofs, problems)


def _clause(text: str) -> str:
    """A spec clause in one canonical form (``< 0.45``, ``<0.45.0`` -> ``<0.45``)."""
    (clause,) = SpecifierSet(text.replace(" ", ""))
    return f"{clause.operator}{canonicalize_version(clause.version, strip_trailing_zero=True)}"


def _spec(text: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(text.replace(" ", ""))
    except InvalidSpecifier:
        return None


def unbracketed(spec: SpecifierSet, versions: list[Version]) -> list[str]:
    """Each boundary of ``spec`` that the checked versions do not bracket (a present and an absent side)."""
    missing: list[str] = []
    for clause in spec:
        bound = Version(clause.version.replace(".*", ""))
        inside = [v for v in versions if v in spec]
        outside = [v for v in versions if v not in spec]
        if clause.operator in {">=", "~="}:
            ok = any(v >= bound for v in inside) and any(v < bound for v in outside)
        elif clause.operator == ">":
            ok = any(v > bound for v in inside) and any(v <= bound for v in outside)
        elif clause.operator == "<":
            ok = any(v < bound for v in inside) and any(v >= bound for v in outside)
        elif clause.operator == "<=":
            ok = any(v <= bound for v in inside) and any(v > bound for v in outside)
        else:  # == / != pin one release: it and a neighbour
            ok = bool(inside) and bool(outside)
        if not ok:
            missing.append(f"{clause.operator}{clause.version}")
    return missing


def _stated(proof: Proof, entries: Mapping[str, KBEntry], census: Iterable[CensusRow]) -> tuple[list[str], str]:
    """What the subject states for the claim (one spec per place it is stated), or a problem."""
    kind, _, arg = proof.claim.partition(":")
    if proof.subject.startswith("census:"):
        stem = proof.subject.removeprefix("census:")
        rows = [r for r in census if r.where.startswith(f"{stem}[") and r.template == proof.template and r.versions]
        if proof.claim != "versions" or not rows:
            return [], f"no census/{stem}.yaml row with this template states `versions`"
        same = [row.versions for row in rows if _spec(row.versions) == _spec(proof.spec)]
        return same or [row.versions for row in rows], ""
    entry = entries.get(proof.subject)
    if entry is None:
        return [], "no entry with this id"
    if kind == "affected" and arg in entry.affected:
        return [str(entry.affected[arg])], ""
    if kind == "fixed_in" and arg in entry.fixed_in:
        return [f">={entry.fixed_in[arg]}"], ""  # the fix is present from that release on
    found = re.fullmatch(r"messages\[(\d+)\]", proof.claim)
    if found and int(found.group(1)) < len(entry.messages):
        note = note_spec(entry.messages[int(found.group(1))])
        if note is None or note.library != canonicalize_name(proof.library):
            return [], f"the note does not start with `{proof.library} <spec>:`"
        return [note.spec], ""
    return [], f"the entry states no `{proof.claim}`"


def proof_problems(proof: Proof, entries: Mapping[str, KBEntry], census: Iterable[CensusRow]) -> list[str]:
    """Why ``proof`` does not establish its claim: a contradiction, an unchecked boundary, a different stated spec."""
    spec = _spec(proof.spec)
    if spec is None:
        return [f"spec {proof.spec!r} is not a PEP 440 specifier"]
    problems: list[str] = []
    versions: list[Version] = []
    for check in proof.checks:
        try:
            version = Version(check.version)
        except InvalidVersion:
            problems.append(f"checked version {check.version!r} is not a PEP 440 version")
            continue
        versions.append(version)
        if (version in spec) != check.present:
            state = "present" if check.present else "absent"
            problems.append(f"{proof.library} {check.version}: wording {state}, which contradicts `{proof.spec}`")
    clauses = {_clause(str(c)) for c in spec}
    if proof.boundary and _clause(proof.boundary) not in clauses:
        problems.append(f"boundary `{proof.boundary}` is not a clause of `{proof.spec}`")
    if not proof.unprovable:  # an unprovable record says why its boundaries are not all read
        problems.extend(
            f"boundary `{b}` not checked on both sides (a release inside and one outside)"
            for b in unbracketed(spec, versions)
            if not proof.boundary or _clause(b) == _clause(proof.boundary)
        )
    stated, problem = _stated(proof, entries, census)
    if problem:
        problems.append(problem)
    for text in stated:
        if _spec(text) != spec:
            problems.append(f"the subject states `{text or '(no versions)'}`, the proof establishes `{proof.spec}`")
    return problems


# What ``*`` reads: the code that runs (Python sources, compiled libraries, and the C++/CUDA sources an sdist
# compiles), not headers shipped for extensions, which may still declare a check that no compiled code calls any more.
READABLE = (".py", ".so", ".dylib", ".pyd", ".dll", ".cpp", ".cc", ".cu")


def wanted(name: str, member: str) -> bool:
    """Whether the artifact member ``name`` is read for ``member``: the runnable code for ``*``, else that file
    whatever its kind (a header named on purpose is read)."""
    if member == "*":
        return name.endswith(READABLE)
    return name == member or name.endswith("/" + member)


def _contains(artifact: Path, member: str, needle: bytes) -> bool | None:
    """Whether ``needle`` is in ``member`` of the wheel / sdist (any readable file for ``*``); None: no such file."""
    found = False
    if artifact.suffix in {".whl", ".zip"}:
        with zipfile.ZipFile(artifact) as archive:
            for name in archive.namelist():
                if wanted(name, member):
                    found = True
                    if needle in archive.read(name):
                        return True
        return False if found or member == "*" else None
    with tarfile.open(artifact) as archive:
        for info in archive:
            if info.isfile() and wanted(info.name, member):
                found = True
                handle = archive.extractfile(info)
                if handle is not None and needle in handle.read():
                    return True
    return False if found or member == "*" else None


@dataclass(frozen=True)
class RepoTag:
    """A release read at its tag in a repository mirror (a git directory); a record names it ``owner/name@tag``.

    For projects whose wheels hold no sources (Transformer Engine ships compiled libraries in per-framework
    packages that pip cannot fetch here), the release tag is the reachable artifact."""

    git_dir: Path
    repo: str
    tag: str

    @property
    def name(self) -> str:
        return f"{self.repo}@{self.tag}"

    def files(self, member: str) -> list[str]:
        """The readable files at the tag (``member`` itself, or every file ``*`` reads)."""
        out = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), "ls-tree", "-r", "--name-only", self.tag],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.splitlines()
        return [name for name in out if wanted(name, member)]


def repo_grep(tag: RepoTag, literal: str, member: str) -> list[str]:
    """The files at the tag holding ``literal`` (``member`` only, unless it is ``*``), first in path order."""
    specs = [f"*{ext}" for ext in READABLE] if member == "*" else [member, f"*/{member}"]
    run = subprocess.run(
        ["git", "--git-dir", str(tag.git_dir), "grep", "-l", "-F", "-e", literal, tag.tag, "--", *specs],
        capture_output=True,
        text=True,
        check=False,
    )
    return [line.split(":", 1)[1] for line in run.stdout.splitlines() if ":" in line]


def _mirror(cache: Path, artifact: str) -> RepoTag | None:
    """``owner/name@tag`` as a tag of the mirror in ``cache`` (``<owner>+<name>/repo`` or ``<owner>+<name>``)."""
    repo, at, tag = artifact.partition("@")
    if not at or "/" not in repo:
        return None
    folder = cache / repo.replace("/", "+", 1)
    for git_dir in (folder / "repo", folder):
        if (git_dir / "HEAD").is_file():
            return RepoTag(git_dir, repo, tag)
    return None


def verify(proof: Proof, cache: Path) -> list[tuple[Check, str]]:
    """Re-read each checked artifact found in ``cache``: (check, problem) where the file says otherwise.

    An artifact that is not in ``cache`` is reported as such, never counted as verified; a repository tag is read
    in a mirror under ``cache`` (``<owner>+<name>/repo``, the layout ``fetch`` leaves).
    """
    out: list[tuple[Check, str]] = []
    needle = proof.wording.encode("utf-8")
    for check in proof.checks:
        if (tag := _mirror(cache, check.artifact)) is not None:
            if check.file != "*" and not tag.files(check.file):
                out.append((check, f"{check.file} not in {check.artifact}"))
            elif bool(repo_grep(tag, proof.wording, check.file)) != check.present:
                out.append((check, f"wording is {'absent' if check.present else 'present'} in {check.file}"))
            continue
        artifact = cache / check.artifact
        if not artifact.is_file():
            out.append((check, "artifact not downloaded"))
            continue
        present = _contains(artifact, check.file, needle)
        if present is None:
            out.append((check, f"{check.file} not in {check.artifact}"))
        elif present != check.present:
            out.append((check, f"wording is {'absent' if check.present else 'present'} in {check.file}"))
    return out


def _main(argv: list[str]) -> int:
    """``verify DIR [PROOFS_DIR]``: re-read every checked artifact present in DIR; exit 1 on a contradiction."""
    if len(argv) < 2 or argv[0] != "verify":
        print("usage: python -m dtypefix.kbtools.proofs verify DOWNLOAD_DIR [PROOFS_DIR]", file=sys.stderr)
        return 2
    folder = Path(argv[2]) if len(argv) > 2 else Path("proofs")
    proofs = load_proofs(folder)
    read = wrong = 0
    for proof in proofs:
        for check, problem in verify(proof, Path(argv[1])):
            if problem == "artifact not downloaded":
                print(f"{proof.where}: {check.version}: {problem}")
                continue
            wrong += 1
            print(f"{proof.where}: {check.version}: {problem}")
        read += len(proof.checks)
    print(f"{len(proofs)} records, {read} checks, {wrong} contradicted by the artifacts")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
