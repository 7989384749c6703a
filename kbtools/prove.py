"""Write proof records by reading the released artifacts at each boundary of a claim (``proofs/``, ``proofs.py``).

A claim states a PEP 440 spec; its boundaries are the clause versions. For each boundary this module takes the last
release outside and the first release inside (from ``pip index versions``), downloads both with
``pip download --no-deps`` and searches them for the wording. The wording is a literal: given by hand for a
behaviour (a line of the fix), or, for a ``messages`` note or a census row, taken from the quoted message or the
template — each literal run between its variable parts is a candidate, longest first, and the first one found
inside the spec that agrees with it at every boundary is recorded. A claim is proven when every checked release
agrees with the spec; otherwise the tool prints what the artifacts say, and the claim (not the record) is what has
to change. Each artifact is read once per run for all the literals any claim wants from it (:class:`Scanner`).

    python -m dtypefix.kbtools.prove DTF251 'affected:accelerate' --wording 'Unknown mixed precision value' --write
    python -m dtypefix.kbtools.prove --sweep [--library torch] [--write]

The selection of boundary releases and of candidate literals are pure functions (tested); downloading and
searching are the I/O around them.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from dtypefix.matcher.catalog import builtin_kb_dir, load_catalog
from dtypefix.matcher.entry import KBEntry

from .census import census_dir, load_census
from .proofs import (
    Check,
    Claim,
    RepoTag,
    load_proofs,
    note_spec,
    proofs_dir,
    repo_grep,
    stated_claims,
    unbracketed,
    wanted,
)

__all__ = ["Outcome", "Scanner", "boundary_releases", "candidates", "prove", "record_yaml", "tag_releases"]

Artifact = Path | RepoTag
"""A downloaded wheel / sdist, or a release read at its tag in a repository mirror."""

# torch: the macOS wheels are small and hold the same .py files and C++ check strings as the Linux builds.
_TORCH_PLATFORMS = (
    ("macosx_14_0_arm64", "3.12"),
    ("macosx_11_0_arm64", "3.9"),
    ("macosx_10_9_x86_64", "3.9"),
    ("macosx_10_9_x86_64", "3.7"),
)
# What separates the literal runs of a quoted message: elisions and placeholders; then quotes, which the source may
# write escaped or build from another string; last, the clauses of a sentence that C++ streams piece by piece.
_VARIABLE = re.compile(r"\.\.\.|…|\[\.\.\.\]|\{[^}]*\}|<[^>]*>")
_QUOTES = re.compile(r"[\"'`]")
_CLAUSES = re.compile(r", |! |\(|\)|: ")
_EXCEPTION = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning):\s*")
_QUOTED = re.compile(r'"([^"]+)"')
_MIN_LITERAL = 14


def boundary_releases(spec: SpecifierSet, releases: Iterable[Version]) -> list[Version]:
    """The releases to read for ``spec``: around each clause, the last release on one side and the first on the other.

    ``!=X.*`` (a run of releases left out) also reads the first and last release of the run.
    """
    ordered = sorted(v for v in set(releases) if not v.is_prerelease and not v.is_devrelease)
    picked: set[Version] = set()
    for clause in spec:
        text = clause.version
        star = text.endswith(".*")
        bound = Version(text.removesuffix(".*"))
        if clause.operator in {"<=", ">"} and not star:
            below = [v for v in ordered if v <= bound]
            above = [v for v in ordered if v > bound]
        else:
            below = [v for v in ordered if v < bound]
            above = [v for v in ordered if v >= bound]
        picked.update(below[-1:] + above[:1])
        if clause.operator in {"==", "!="}:
            run = [v for v in ordered if v in SpecifierSet(f"=={text}")]
            after = [v for v in ordered if v > (run[-1] if run else bound) and v not in run]
            picked.update(run[:1] + run[-1:] + after[:1])
    return sorted(picked)


def candidates(text: str) -> list[str]:
    """Literal runs of a message (a note's quoted wording or a census template), longest first.

    The exception class a traceback prints before the message is not in the source, nor are the variable parts.
    """
    quoted = _QUOTED.findall(text) or [text]
    runs: list[str] = []
    for message in quoted:
        for run in _VARIABLE.split(_EXCEPTION.sub("", message)):
            for part in [run, *_QUOTES.split(run), *_CLAUSES.split(run)]:
                part = part.strip(" .,:;()![]")
                if len(part) >= _MIN_LITERAL and part not in runs:
                    runs.append(part)
    return sorted(runs, key=len, reverse=True)


@dataclass(frozen=True)
class Outcome:
    """What the artifacts say about one claim."""

    claim: Claim
    wording: str
    """The literal recorded (empty when no candidate was found in any release inside the spec)."""
    checks: tuple[Check, ...]
    problem: str
    """Empty when every check agrees with the spec."""


def _releases(package: str) -> list[Version]:
    """The releases the index lists (for torch, the union over the macOS targets its old wheels were built for)."""
    targets: list[list[str]] = [[]]
    if canonicalize_name(package) == "torch":
        targets = [["--only-binary=:all:", "--platform", p, "--python-version", py] for p, py in _TORCH_PLATFORMS]
    versions: set[Version] = set()
    for target in targets:
        command = [sys.executable, "-m", "pip", "index", "versions", package, *target]
        out = subprocess.run(command, capture_output=True, text=True, check=False).stdout
        found = re.search(r"Available versions:\s*(.+)", out)
        for text in found.group(1).split(",") if found else []:
            try:
                versions.add(Version(text.strip()))
            except InvalidVersion:
                continue
    return sorted(versions)


def _cached(package: str, version: Version, cache: Path) -> Path | None:
    stems = {package, package.replace("-", "_"), canonicalize_name(package).replace("-", "_")}
    for path in sorted(cache.iterdir()):
        for stem in stems:
            if path.name.lower().startswith(f"{stem.lower()}-{version}-") or path.name.lower() in {
                f"{stem.lower()}-{version}.tar.gz",
                f"{stem.lower()}-{version}.zip",
            }:
                return path
    return None


def _download(package: str, version: Version, cache: Path) -> Path | None:
    """The wheel (or sdist) of ``package==version`` in ``cache``, downloaded when not there yet."""
    if (hit := _cached(package, version, cache)) is not None:
        return hit
    base = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"{package}=={version}", "-d", str(cache)]
    tries = (
        [[*base, "--only-binary=:all:", "--platform", p, "--python-version", py] for p, py in _TORCH_PLATFORMS]
        if canonicalize_name(package) == "torch"
        else [base]
    )
    for command in tries:
        if subprocess.run(command, capture_output=True, check=False).returncode == 0:
            return _cached(package, version, cache)
    return _download_sdist(package, version, cache)


def _download_sdist(package: str, version: Version, cache: Path) -> Path | None:
    """The sdist itself, from the package index's simple page: pip refuses one whose metadata does not build here
    (DeepSpeed's setup.py wants torch), but the files in it are all a proof reads."""
    index = f"https://pypi.org/simple/{canonicalize_name(package)}/"
    try:
        with urllib.request.urlopen(index, timeout=60) as page:
            links: list[str] = re.findall(r'href="([^"#]+)', page.read().decode("utf-8"))
    except OSError:
        return None
    names = {f"{stem}-{version}.tar.gz" for stem in (package, package.replace("-", "_"), canonicalize_name(package))}
    for link in links:
        name = link.rsplit("/", 1)[-1]
        if name in names and link.startswith("https://"):
            target = cache / name
            with urllib.request.urlopen(link, timeout=300) as body:
                target.write_bytes(body.read())
            return target
    return None


def _members(artifact: Path, member: str) -> Iterator[tuple[str, bytes]]:
    if artifact.suffix in {".whl", ".zip"}:
        with zipfile.ZipFile(artifact) as archive:
            for name in archive.namelist():
                if wanted(name, member):
                    yield name, archive.read(name)
        return
    with tarfile.open(artifact) as archive:
        for info in archive:
            handle = archive.extractfile(info) if info.isfile() and wanted(info.name, member) else None
            if handle is not None:
                yield info.name, handle.read()


def _has_member(artifact: Artifact, member: str) -> bool:
    """Whether ``member`` is in the artifact (``*`` always is)."""
    if member == "*":
        return True
    if isinstance(artifact, RepoTag):
        return bool(artifact.files(member))
    if artifact.suffix in {".whl", ".zip"}:
        with zipfile.ZipFile(artifact) as archive:
            names = archive.namelist()
    else:
        with tarfile.open(artifact) as archive:
            names = archive.getnames()
    return any(name == member or name.endswith("/" + member) for name in names)


def _where(artifact: Artifact, literals: list[str], member: str) -> dict[str, str]:
    """For each literal found in ``artifact``: the first member holding it (only ``member`` unless it is ``*``)."""
    found: dict[str, str] = {}
    if isinstance(artifact, RepoTag):
        for literal in literals:
            if names := repo_grep(artifact, literal, member):
                found[literal] = names[0]
        return found
    for name, data in _members(artifact, member):
        for literal in literals:
            if literal not in found and literal.encode("utf-8") in data:
                found[literal] = name.split("/", 1)[1] if artifact.suffix == ".gz" else name
    return found


Scan = Callable[[Artifact, list[str], str], dict[str, str]]


def tag_releases(tags: Iterable[str]) -> dict[Version, str]:
    """The releases a repository's tags name (``v2.4`` -> 2.4), each with its tag; pre-releases and other tags
    are left out."""
    out: dict[Version, str] = {}
    for tag in tags:
        try:
            version = Version(tag.removeprefix("v"))
        except InvalidVersion:
            continue
        if not version.is_prerelease and not version.is_devrelease:
            out.setdefault(version, tag)
    return out


class Scanner:
    """Reads each artifact once for all the literals the claims of a run want from it (torch's libraries are
    hundreds of MB unpacked); register them with :meth:`want` before the first read."""

    def __init__(self) -> None:
        self._wanted: dict[Artifact, set[str]] = defaultdict(set)
        self._read: dict[tuple[Artifact, str], tuple[set[str], dict[str, str]]] = {}

    def want(self, artifact: Artifact, literals: Iterable[str]) -> None:
        self._wanted[artifact].update(literals)

    def __call__(self, artifact: Artifact, literals: list[str], member: str) -> dict[str, str]:
        done = self._read.get((artifact, member))
        if done is None or not set(literals) <= done[0]:
            pending = set(literals) | self._wanted[artifact]
            done = (pending, _where(artifact, sorted(pending), member))
            self._read[(artifact, member)] = done
        return {lit: name for lit, name in done[1].items() if lit in literals}


def prove(
    claim: Claim,
    literals: list[str],
    releases: list[Version],
    artifact: Callable[[Version], Artifact | None],
    member: str = "*",
    scan: Scan = _where,
    boundary: str = "",
) -> Outcome:
    """Read the boundary releases of the claim's spec for the literals (see the module doc): the first one found in a
    release inside the spec that agrees with it at every boundary is recorded, else the first one found."""
    spec = SpecifierSet(claim.spec.replace(" ", ""))
    versions = boundary_releases(SpecifierSet(boundary.replace(" ", "")) if boundary else spec, releases)
    artifacts = {v: artifact(v) for v in versions}
    missing = [str(v) for v, a in artifacts.items() if a is None]
    if not versions or missing:
        why = f"no release could be downloaded: {', '.join(missing)}" if missing else "no releases listed"
        return Outcome(claim, "", (), why)
    seen = {v: scan(a, literals, member) for v, a in artifacts.items() if a is not None}
    inside = [v for v in versions if v in spec]
    found = [lit for lit in literals if any(lit in seen[v] for v in inside)]
    agreeing = [lit for lit in found if all((lit in seen[v]) == (v in spec) for v in versions)]
    if not found:
        return Outcome(claim, "", (), "no candidate wording found in the releases inside")
    wording = (agreeing or found)[0]
    for v, a in artifacts.items():
        if a is not None and wording not in seen[v] and member != "*" and not _has_member(a, member):
            seen[v] = scan(a, [wording], "*")  # the file is not there yet: read the whole artifact for the absence
    checks = tuple(
        Check(str(v), wording in seen[v], a.name, seen[v].get(wording, member if _has_member(a, member) else "*"))
        for v, a in artifacts.items()
        if a is not None
    )
    wrong = [c for c in checks if (Version(c.version) in spec) != c.present]
    problem = ", ".join(f"{c.version}: {'present' if c.present else 'absent'}" for c in wrong)
    if wrong:
        return Outcome(claim, wording, checks, f"contradicts `{claim.spec}`: {problem}")
    open_ends = unbracketed(spec, [Version(c.version) for c in checks])
    if boundary:
        open_ends = [b for b in open_ends if SpecifierSet(b) == SpecifierSet(boundary.replace(" ", ""))]
    if open_ends:
        return Outcome(claim, wording, checks, f"no release listed on both sides of {', '.join(open_ends)}")
    return Outcome(claim, wording, checks, "")


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, text=True, check=False).stdout


def _tag(git_dir: Path, tags: Mapping[Version, str], version: Version) -> RepoTag | None:
    """The release ``version`` at its tag in the mirror (named ``owner/name@tag`` after the mirror's folder)."""
    owner_name = git_dir.resolve().parent.name if git_dir.name == "repo" else git_dir.name
    return RepoTag(git_dir, owner_name.replace("+", "/", 1), tags[version]) if version in tags else None


def _quote(text: str) -> str:
    """A YAML scalar for ``text``: single-quoted, or double-quoted with escapes where it spans lines."""
    if "\n" in text or "\\" in text or "\t" in text:
        return json.dumps(text, ensure_ascii=False)
    return "'" + text.replace("'", "''") + "'"


def record_yaml(outcome: Outcome, means: str = "", unprovable: str = "", boundary: str = "") -> str:
    """The record as it is appended to ``proofs/<library>.yaml`` (one line per check, as the files are written).

    With ``unprovable`` (why no artifact reachable here proves the claim), the record keeps only the checks that
    agree with the spec — the boundary it could read — and says why the rest is not proven."""
    claim = outcome.claim
    lines = [f"  - subject: {claim.subject}", f"    claim: {claim.claim}"]
    if claim.template:
        lines.append(f"    template: {_quote(claim.template)}")
    lines += [f"    spec: {_quote(claim.spec)}", f"    wording: {_quote(outcome.wording)}"]
    if means:
        lines.append(f"    means: {_quote(means)}")
    if boundary:
        lines.append(f"    boundary: {_quote(boundary)}")
    spec = SpecifierSet(claim.spec.replace(" ", ""))
    checks = [c for c in outcome.checks if not unprovable or (Version(c.version) in spec) == c.present]
    if unprovable:
        lines.append(f"    unprovable: {_quote(unprovable)}")
    lines.append("    checked:" if checks else "    checked: []")
    for c in checks:
        present = "true" if c.present else "false"
        lines.append(
            f"      - {{version: {c.version}, present: {present}, artifact: {c.artifact}, file: {_quote(c.file)}}}"
        )
    return "\n".join(lines) + "\n"


def _append(folder: Path, library: str, text: str) -> None:
    path = folder / f"{canonicalize_name(library)}.yaml"
    if not path.exists():
        path.write_text(
            f"# Wording by version, proven against released {library} artifacts (format: kbtools/proofs.py;\n"
            "# written by kbtools/prove.py).\n"
            f"library: {canonicalize_name(library)}\nrecords:\n",
            encoding="utf-8",
        )
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def _wording_source(claim: Claim, entries: Mapping[str, KBEntry]) -> str:
    """The text a claim's candidate literals come from: the census template, or the note after its spec."""
    if claim.template:
        return claim.template
    found = re.fullmatch(r"messages\[(\d+)\]", claim.claim)
    if not found or claim.subject not in entries:
        return ""
    note = str(entries[claim.subject].messages[int(found.group(1))])
    parsed = note_spec(note)
    return note[parsed.end :] if parsed else note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dtypefix.kbtools.prove", description=__doc__.split("\n\n")[0])
    parser.add_argument("subject", nargs="?", help="entry id, or census:<library>")
    parser.add_argument("claim", nargs="?", help="affected:<pkg> | fixed_in:<pkg> | messages[<i>] | versions")
    parser.add_argument("--wording", action="append", default=[], help="literal to search (repeatable, first found)")
    parser.add_argument("--template", default="", help="census row template (subject census:<library>)")
    parser.add_argument("--spec", default="", help="which of the census rows sharing the template (their versions)")
    parser.add_argument("--file", default="*", help="member of the artifact to read (default: every .py / library)")
    parser.add_argument("--means", default="", help="what the wording's presence shows, for a behaviour")
    parser.add_argument("--sweep", action="store_true", help="every unproven note and census row with a wording")
    parser.add_argument("--library", help="with --sweep: only this library")
    parser.add_argument("--unproven", action="store_true", help="list the claims without a record; read nothing")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/dtypefix-proofs"), help="download folder")
    parser.add_argument("--kb", type=Path, default=builtin_kb_dir(), help="the KB beside proofs/ and census/")
    parser.add_argument(
        "--repo",
        type=Path,
        help="read the releases at their tags in this repository mirror (its git "
        "directory, /work/.mirror/<owner>+<name>/repo as `fetch` leaves it) instead of downloading",
    )
    parser.add_argument("--write", action="store_true", help="append proven records to proofs/<library>.yaml")
    parser.add_argument(
        "--boundary",
        default="",
        help="read only the releases around this clause of the spec (one record per boundary, each its own literal)",
    )
    parser.add_argument(
        "--unprovable",
        default="",
        help="with --write: record the claim as unprovable for this reason, with the checks that agree with it",
    )
    args = parser.parse_args(argv)
    entries = {e.id: e for e in load_catalog([args.kb], include_builtin=False, cache_dir=None).entries}
    census = load_census(census_dir(args.kb))
    folder = proofs_dir(args.kb)
    claims = stated_claims(entries, census)
    done = {p.key for p in load_proofs(folder)}
    todo = [c for c in claims if c.key not in done]
    if args.unproven:
        for c in todo:
            print(f"{c.library}\t{c.subject}\t{c.claim}\t{c.spec}\t{c.template or _wording_source(c, entries)[:100]}")
        print(f"{len(todo)} of {len(claims)} claims have no proof record", file=sys.stderr)
        return 0
    if args.sweep:
        jobs = [
            (c, candidates(_wording_source(c, entries)))
            for c in todo
            if not c.claim.startswith(("affected:", "fixed_in:"))
            and (not args.library or c.library == canonicalize_name(args.library))
        ]
    elif args.subject and args.claim:
        match = [
            c
            for c in claims
            if (c.subject, c.claim, c.template) == (args.subject, args.claim, args.template)
            and (not args.spec or c.key[3] == SpecifierSet(args.spec))
        ]
        if not match:
            print(f"{args.subject} states no `{args.claim}` spec that a proof can back", file=sys.stderr)
            return 2
        jobs = [(match[0], args.wording or candidates(_wording_source(match[0], entries)))]
    else:
        parser.print_usage(sys.stderr)
        return 2
    args.cache.mkdir(parents=True, exist_ok=True)
    listed: dict[str, list[Version]] = {}
    scanner = Scanner()
    planned: list[tuple[Claim, list[str], Callable[[Version], Artifact | None]]] = []
    tags = tag_releases(_git(args.repo, "tag").split()) if args.repo else {}
    for claim, literals in jobs:
        artifact: Callable[[Version], Artifact | None]
        if args.repo:
            listed[claim.library] = sorted(tags)
            artifact = functools.partial(_tag, args.repo, tags)
        else:
            if claim.library not in listed:
                listed[claim.library] = _releases(claim.library)
            artifact = functools.partial(_download, claim.library, cache=args.cache)
        for version in boundary_releases(
            SpecifierSet((args.boundary or claim.spec).replace(" ", "")), listed[claim.library]
        ):
            if (path := artifact(version)) is not None:
                scanner.want(path, literals)
        planned.append((claim, literals, artifact))
    bad = 0
    for claim, literals, fetch in planned:
        label = f"{claim.subject} {claim.claim}" + (f" [{claim.template[:60]}]" if claim.template else "")
        if not literals:
            print(f"SKIP {label}: no literal wording to search")
            continue
        outcome = prove(claim, literals, listed[claim.library], fetch, args.file, scanner, args.boundary)
        if args.unprovable:
            print(f"UNPROVABLE {label}: {outcome.problem or 'holds'}; recorded: {args.unprovable}")
            if args.write:
                _append(folder, claim.library, record_yaml(outcome, args.means, args.unprovable, args.boundary))
            continue
        if outcome.problem:
            bad += 1
            print(f"FAIL {label} {claim.library} `{claim.spec}`: {outcome.problem}")
            for check in outcome.checks:
                print(f"       {check.version}: {'present' if check.present else 'absent'} {outcome.wording!r}")
            continue
        print(f"OK   {label} {claim.library} `{claim.spec}`: {outcome.wording!r}")
        if args.write:
            _append(folder, claim.library, record_yaml(outcome, args.means, boundary=args.boundary))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
