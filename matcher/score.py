"""Scoring: combine each candidate entry's evidence into a score, a confidence and a rank.

Conditions check themselves (:mod:`.conditions`); this module only applies the rules, each a named constant or
function with its own test (``tests/test_score_rules.py``), documented for contributors in
``docs/entry-format.md``:

- :func:`anchor`: an entry is a candidate only when one of its error patterns matches; the heaviest one counts
  (times :data:`CUT_WEIGHT` when it matched a message cut after its first clause).
- :func:`excluded`: any ``exclude`` condition that holds removes the entry.
- :func:`required_failed`: a ``required`` condition that failed removes the entry (an unknown does not).
- :func:`support`: held weights minus failed weights; unknowns count nothing.
- :func:`entry_score`: a cause scores anchor + support; a family entry scores anchor + :data:`FAMILY_MARGIN`, so a
  cause outranks the generic explanation of its message only on its own evidence.
- A family entry whose anchor weighs 0 is a *fallback* (the dtype / device safety nets): it is kept only when no
  other entry is a candidate, so it never displaces an answer, however weak.
- :data:`MIN_SCORE`: below it the evidence against an entry outweighs its message: not a candidate.
- :func:`confidence`: high from :data:`HIGH`, medium from :data:`MEDIUM`; low at most when the input lost its
  error line (:func:`capped`).
- :func:`rank_key`: score, then causes before families at equal score, then id.
- :func:`deciders`: the inputs that would settle the unknowns of the candidates close to the best.
- :func:`check_entries`: the pre-flight rule for configs with no traceback; :func:`open_questions` says which
  unknowns make a finding conditional.
- :func:`deciding`: the few pieces of evidence the verdict shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from .conditions import Condition, ErrorCondition, ErrorHit, kind_named
from .entry import KBEntry
from .evidence import Evidence, Outcome, Reason
from .incident import Incident
from .result import Confidence, Decider, Match

__all__ = [
    "CLOSE",
    "CUT_WEIGHT",
    "DECIDER_MIN_WEIGHT",
    "FAMILY_MARGIN",
    "HIGH",
    "MEDIUM",
    "MIN_SCORE",
    "anchor",
    "capped",
    "check_entries",
    "confidence",
    "deciders",
    "deciding",
    "entry_score",
    "excluded",
    "match_entry",
    "open_questions",
    "rank_key",
    "required_failed",
    "score_entries",
    "support",
    "unknown_inputs",
]

FAMILY_MARGIN = 1.5
"""What a family entry scores above its anchor: a cause needs this much of its own evidence to outrank it."""
HIGH, MEDIUM = 5.0, 3.0
MIN_SCORE = 1.0
CUT_WEIGHT = 0.4
"""What an anchor counts when it matched a message cut after its first clause: a whole message that another
pattern matches (the short wording of a message, not a cut of the long one) outranks it."""
CLOSE = 2.0
"""Candidates within this many points of the best are close enough that the deciders consider them."""
DECIDER_MIN_WEIGHT = 1.5
"""An unknown lighter than this would not change the ranking: no decider is offered for it."""


def confidence(score: float) -> Confidence:
    return Confidence.HIGH if score >= HIGH else Confidence.MEDIUM if score >= MEDIUM else Confidence.LOW


def capped(level: Confidence, incident: Incident) -> Confidence:
    """A paste cut before its error line is proposed from the frames (and a raise shown in them) alone: low at
    most, however much evidence held."""
    return Confidence.LOW if incident.error_line_missing else level


def anchor(entry: KBEntry, incident: Incident) -> tuple[ErrorCondition, ErrorHit] | None:
    """The heaviest error pattern of ``entry`` that matches, with where it matched (first listed wins a tie)."""
    best: tuple[ErrorCondition, ErrorHit] | None = None
    for pattern in entry.errors:
        if best is not None and best[0].weight >= pattern.weight:
            continue
        hit = pattern.find(incident)
        if hit is not None:
            best = (pattern, hit)
    return best


def excluded(entry: KBEntry, incident: Incident) -> bool:
    """Any ``exclude`` condition holds. An excluded error pattern is found the same way an anchor is."""
    return any(condition.evaluate(incident).outcome is Outcome.HELD for condition in entry.exclude)


def support(evidence: Iterable[Evidence]) -> float:
    """Weights of what held minus weights of what failed."""
    return sum(
        e.weight if e.outcome is Outcome.HELD else -e.weight if e.outcome is Outcome.FAILED else 0.0 for e in evidence
    )


def required_failed(evidence: Iterable[Evidence]) -> bool:
    return any(e.condition.required and e.outcome is Outcome.FAILED for e in evidence)


def contradicting_fixes(evidence: Iterable[Evidence]) -> list[Evidence]:
    """``fixed_in`` evidence that counts: only an installed version that already contains the fix."""
    return [e for e in evidence if e.reason is Reason.FIXED]


def entry_score(entry: KBEntry, anchor_weight: float, evidence: Sequence[Evidence]) -> float:
    if entry.is_family:
        return anchor_weight + FAMILY_MARGIN
    return anchor_weight + support(evidence)


def rank_key(match: Match) -> tuple[float, bool, str]:
    return (-match.score, match.entry.is_family, match.entry.id)


def _role(kind: str, role: Literal["anchor", "checked", "decides", "asks"]) -> bool:
    """A flag of the kind whose evidence is ``kind`` (:class:`~.conditions.Kind`: anchor, checked, decides, asks)."""
    found = kind_named(kind)
    return found is not None and bool(getattr(found, role))


def _evaluate(conditions: Iterable[Condition], incident: Incident) -> list[Evidence]:
    return [condition.evaluate(incident) for condition in conditions]


def score_entries(entries: Iterable[KBEntry], incident: Incident) -> list[Match]:
    """Every active entry anchored by an exception in ``incident``, best first (fallbacks only when nothing else)."""
    matches: list[Match] = []
    fallbacks: list[Match] = []
    deferred: list[KBEntry] = []
    for entry in entries:
        if entry.is_safety_net:
            deferred.append(entry)  # a safety net: its wide patterns are compiled only when nothing else answers
            continue
        scored = _scored(entry, incident)
        if scored is not None:
            match, fallback = scored
            (fallbacks if fallback else matches).append(match)
    for entry in deferred if not matches else ():
        scored = _scored(entry, incident)
        if scored is not None:
            fallbacks.append(scored[0])
    return sorted(matches or fallbacks, key=rank_key)


def match_entry(entry: KBEntry, incident: Incident) -> Match | None:
    """``entry``'s match on ``incident``, or None when it is no candidate (inactive, not anchored, excluded, a
    required condition failed, too weak). :func:`score_entries` keeps a fallback only when nothing else matches,
    so ``incident`` gets an answer exactly when one entry here returns a match."""
    scored = _scored(entry, incident)
    return scored[0] if scored is not None else None


def _scored(entry: KBEntry, incident: Incident) -> tuple[Match, bool] | None:
    """The match and whether it is a fallback (a family anchored by a pattern of weight 0)."""
    if not entry.is_active:
        return None
    anchored = anchor(entry, incident)
    if anchored is None or excluded(entry, incident):
        return None
    pattern, hit = anchored
    evidence = _evaluate(entry.conditions, incident)
    if required_failed(evidence):
        return None
    fixes = contradicting_fixes(_evaluate(entry.fixed, incident))
    evidence.extend(fixes)
    score = entry_score(entry, pattern.weight * (CUT_WEIGHT if hit.cut else 1.0), evidence)
    if score < MIN_SCORE:
        return None
    level = capped(confidence(score), incident)
    match = Match(entry, round(score, 2), level, (hit.evidence(pattern), *evidence), hit.groups)
    return match, entry.is_family and pattern.weight == 0


def check_entries(entries: Iterable[KBEntry], incident: Incident) -> tuple[list[Match], list[Match]]:
    """Pre-flight: entries whose config / package / env conditions hold with no traceback at all.

    An entry applies when at least one of its config or env conditions holds, none of its config, package or env
    conditions fails, and the held weight reaches :data:`MEDIUM`. It is a *finding* when no version or environment
    condition that matters (weight :data:`DECIDER_MIN_WEIGHT` or more) is unknown; otherwise it is *conditional* — "would apply if
    transformers < 4.27" — and the deciders say which input settles it. Returns ``(findings, conditional)``.
    """
    findings: list[Match] = []
    conditional: list[Match] = []
    for entry in entries:
        if not entry.is_active or not entry.checkable or excluded(entry, incident):
            continue
        evidence = _evaluate((c for c in entry.conditions if _role(c.kind, "checked")), incident)
        evidence.extend(contradicting_fixes(_evaluate(entry.fixed, incident)))
        if any(e.outcome is Outcome.FAILED for e in evidence):
            continue
        if not any(e.outcome is Outcome.HELD and _role(e.kind, "decides") for e in evidence):
            continue
        held = sum(e.weight for e in evidence if e.outcome is Outcome.HELD)
        if held < MEDIUM:
            continue
        match = Match(entry, round(held, 2), confidence(held), tuple(evidence))
        (conditional if open_questions(match) else findings).append(match)
    findings.sort(key=lambda m: (-m.score, m.entry.id))
    conditional.sort(key=lambda m: (-m.score, m.entry.id))
    return findings, conditional


def open_questions(match: Match) -> list[Evidence]:
    """In ``check``: the unknowns that make a finding conditional ("would apply if transformers < 4.27"): a
    version or hardware fact (:attr:`~.conditions.Kind.asks`) heavy enough to matter."""
    return [
        e for e in match.evidence if e.decider is not None and _role(e.kind, "asks") and e.weight >= DECIDER_MIN_WEIGHT
    ]


def deciding(match: Match, limit: int = 3) -> list[Evidence]:
    """The few pieces of evidence that decided the answer: what held, heaviest first, then what counts against it,
    then the unknowns worth settling (as heavy as a decider). The anchor is shown apart."""
    order = {Outcome.HELD: 0, Outcome.FAILED: 1, Outcome.UNKNOWN: 2}
    others = [
        e
        for e in match.evidence
        if not _role(e.kind, "anchor") and (e.outcome is not Outcome.UNKNOWN or e.weight >= DECIDER_MIN_WEIGHT)
    ]
    return sorted(others, key=lambda e: (order[e.outcome], -e.weight))[:limit]


def deciders(matches: Sequence[Match]) -> list[Decider]:
    """Inputs that would settle the unknown conditions of the candidates close to the best one."""
    if not matches:
        return []
    best = matches[0]
    close = [
        m
        for m in matches
        if best.score - m.score <= CLOSE or (not m.entry.is_family and m.entry.family == best.entry.family)
    ]
    if best.confidence is Confidence.HIGH and len(close) == 1:
        return []
    return unknown_inputs(close)


def unknown_inputs(matches: Iterable[Match]) -> list[Decider]:
    """For the cause entries among ``matches``: each input that would settle an unknown that matters."""
    by_input: dict[str, list[str]] = {}
    for match in matches:
        if match.entry.is_family:
            continue
        for item in match.evidence:
            if item.decider is not None and item.weight >= DECIDER_MIN_WEIGHT:
                ids = by_input.setdefault(item.decider, [])
                if match.entry.id not in ids:
                    ids.append(match.entry.id)
    return [Decider(key, tuple(ids)) for key, ids in by_input.items()]
