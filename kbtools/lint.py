"""Strict checks for KB entries, the gate every pull request passes (``dtypefix lint``).

Explaining forgives a broken entry; lint does not. Each problem names ``file:line`` so a contributor can jump
to it. The checks: schema, RE2-safe patterns, both languages really present, well-formed references, unique
ids that the ledger (``kb/ids.txt``) says were never given to another slug, canonical formatting, version
bounds that cite their source (``bounds.py``), proof records that establish what the entry states (``proofs.py``), and
the entry's own examples ranking it first while its counter-examples do not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import yaml

from dtypefix.matcher.catalog import Catalog, entry_files, read_entry_mapping
from dtypefix.matcher.entry import EntryError, Example, KBEntry, applicable_step, entry_from_mapping
from dtypefix.matcher.explain import explain_incident, incident_from
from dtypefix.matcher.incident import Incident
from dtypefix.matcher.result import Match

from .bounds import bound_problems
from .canonical import canonical_text
from .census import census_dir, load_census
from .ids import read_ledger
from .proofs import load_proofs, proof_problems, proofs_dir

__all__ = [
    "LintProblem",
    "comment_cuts",
    "example_incident",
    "lint_paths",
    "placeholder_url",
    "run_example",
]

_CJK = re.compile(r"[\u3400-\u9fff]")
_PLACEHOLDER = "TODO(dtypefix new)"
# A pattern written as a plain YAML scalar: `message: foo #bar` silently loses everything from ` #` on.
_BLOCK_START = re.compile(r"(?:^|:|-)\s*[|>][-+0-9]*\s*$")
_PLAIN_VALUE = re.compile(r"^\s*(?:-\s+)?(?:(?P<key>[\w.-]+):\s+)?(?P<value>[^\s#].*)$")


def comment_cuts(text: str) -> list[tuple[int, str]]:
    """``(line, key)`` for each plain (unquoted) value in which `` #`` starts a YAML comment.

    Entries are written without comments (``dtypefix fmt`` drops them), so such a `` #`` was meant as text —
    "PR #1706", a regex with ``[^ #]`` — and YAML silently cut the value there.
    """
    cuts = []
    block: int | None = None  # the indent of the line that opened a block scalar (`|`, `>`) we are inside
    for number, row in enumerate(text.splitlines(), 1):
        indent = len(row) - len(row.lstrip())
        if block is not None and (not row.strip() or indent > block):
            continue
        block = None
        if row.lstrip().startswith("#"):
            continue
        if _BLOCK_START.search(row):
            block = indent
            continue
        found = _PLAIN_VALUE.match(row)
        if found and " #" in found["value"] and found["value"][:1] not in ("'", '"', "|", ">"):
            cuts.append((number, found["key"] or "list item"))
    return cuts


@dataclass(frozen=True)
class LintProblem:
    """One thing wrong with one entry."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def _line_of(text: str, keys: list[str | int]) -> int:
    """The 1-based line of the YAML node at ``keys`` (best effort: the deepest node found)."""
    try:
        node: Any = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return 1
    line = 1
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            nxt = next((v for k, v in node.value if k.value == key), None)
            found = next((k for k, _ in node.value if k.value == key), None)
            if found is None:
                break
            line, node = found.start_mark.line + 1, nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _texts(data: dict[str, Any]) -> Iterable[tuple[list[str | int], dict[str, str]]]:
    yield ["title"], data["title"]
    explanation = data["explanation"]
    yield ["explanation", "cause"], explanation["cause"]
    for i, step in enumerate(explanation["fix"]):
        yield ["explanation", "fix", i], step
    for i, item in enumerate(explanation.get("does_not_help", [])):
        yield ["explanation", "does_not_help", i], item
    if explanation.get("notes"):
        yield ["explanation", "notes"], explanation["notes"]


# Issue and pull-request numbers start at 1; OWNER/REPO and example.com are what a skeleton or a copy leaves behind.
_PLACEHOLDER_PATH = re.compile(r"^/owner/repo(?:/|$)|/(?:issues|pull|discussions)/0*(?:/|$)", re.I)
_PLACEHOLDER_HOSTS = ("example.com", "example.org", "example.net", "localhost")


def placeholder_url(url: str) -> bool:
    """Whether ``url`` is a placeholder (``https://github.com/OWNER/REPO/issues/0``, ``https://example.com``)
    rather than a real page."""
    parsed = urlparse(url)
    host = parsed.netloc.lower().split(":")[0]
    if host in _PLACEHOLDER_HOSTS or host.endswith((".example", ".invalid", ".test")):
        return True
    return bool(_PLACEHOLDER_PATH.search(parsed.path)) or "TODO" in url


def _static(path: Path, text: str, data: dict[str, Any]) -> list[LintProblem]:
    problems = []
    for keys, value in _texts(data):
        if not _CJK.search(value.get("zh", "")):
            problems.append(
                LintProblem(path, _line_of(text, [*keys, "zh"]), f"{'.'.join(map(str, keys))}.zh: no Chinese text")
            )
        if not value.get("en", "").strip():
            problems.append(LintProblem(path, _line_of(text, [*keys, "en"]), f"{'.'.join(map(str, keys))}.en: empty"))
    for i, ref in enumerate(data["references"]):
        parsed = urlparse(ref["url"])
        if parsed.scheme != "https" or "." not in parsed.netloc or " " in ref["url"]:
            problems.append(
                LintProblem(
                    path, _line_of(text, ["references", i, "url"]), f"references[{i}].url: not a well-formed https URL"
                )
            )
        elif placeholder_url(ref["url"]):
            problems.append(
                LintProblem(
                    path,
                    _line_of(text, ["references", i, "url"]),
                    f"references[{i}].url: a placeholder ({ref['url']}), not the page that establishes the cause",
                )
            )
    for group in ("examples", "counter_examples"):
        for i, example in enumerate(data[group]):
            if placeholder_url(example["source"]):
                problems.append(
                    LintProblem(
                        path,
                        _line_of(text, [group, i, "source"]),
                        f"{group}[{i}].source: a placeholder ({example['source']}), not where the example comes from",
                    )
                )
    folder = path.with_suffix("")
    for group in ("examples", "counter_examples"):
        for i, example in enumerate(data[group]):
            names = [example["input"], *example.get("configs", [])] + (
                [example["freeze"]] if example.get("freeze") else []
            )
            for name in names:
                if not (folder / name).is_file():
                    problems.append(
                        LintProblem(path, _line_of(text, [group, i]), f"{group}[{i}]: file not found: {folder / name}")
                    )
    if _PLACEHOLDER in text:
        line = next(i for i, row in enumerate(text.splitlines(), 1) if _PLACEHOLDER in row)
        problems.append(LintProblem(path, line, f"placeholder left from `dtypefix new`: replace every {_PLACEHOLDER}"))
    for number, key in comment_cuts(text):
        problems.append(
            LintProblem(path, number, f"{key}: an unquoted ' #' starts a YAML comment and cuts the value; quote it")
        )
    if canonical_text(data) != text:
        problems.append(LintProblem(path, 1, "not in canonical form: run `dtypefix fmt " + str(path) + "`"))
    return problems


def example_incident(example: Example) -> Incident:
    """What ``explain`` reads for one example: its log with the configs and freeze attached to it."""
    text = example.input.read_text(encoding="utf-8", errors="replace")
    configs = [(path.name, path.read_text(encoding="utf-8", errors="replace")) for path in example.configs]
    freeze = [example.freeze.read_text(encoding="utf-8")] if example.freeze else []
    return incident_from(text, freeze=freeze, configs=configs)


def run_example(example: Example, catalog: Catalog) -> list[Match]:
    """The ranked matches for one example of an entry, with its attached configs and freeze (lint and tests)."""
    return list(explain_incident(example_incident(example), catalog).matches)


def _steps(entry: KBEntry, text: str, picked: set[int]) -> list[LintProblem]:
    """Each conditional fix step is shown first for at least one real example (else its ``when`` is untested);
    an example's ``step`` names a step that exists."""
    problems = []
    for i, step in enumerate(entry.fix):
        if step.when and i + 1 not in picked:
            problems.append(
                LintProblem(
                    entry.path,
                    _line_of(text, ["explanation", "fix", i, "when"]),
                    f"explanation.fix[{i}].when: no example's answer shows this step first; add the real log it is for "
                    "(with `step:`)",
                )
            )
    for i, example in enumerate(entry.examples):
        if example.step > len(entry.fix):
            problems.append(
                LintProblem(
                    entry.path,
                    _line_of(text, ["examples", i]),
                    f"examples[{i}].step: {example.step}, but the entry has {len(entry.fix)} fix step(s)",
                )
            )
    return problems


def _examples(entry: KBEntry, text: str, catalog: Catalog) -> list[LintProblem]:
    problems = []
    picked: set[int] = set()
    for i, example in enumerate(entry.examples):
        if not example.input.is_file():
            continue
        incident = example_incident(example)
        line = _line_of(text, ["examples", i])
        shown = applicable_step(entry, incident) + 1
        picked.add(shown)
        if shown != example.step:
            problems.append(
                LintProblem(
                    entry.path,
                    line,
                    f"examples[{i}] ({example.input.name}): the answer shows fix step {shown} first; "
                    f"the example says step {example.step}",
                )
            )
        problems += [LintProblem(entry.path, line, f"examples[{i}]: {note}") for note in incident.notes]
        matches = list(explain_incident(incident, catalog).matches)
        if not matches or matches[0].entry.id != entry.id:
            first = f"{matches[0].entry.id} ({matches[0].score:g})" if matches else "nothing"
            own = next((f"{m.score:g}" for m in matches if m.entry.id == entry.id), "no match")
            problems.append(
                LintProblem(
                    entry.path, line, f"examples[{i}] ({example.input.name}): ranks {first} first; this entry: {own}"
                )
            )
            continue
        for other in matches[1:]:
            if other.confidence == "high" and not other.entry.is_family:
                problems.append(
                    LintProblem(
                        entry.path,
                        line,
                        f"examples[{i}] ({example.input.name}): also claimed with high confidence by {other.entry.id}",
                    )
                )
    problems += _steps(entry, text, picked)
    for i, example in enumerate(entry.counter_examples):
        if not example.input.is_file():
            continue
        matches = run_example(example, catalog)
        if matches and matches[0].entry.id == entry.id:
            problems.append(
                LintProblem(
                    entry.path,
                    _line_of(text, ["counter_examples", i]),
                    f"counter_examples[{i}] ({example.input.name}): ranks this entry first",
                )
            )
    return problems


def _proof_problems(roots: set[Path], whole: set[Path], linted: dict[str, KBEntry]) -> list[LintProblem]:
    """Proof records (``proofs/`` beside the KB) that contradict or do not establish the claim they back.

    A record about an entry is checked when that entry is linted; census records when the whole KB is.
    """
    problems: list[LintProblem] = []
    for root in sorted(roots):
        census = load_census(census_dir(root)) if root in whole else []
        for proof in load_proofs(proofs_dir(root)):
            census_subject = proof.subject.startswith("census:")
            if (census_subject and root not in whole) or (not census_subject and proof.subject not in linted):
                continue
            text = proof.path.read_text(encoding="utf-8")
            line = _line_of(text, ["records", proof.index])
            for problem in proof_problems(proof, linted, census):
                problems.append(LintProblem(proof.path, line, f"{proof.subject} {proof.claim}: {problem}"))
    return problems


def lint_paths(paths: Iterable[Path], catalog: Catalog) -> list[LintProblem]:
    """Lint the entries under ``paths`` (files or KB folders) against ``catalog`` (the KB they live in)."""
    ledgers: dict[Path, dict[str, str]] = {}
    problems: list[LintProblem] = []
    seen_ids: dict[str, Path] = {}
    linted: dict[str, KBEntry] = {}
    files: list[tuple[Path, str]] = []
    for root in paths:
        files.extend(entry_files(Path(root)))
    by_id = {e.id: e for e in catalog.entries}
    for path, slug in files:
        try:
            text = path.read_text(encoding="utf-8")
            data = read_entry_mapping(path)
            entry = entry_from_mapping(data, path, slug)
        except EntryError as exc:
            line = exc.line or _line_of(path.read_text(encoding="utf-8", errors="replace"), exc.keys)
            problems.append(LintProblem(path, line, f"{exc.field}: {exc.problem}" if exc.field else exc.problem))
            continue
        problems.extend(_static(path, text, data))
        for field, problem in bound_problems(entry):  # every version bound cites its source (bounds.py)
            top, _, key = field.partition(".")
            problems.append(LintProblem(path, _line_of(text, [top, key]), f"{field}: {problem}"))
        id_line = _line_of(text, ["id"])
        other = by_id.get(entry.id)
        if entry.id in seen_ids:
            problems.append(LintProblem(path, id_line, f"id {entry.id} is also used by {seen_ids[entry.id]}"))
        elif other is not None and other.path.resolve() != path.resolve():
            problems.append(LintProblem(path, id_line, f"id {entry.id} is also used by {other.path}"))
        seen_ids[entry.id] = path
        linted[entry.id] = entry
        root = path.parent.parent  # each KB (built-in or private) keeps its own ledger
        ledger = ledgers.setdefault(root, read_ledger(root))
        if ledger and entry.id in ledger and ledger[entry.id] != slug:
            problems.append(
                LintProblem(path, id_line, f"id {entry.id} was given to {ledger[entry.id]} (ids are never reused)")
            )
        elif ledger and entry.id not in ledger:
            problems.append(LintProblem(path, id_line, f"id {entry.id} is not in kb/ids.txt: add `{entry.id} {slug}`"))
        if entry.is_active and entry.id in by_id:
            problems.extend(_examples(by_id[entry.id], text, catalog))
    kb_roots = {Path(p).resolve() for p in paths if Path(p).is_dir() and (Path(p) / "ids.txt").is_file()}
    problems.extend(_proof_problems({p.parent.parent.resolve() for p, _ in files}, kb_roots, linted))
    present = {slug for _, slug in files}
    for root in kb_roots:
        for entry_id, slug in read_ledger(root).items():
            if slug not in present:
                message = f"{entry_id} {slug}: entry deleted; retire it (status: retired) instead"
                problems.append(LintProblem(root / "ids.txt", 1, message))
    return problems
