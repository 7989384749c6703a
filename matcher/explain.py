"""The pipeline in one place: text -> Incident -> scored matches -> Report.

This is the public entry point for scripts and editors (``from dtypefix.matcher import explain``). It reads no
input files and prints nothing: callers pass text and get typed results, the same data the JSON output carries.
The one thing it reads is the knowledge base (and its cache) when no :class:`Catalog` is given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .catalog import Catalog, default_cache_dir, load_catalog
from .configs import Config, ConfigError, parse_config
from .entry import KBEntry
from .incident import Incident, build_incident, with_lines_above
from .location import locate
from .notices import notice_matches, notices_only
from .observation import Note
from .owner import OwnerKind, owner_of
from .prefilter import words_in
from .result import Confidence, Report
from .scope import out_of_scope
from .score import check_entries, deciders, match_entry, score_entries, unknown_inputs
from .traceback import Stack

if TYPE_CHECKING:
    from .history import FrameHistory

__all__ = ["answers", "check", "explain", "explain_incident", "incident_from"]


def _catalog(catalog: Catalog | None, kb_dirs: Iterable[Path]) -> Catalog:
    return catalog if catalog is not None else load_catalog(kb_dirs, cache_dir=default_cache_dir())


ConfigInput = Config | str | tuple[str, str]
"""A parsed config, a config's text, or ``(name, text)``."""


def incident_from(
    text: str,
    *,
    freeze: str | Sequence[str] = (),
    configs: Iterable[ConfigInput] = (),
    notes: Iterable[Note] = (),
    environment: str = "",
) -> Incident:
    """The one path from raw inputs to an :class:`Incident`, for every command and the API.

    The policy for a config that cannot be read is here and only here: it becomes a note on the incident (shown
    with the answer, failed by lint for an example), never an exception and never silently dropped. (A config
    the user names with ``--config`` is read by the CLI first, which refuses an unreadable one with exit 2.)
    """
    freeze_texts = [freeze] if isinstance(freeze, str) else list(freeze)
    parsed, problems = _configs(configs)
    return build_incident(text, freeze=freeze_texts, configs=parsed, notes=[*notes, *problems], environment=environment)


def _configs(configs: Iterable[ConfigInput]) -> tuple[list[Config], list[Note]]:
    parsed: list[Config] = []
    notes: list[Note] = []
    for index, item in enumerate(configs):
        if isinstance(item, Config):
            parsed.append(item)
            continue
        origin, text = item if isinstance(item, tuple) else (f"config #{index + 1}", item)
        try:
            parsed.append(parse_config(text, origin))
        except ConfigError as exc:
            notes.append(Note(origin, exc.problem, exc.line))
    return parsed, notes


_TEXT_TAIL = 65536


def _words(incident: Incident) -> set[str]:
    """Words the error patterns could match: exception messages, and the log's tail for untyped patterns."""
    messages = [s.message for s in incident.stacks] + [e.message for e in incident.error_lines]
    return words_in([*messages, incident.text[-_TEXT_TAIL:]])


def explain_incident(incident: Incident, catalog: Catalog, top: int | None = None) -> Report:
    """Score an already-built incident against ``catalog``."""
    matches = score_entries(catalog.candidates(_words(incident)), incident)
    matches = notice_matches(incident, matches)  # a healthy run's deprecation notices: nothing to explain
    above = None if matches else with_lines_above(incident)
    if above is not None:  # the exception is unknown: read the message lines above it
        report = explain_incident(above, catalog, top)
        # The answer stands on a line the paste printed before the exception it ends in, not on that exception (a
        # vLLM bf16 refusal above its "compute capability below 7.0" floor): it may be part of the story, not all.
        capped = tuple(
            replace(m, confidence=Confidence.MEDIUM) if m.confidence is Confidence.HIGH else m for m in report.matches
        )
        return replace(report, matches=capped)
    chosen = matches[:top] if top else matches
    scope = None if matches else out_of_scope(incident)
    return Report(
        incident,
        tuple(chosen),
        tuple(deciders(matches)),
        catalog.problems,
        scope,
        history=_history(incident),
        location=locate(incident),
    )


