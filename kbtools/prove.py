"""Write proof records by reading the released artifacts at each boundary of a claim (``proofs/``, ``proofs.py``).

A claim states a PEP 440 spec; its boundaries are the clause versions. For each boundary this module takes the last
release outside and the first release inside (from ``pip index versions``), downloads both with
``pip download --no-deps`` and searches them for the wording. The wording is a literal: given by hand for a
behaviour (a line of the fix), or, for a ``messages`` note or a census row, taken from the quoted message or the
template — each literal run between its variable parts is a candidate, longest first, and the first one found
inside the spec is the one recorded. A claim is proven when every checked release agrees with the spec; otherwise
the tool prints what the artifacts say, and the claim (not the record) is what has to change.

    python -m dtypefix.kbtools.prove DTF251 'affected:accelerate' --wording 'Unknown mixed precision value' --write
    python -m dtypefix.kbtools.prove --sweep [--library torch] [--write]

The selection of boundary releases and of candidate literals are pure functions (tested); downloading and
searching are the I/O around them.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from dtypefix.matcher.catalog import builtin_kb_dir, load_catalog
from dtypefix.matcher.entry import KBEntry

from .census import CensusRow, census_dir, load_census
from .proofs import Check, load_proofs, note_spec, proofs_dir, stated_claims

__all__ = ["Outcome", "boundary_releases", "candidates", "prove", "record_yaml"]

# Readable members: the code that runs (Python sources and compiled libraries), as ``proofs.verify`` reads them.
_READABLE = (".py", ".so", ".dylib", ".pyd", ".dll")
# torch: the macOS wheels are small and hold the same .py files and C++ check strings as the Linux builds.
_TORCH_PLATFORMS = (
    ("macosx_14_0_arm64", "3.12"),
    ("macosx_11_0_arm64", "3.9"),
    ("macosx_10_9_x86_64", "3.9"),
    ("macosx_10_9_x86_64", "3.7"),
    ("macosx_10_9_x86_64", "3.6"),
)
# What separates the literal runs of a quoted message: elisions and placeholders; then quotes, which the source may
# write escaped or build from another string.
_VARIABLE = re.compile(r"\.\.\.|…|\[\.\.\.\]|\{[^}]*\}|<[^>]*>")
_QUOTES = re.compile(r"[\"'`]")
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
            for part in [run, *_QUOTES.split(run)]:
                part = part.strip(" .,:;()!")
                if len(part) >= _MIN_LITERAL and part not in runs:
                    runs.append(part)
    return sorted(runs, key=len, reverse=True)


@dataclass(frozen=True)
class Outcome:
    """What the artifacts say about one claim."""

    subject: str
    claim: str
    library: str
    spec: str
    wording: str
    """The literal recorded (empty when no candidate was found in any release inside the spec)."""
    checks: tuple[Check, ...]
    problem: str
    """Empty when every check agrees with the spec."""


def _releases(package: str) -> list[Version]:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package], capture_output=True, text=True, check=False
    ).stdout
    found = re.search(r"Available versions:\s*(.+)", out)
    versions: list[Version] = []
    for text in found.group(1).split(",") if found else []:
        try:
            versions.append(Version(text.strip()))
        except InvalidVersion:
            continue
    return versions


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
    return None


def _members(artifact: Path) -> Iterator[tuple[str, bytes]]:
    if artifact.suffix in {".whl", ".zip"}:
        with zipfile.ZipFile(artifact) as archive:
            for name in archive.namelist():
                if name.endswith(_READABLE):
                    yield name, archive.read(name)
        return
    with tarfile.open(artifact) as archive:
        for info in archive:
            handle = archive.extractfile(info) if info.isfile() and info.name.endswith(_READABLE) else None
            if handle is not None:
                yield info.name, handle.read()


def _where(artifact: Path, literals: list[str], member: str) -> dict[str, str]:
    """For each literal found in ``artifact``: the first member holding it (only ``member`` unless it is ``*``)."""
    found: dict[str, str] = {}
    for name, data in _members(artifact):
        if member != "*" and not (name == member or name.endswith("/" + member)):
            continue
        for literal in literals:
            if literal not in found and literal.encode("utf-8") in data:
                found[literal] = name.split("/", 1)[1] if artifact.suffix == ".gz" else name
    return found


def prove(
    subject: str, claim: str, library: str, spec: str, literals: list[str], cache: Path, member: str = "*"
) -> Outcome:
    """Read the boundary releases of ``spec`` for the first of ``literals`` found inside it (see the module doc)."""
    spec_set = SpecifierSet(spec.replace(" ", ""))
    versions = boundary_releases(spec_set, _releases(library))
    artifacts = {v: _download(library, v, cache) for v in versions}
    missing = [str(v) for v, a in artifacts.items() if a is None]
    if not versions or missing:
        why = f"no release of {library} could be downloaded: {', '.join(missing)}" if missing else "no releases"
        return Outcome(subject, claim, library, spec, "", (), why)
    seen = {v: _where(a, literals, member) for v, a in artifacts.items() if a is not None}
    inside = [v for v in versions if v in spec_set]
    # The first literal found in a release inside the spec and agreeing with it everywhere; else the first found.
    found = [lit for lit in literals if any(lit in seen[v] for v in inside)]
    agreeing = [lit for lit in found if all((lit in seen[v]) == (v in spec_set) for v in versions)]
    if not found:
        return Outcome(subject, claim, library, spec, "", (), "no candidate wording found in the releases inside")
    wording = (agreeing or found)[0]
    checks = tuple(
        Check(
            str(v),
            wording in seen[v],
            artifacts[v].name,  # type: ignore[union-attr]
            seen[v].get(wording, member if member != "*" else "*"),
        )
        for v in versions
    )
    wrong = [c for c in checks if (Version(c.version) in spec_set) != c.present]
    problem = ", ".join(f"{c.version}: {'present' if c.present else 'absent'}" for c in wrong)
    return Outcome(subject, claim, library, spec, wording, checks, f"contradicts `{spec}`: {problem}" if wrong else "")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def record_yaml(outcome: Outcome, template: str = "", means: str = "") -> str:
    """The record as it is appended to ``proofs/<library>.yaml`` (one line per check, as the files are written)."""
    lines = [f"  - subject: {outcome.subject}", f"    claim: {outcome.claim}"]
    if template:
        lines.append(f"    template: {_quote(template)}")
    lines += [f"    spec: {_quote(outcome.spec)}", f"    wording: {_quote(outcome.wording)}"]
    if means:
        lines.append(f"    means: {_quote(means)}")
    lines.append("    checked:")
    for c in outcome.checks:
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


def _note_text(entry: KBEntry, claim: str) -> str:
    found = re.fullmatch(r"messages\[(\d+)\]", claim)
    return entry.messages[int(found.group(1))] if found else ""


def _unproven(
    entries: Mapping[str, KBEntry], census: list[CensusRow], folder: Path, library: str | None
) -> Iterator[tuple[str, str, str, str, str, str]]:
    """(subject, claim, library, spec, text the literals come from, census template) of each unproven note / row."""
    done = {(p.subject, p.claim, p.template) for p in load_proofs(folder)}
    for claim in stated_claims(entries, census):
        if library and claim.library != canonicalize_name(library):
            continue
        if (claim.subject, claim.claim, claim.template) in done:
            continue
        if claim.subject.startswith("census:"):
            yield claim.subject, claim.claim, claim.library, claim.spec, claim.template, claim.template
        elif claim.claim.startswith("messages["):
            note = _note_text(entries[claim.subject], claim.claim)
            parsed = note_spec(note)
            text = note[parsed.end :] if parsed else note
            yield claim.subject, claim.claim, claim.library, claim.spec, text, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dtypefix.kbtools.prove", description=__doc__.split("\n\n")[0])
    parser.add_argument("subject", nargs="?", help="entry id, or census:<library>")
    parser.add_argument("claim", nargs="?", help="affected:<pkg> | fixed_in:<pkg> | messages[<i>] | versions")
    parser.add_argument("--wording", action="append", default=[], help="literal to search (repeatable, first found)")
    parser.add_argument("--template", default="", help="census row template (subject census:<library>)")
    parser.add_argument("--file", default="*", help="member of the artifact to read (default: every .py / library)")
    parser.add_argument("--means", default="", help="what the wording's presence shows, for a behaviour")
    parser.add_argument("--sweep", action="store_true", help="every unproven note and census row with a wording")
    parser.add_argument("--library", help="with --sweep: only this library")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/dtypefix-proofs"), help="download folder")
    parser.add_argument("--kb", type=Path, default=builtin_kb_dir(), help="the KB beside proofs/ and census/")
    parser.add_argument("--write", action="store_true", help="append proven records to proofs/<library>.yaml")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    entries = {e.id: e for e in load_catalog([args.kb], include_builtin=False, cache_dir=None).entries}
    census = load_census(census_dir(args.kb))
    folder = proofs_dir(args.kb)
    claims = {(c.subject, c.claim, c.template): c for c in stated_claims(entries, census)}
    if args.sweep:
        jobs = list(_unproven(entries, census, folder, args.library))
    elif args.subject and args.claim:
        stated = claims.get((args.subject, args.claim, args.template))
        if stated is None:
            print(f"{args.subject} states no `{args.claim}` spec that a proof can back", file=sys.stderr)
            return 2
        text = args.template or _note_text(entries.get(args.subject, next(iter(entries.values()))), args.claim)
        jobs = [(args.subject, args.claim, stated.library, stated.spec, text, args.template)]
    else:
        parser.print_usage(sys.stderr)
        return 2
    bad = 0
    for subject, claim, library, spec, text, template in jobs:
        literals = args.wording or candidates(text)
        if not literals:
            print(f"SKIP {subject} {claim}: no literal wording to search")
            continue
        outcome = prove(subject, claim, library, spec, literals, args.cache, args.file)
        label = f"{subject} {claim}" + (f" [{template[:60]}]" if template else "")
        if outcome.problem:
            bad += 1
            print(f"FAIL {label} {library} `{spec}`: {outcome.problem}")
            for c in outcome.checks:
                print(f"       {c.version}: {'present' if c.present else 'absent'} {outcome.wording!r}")
            continue
        print(f"OK   {label} {library} `{spec}`: {outcome.wording!r}")
        if args.write:
            _append(folder, library, record_yaml(outcome, template, args.means))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
