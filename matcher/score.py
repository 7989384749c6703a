"""Scoring: every condition of every candidate entry checked against the Incident, then ranked.

The rules (documented for contributors in ``docs/entry-format.md``): an entry is a candidate only when one of its
error patterns matches an exception in the input; its score is that pattern's weight plus the weights of its
other conditions that held, minus those that failed; unknowns count nothing but are reported with the input that
would decide them. A ``family`` entry (what a message means) scores its anchor plus a fixed margin, so a specific
cause outranks it only when the cause's own evidence holds.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .entry import (
    Condition,
    ConfigCondition,
    EnvCondition,
    ErrorPattern,
    FramePattern,
    KBEntry,
    LogPattern,
    PackageCondition,
)
from .incident import Fact, Incident
from .regex import PatternError, compile_pattern
from .result import Decider, Evidence, Match

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

__all__ = ["DECIDERS", "FAMILY_MARGIN", "check_entries", "confidence", "deciders", "score_entries"]

FAMILY_MARGIN = 1.5
HIGH, MEDIUM = 5.0, 3.0
MIN_SCORE = 1.0
_CLOSE = 2.0

DECIDERS: dict[str, str] = {
    "deepspeed-config": "your DeepSpeed config: --config ds_config.json",
    "accelerate-config": "your Accelerate config: --config ~/.cache/huggingface/accelerate/default_config.yaml",
    "axolotl-config": "your Axolotl YAML: --config config.yml",
    "llamafactory-config": "your LLaMA-Factory YAML: --config train.yaml",
    "launch": "the launch command line or TrainingArguments (paste the command, or --config training_args.json)",
    "freeze": "package versions: --freeze requirements.txt (pip freeze), or --this-env",
    "gpu": "GPU details: the output of nvidia-smi or python -m torch.utils.collect_env",
    "traceback": "the full traceback, not only its last line",
    "log": "more of the log (the lines printed before the traceback)",
}
_CONFIG_DECIDER = {
    "deepspeed": "deepspeed-config",
    "accelerate": "accelerate-config",
    "axolotl": "axolotl-config",
    "llamafactory": "llamafactory-config",
}

_ORDERED: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def confidence(score: float) -> str:
    return "high" if score >= HIGH else "medium" if score >= MEDIUM else "low"


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        norm = {"true": True, "false": False}
        a = norm.get(str(actual).lower(), actual) if isinstance(actual, str) else actual
        e = norm.get(str(expected).lower(), expected) if isinstance(expected, str) else expected
        return a is e if isinstance(a, bool) and isinstance(e, bool) else False
    if isinstance(actual, int | float) or isinstance(expected, int | float):
        try:
            return float(actual) == float(expected)
        except (TypeError, ValueError):
            return False
    return str(actual).lower() == str(expected).lower()


def _compare(op: str, actual: Any, expected: Any) -> bool:
    """Evaluate ``actual <op> expected`` leniently across the types YAML and JSON produce."""
    if op == "exists":
        return True
    if op == "==":
        return any(_same(a, expected) for a in actual) if isinstance(actual, list) else _same(actual, expected)
    if op == "!=":
        return not _compare("==", actual, expected)
    if op in ("in", "not-in"):
        options = expected if isinstance(expected, list) else [expected]
        inside = any(_same(actual, option) for option in options)
        return inside if op == "in" else not inside
    if op == "matches":
        try:
            pattern = compile_pattern(str(expected))
        except PatternError:
            return False
        items = actual if isinstance(actual, list) else [actual]
        return any(pattern.search(str(item)) for item in items)
    try:
        return _ORDERED[op](float(actual), float(expected))
    except (TypeError, ValueError, KeyError):
        return False


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _installed(incident: Incident, name: str) -> tuple[Version | None, str]:
    from packaging.version import InvalidVersion, Version

    found = incident.package(name)
    if found is None:
        return None, ""
    try:
        return Version(Version(found.version).public), found.version
    except InvalidVersion:
        return None, found.version


def _evaluate(condition: Condition, incident: Incident) -> Evidence:
    """One non-anchor condition -> held / failed / unknown with what was seen."""
    if isinstance(condition, FramePattern):
        label = f"traceback passes through {condition.source}"
        if not incident.has_frames:
            return Evidence(
                "unknown", "frame", label, "no traceback frames in the input", condition.weight, "traceback"
            )
        for stack in incident.stacks:
            for frame in stack.frames:
                path = frame.file.replace("\\", "/")  # Windows paths match the same patterns
                if (condition.file is None or condition.file.search(path)) and (
                    condition.function is None or condition.function.search(frame.function)
                ):
                    where = f"{frame.file.rsplit('site-packages/', 1)[-1]}:{frame.line} in {frame.function}"
                    return Evidence("held", "frame", label, where, condition.weight)
        if not incident.has_complete_traceback and not condition.required:
            # A paste that starts mid-traceback lost its top frames; only a required frame (one that sits next to
            # the error, so it survives trimming) counts as absent.
            return Evidence(
                "unknown", "frame", label, "not in the partial traceback given", condition.weight, "traceback"
            )
        return Evidence("failed", "frame", label, "no such frame in the traceback", condition.weight)
    if isinstance(condition, LogPattern):
        label = f"log shows /{condition.source}/"
        found = condition.pattern.search(incident.text)
        if found:
            return Evidence("held", "log", label, found.group(0)[:160], condition.weight)
        return Evidence("unknown", "log", label, "not in the input", condition.weight, "log")
    if isinstance(condition, PackageCondition):
        label = f"{condition.name} {condition.spec}"
        version, printed = _installed(incident, condition.name)
        if version is None:
            return Evidence(
                "unknown", "package", label, f"{condition.name} version not given", condition.weight, "freeze"
            )
        origin = incident.packages[condition.name].origin
        status = "held" if _specifier(condition.spec).contains(version, prereleases=True) else "failed"
        return Evidence(status, "package", label, f"{condition.name} {printed} ({origin})", condition.weight)
    if isinstance(condition, ConfigCondition):
        return _config_evidence(condition, incident.config_fact(condition.path), incident)
    if isinstance(condition, EnvCondition):
        label = f"{condition.key} {condition.op} {_show(condition.value)}".rstrip()
        fact = incident.env_fact(condition.key)
        if not fact.known:
            return Evidence("unknown", "env", label, f"{condition.key} not in the input", condition.weight, "gpu")
        status = "held" if _compare(condition.op, fact.value, condition.value) else "failed"
        return Evidence(status, "env", label, _show(fact.value), condition.weight)
    raise TypeError(f"not a condition: {condition!r}")  # pragma: no cover - the union is closed


def _config_evidence(condition: ConfigCondition, fact: Fact, incident: Incident) -> Evidence:
    shown = "" if condition.op == "exists" else f" {_show(condition.value)}"
    label = f"{condition.path} {condition.op}{shown}"
    prefix = condition.path.split(".", 1)[0]
    decider = _CONFIG_DECIDER.get(prefix, "launch")
    if not fact.known:
        if fact.kind_present and condition.has_default:
            status = "held" if _compare(condition.op, condition.default, condition.value) else "failed"
            return Evidence(
                status, "config", label, f"not set (defaults to {_show(condition.default)})", condition.weight
            )
        if fact.kind_present and condition.op == "exists":
            return Evidence("failed", "config", label, "not set", condition.weight)
        why = "not set in the config given" if fact.kind_present else "no such config in the input"
        return Evidence("unknown", "config", label, why, condition.weight, decider)
    status = "held" if _compare(condition.op, fact.value, condition.value) else "failed"
    return Evidence(status, "config", label, f"{_show(fact.value)} ({fact.source})", condition.weight)


def _anchor(entry: KBEntry, incident: Incident) -> tuple[ErrorPattern, dict[str, str], str] | None:
    """The heaviest error pattern of ``entry`` that matches an exception in the input."""
    best: tuple[ErrorPattern, dict[str, str], str] | None = None
    exceptions = [(s.exc_type, s.message) for s in incident.stacks] + [
        (line.exc_type, line.message) for line in incident.error_lines
    ]
    for pattern in entry.errors:
        if best is not None and best[0].weight >= pattern.weight:
            continue
        for exc_type, message in exceptions:
            short = exc_type.rsplit(".", 1)[-1]
            if pattern.type is not None and not (pattern.type.search(short) or pattern.type.search(exc_type)):
                continue
            found = pattern.message.search(message)
            if found:
                groups = {k: v for k, v in found.groupdict().items() if v is not None}
                best = (pattern, groups, f"{short}: {message.splitlines()[0][:200]}")
                break
    if best is None:
        # The message may be printed without an exception type ("Inference failed: <message>", a warning
        # turned fatal, prose around a pasted message): fall back to the whole text, untyped patterns only.
        for pattern in entry.errors:
            if pattern.type is not None or (best is not None and best[0].weight >= pattern.weight):
                continue
            found = pattern.message.search(incident.text)
            if found:
                groups = {k: v for k, v in found.groupdict().items() if v is not None}
                best = (pattern, groups, f"log: {found.group(0)[:200]}")
    return best


@functools.lru_cache(maxsize=1024)
def _specifier(spec: str) -> SpecifierSet:
    """Parsed PEP 440 specifier sets, memoised: many entries share the same few ranges."""
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(spec)


def _fixed_evidence(entry: KBEntry, incident: Incident) -> list[Evidence]:
    from packaging.version import InvalidVersion, Version

    out = []
    for name, fixed in entry.fixed_in.items():
        version, printed = _installed(incident, name)
        try:
            fixed_version = Version(fixed)
        except InvalidVersion:
            continue
        if version is not None and version >= fixed_version:
            out.append(Evidence("failed", "fixed", f"{name} < {fixed} (fixed in {fixed})", f"{name} {printed}", 2.0))
    return out


def _excluded(entry: KBEntry, incident: Incident) -> bool:
    for condition in entry.exclude:
        if isinstance(condition, ErrorPattern):
            if any(condition.message.search(s.message) for s in incident.stacks) or any(
                condition.message.search(line.message) for line in incident.error_lines
            ):
                return True
        elif _evaluate(condition, incident).status == "held":
            return True
    return False


def _support(evidence: Iterable[Evidence]) -> float:
    return sum(e.weight if e.status == "held" else -e.weight if e.status == "failed" else 0.0 for e in evidence)


def _required_failed(entry: KBEntry, evidence: list[Evidence]) -> bool:
    conditions = entry.evidence_conditions
    return any(c.required and e.status == "failed" for c, e in zip(conditions, evidence, strict=False))


def score_entries(entries: Iterable[KBEntry], incident: Incident) -> list[Match]:
    """Every active entry anchored by an exception in ``incident``, best first."""
    matches: list[Match] = []
    for entry in entries:
        if entry.status != "active":
            continue
        anchored = _anchor(entry, incident)
        if anchored is None or _excluded(entry, incident):
            continue
        pattern, groups, seen = anchored
        evidence = [_evaluate(c, incident) for c in entry.evidence_conditions]
        if _required_failed(entry, evidence):
            continue
        fixed = _fixed_evidence(entry, incident)
        evidence.extend(fixed)
        anchor = Evidence("held", "error", f"message /{pattern.source}/", seen, pattern.weight)
        score = pattern.weight + FAMILY_MARGIN if entry.kind == "family" else pattern.weight + _support(evidence)
        if score < MIN_SCORE:
            continue  # the evidence against it outweighs the message: not a candidate at all
        note = fixed[0].detail + " already contains the fix" if fixed else ""
        matches.append(Match(entry, round(score, 2), confidence(score), (anchor, *evidence), groups, note))
    matches.sort(key=lambda m: (-m.score, m.entry.kind != "family", m.entry.id))
    return matches


def check_entries(entries: Iterable[KBEntry], incident: Incident) -> list[Match]:
    """Pre-flight: entries whose config / package / env conditions hold with no traceback at all.

    An entry is reported when at least one of its config or env conditions holds, none of its config, package
    or env conditions fails, and the held weight reaches the medium threshold.
    """
    found: list[Match] = []
    for entry in entries:
        if entry.status != "active" or entry.kind == "family" or not (entry.configs or entry.env):
            continue
        if _excluded(entry, incident):
            continue
        conditions: tuple[Condition, ...] = (*entry.packages, *entry.configs, *entry.env)
        evidence = [_evaluate(c, incident) for c in conditions]
        evidence.extend(_fixed_evidence(entry, incident))
        if any(e.status == "failed" for e in evidence):
            continue
        if not any(e.status == "held" and e.kind in ("config", "env") for e in evidence):
            continue
        held = sum(e.weight for e in evidence if e.status == "held")
        if held < MEDIUM:
            continue
        found.append(Match(entry, round(held, 2), confidence(held), tuple(evidence)))
    found.sort(key=lambda m: (-m.score, m.entry.id))
    return found


def deciders(matches: list[Match]) -> list[Decider]:
    """Inputs that would settle the unknown conditions of the candidates close to the best one."""
    if not matches:
        return []
    best = matches[0].score
    close = [
        m
        for m in matches
        if best - m.score <= _CLOSE or (m.entry.kind == "cause" and m.entry.family == matches[0].entry.family)
    ]
    by_key: dict[str, list[str]] = {}
    for match in close:
        if match.entry.kind == "family":
            continue
        for item in match.evidence:
            if item.status == "unknown" and item.decider and item.weight >= 1.5:
                ids = by_key.setdefault(item.decider, [])
                if match.entry.id not in ids:
                    ids.append(match.entry.id)
    if matches[0].confidence == "high" and len(close) == 1:
        return []
    return [Decider(key, DECIDERS[key], tuple(ids)) for key, ids in by_key.items()]