def _history(incident: Incident) -> tuple[FrameHistory, ...]:
    """Later releases that changed the failing stack's library code; none when the stack has no library frames.

    The failing stack is the primary exception's; when the primary error is a bare ``Type: message`` line (a paste
    that puts the message above its frames), the last stack that has frames. The index (sqlite, 10 MB) and its
    reader are opened only for frames under a package folder or a source checkout: a user's own one-frame
    traceback or a pasted message should not pay for them.
    """
    primary = incident.primary
    stack = primary if isinstance(primary, Stack) and primary.frames else None
    if stack is None and not isinstance(primary, Stack):
        stack = next((s for s in reversed(incident.stacks) if s.frames), None)
    if stack is None or not any(_library_frame(f.file) for f in stack.frames):
        return ()
    from .history import fix_history

    return fix_history(stack.frames, incident.packages, text=incident.text)


_LIBRARY_PATH = "-packages"
"""``site-packages`` / ``dist-packages``: the only frames the fix-history index can know."""


def _library_frame(file: str) -> bool:
    """A frame the index may know: under ``site-packages``, in a checkout (a deep path), or a package's file whose
    path the reporter shortened (``peft/tuners/tuners_utils.py``)."""
    path = file.replace("\\", "/")
    return _LIBRARY_PATH in path or path.count("/") > 2 or owner_of(path).kind is OwnerKind.PACKAGE


def answers(text: str, catalog: Catalog) -> bool:
    """Whether :func:`explain` gives ``text`` an answer, found without ranking every candidate: it stops at the
    first entry that matches, trying the safety nets first (families whose every pattern is a fallback: they answer
    most single messages), then the other families. For checking many messages at once (the mined census), where a
    full explanation of each costs several times more."""
    incident = incident_from(text)
    candidates = sorted(catalog.candidates(_words(incident)), key=_likely_answer)
    for entry in candidates:
        match = match_entry(entry, incident)
        if match is not None:
            # a healthy run's notices get no answer; whether that holds may depend on every match: rank them all
            return not notices_only(incident, [match]) or bool(explain_incident(incident, catalog).matches)
    return False


def _likely_answer(entry: KBEntry) -> tuple[bool, bool]:
    """Safety nets first, then families, then causes (the order :func:`answers` tries them in)."""
    return not entry.is_safety_net, not entry.is_family


def explain(
    text: str,
    *,
    freeze: str | Sequence[str] = (),
    configs: Iterable[ConfigInput] = (),
    catalog: Catalog | None = None,
    kb_dirs: Iterable[Path] = (),
    top: int | None = None,
) -> Report:
    """Explain a failure.

    ``text`` is the raw output (a traceback, a whole log or a pasted bug report). ``freeze`` is the text of
    ``pip freeze`` or any other version listing; ``configs`` are config texts (or ``(name, text)`` pairs, or
    parsed :class:`Config`); unreadable configs become notes on the incident instead of errors.
    """
    return explain_incident(incident_from(text, freeze=freeze, configs=configs), _catalog(catalog, kb_dirs), top)


def check(
    *,
    freeze: str | Sequence[str] = (),
    configs: Iterable[ConfigInput] = (),
    flags: str = "",
    catalog: Catalog | None = None,
    kb_dirs: Iterable[Path] = (),
    environment: str = "",
) -> Report:
    """Pre-flight: known-bad configurations, before anything has crashed.

    ``flags`` is a launch command line, or just its flags (``"--bf16 True --deepspeed ds.json"``); ``environment``
    the running interpreter's packages (see :func:`incident_from`).
    """
    if flags.lstrip().startswith("-"):
        flags = "python train.py " + flags  # flags are read from launch lines: give bare flags one
    incident = incident_from(flags, freeze=freeze, configs=configs, environment=environment)
    loaded = _catalog(catalog, kb_dirs)
    findings, conditional = check_entries(loaded.checkable(), incident)
    return Report(
        incident, tuple(findings), tuple(unknown_inputs(conditional)), loaded.problems, conditional=tuple(conditional)
    )
