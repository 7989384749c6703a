"""The pipeline in one place: text -> Incident -> scored matches -> Report.

This is the public entry point for scripts and editors (``from dtypefix.matcher import explain``). It reads no
files and prints nothing: callers pass text and get typed results, the same data the JSON output carries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from .catalog import Catalog, default_cache_dir, load_catalog
from .configs import Config, ConfigError, parse_config
from .incident import Incident, build_incident
from .prefilter import words_in
from .result import Report
from .score import check_entries, deciders, score_entries

__all__ = ["check", "explain", "explain_incident"]


def _catalog(catalog: Catalog | None, kb_dirs: Iterable[Path]) -> Catalog:
    return catalog if catalog is not None else load_catalog(kb_dirs, cache_dir=default_cache_dir())


def _configs(configs: Iterable[Config | str | tuple[str, str]]) -> tuple[list[Config], list[str]]:
    parsed: list[Config] = []
    notes: list[str] = []
    for index, item in enumerate(configs):
        if isinstance(item, Config):
            parsed.append(item)
            continue
        origin, text = item if isinstance(item, tuple) else (f"config #{index + 1}", item)
        try:
            parsed.append(parse_config(text, origin))
        except ConfigError as exc:
            notes.append(f"{origin}: {exc}")
    return parsed, notes


_TEXT_TAIL = 65536


def _words(incident: Incident) -> set[str]:
    """Words the error patterns could match: exception messages, and the log's tail for untyped patterns."""
    messages = [s.message for s in incident.stacks] + [e.message for e in incident.error_lines]
    return words_in([*messages, incident.text[-_TEXT_TAIL:]])


def explain_incident(incident: Incident, catalog: Catalog, top: int | None = None) -> Report:
    """Score an already-built incident against ``catalog``."""
    matches = score_entries(catalog.candidates(_words(incident)), incident)
    chosen = matches[:top] if top else matches
    return Report(incident, tuple(chosen), tuple(deciders(matches)), catalog.problems)


def explain(
    text: str,
    *,
    freeze: str | Sequence[str] = (),
    configs: Iterable[Config | str | tuple[str, str]] = (),
    catalog: Catalog | None = None,
    kb_dirs: Iterable[Path] = (),
    top: int | None = None,
) -> Report:
    """Explain a failure.

    ``text`` is the raw output (a traceback, a whole log or a pasted bug report). ``freeze`` is the text of
    ``pip freeze`` or any other version listing; ``configs`` are config texts (or ``(name, text)`` pairs, or
    parsed :class:`Config`); unreadable configs become notes on the incident instead of errors.
    """
    freeze_texts = [freeze] if isinstance(freeze, str) else list(freeze)
    parsed, notes = _configs(configs)
    incident = build_incident(text, freeze=freeze_texts, configs=parsed, notes=notes)
    return explain_incident(incident, _catalog(catalog, kb_dirs), top)


def check(
    *,
    freeze: str | Sequence[str] = (),
    configs: Iterable[Config | str | tuple[str, str]] = (),
    flags: str = "",
    catalog: Catalog | None = None,
    kb_dirs: Iterable[Path] = (),
) -> Report:
    """Pre-flight: known-bad configurations, before anything has crashed.

    ``flags`` is a launch command line, or just its flags (``"--bf16 True --deepspeed ds.json"``).
    """
    freeze_texts = [freeze] if isinstance(freeze, str) else list(freeze)
    parsed, notes = _configs(configs)
    if flags.lstrip().startswith("-"):
        flags = "python train.py " + flags  # flags are read from launch lines: give bare flags one
    incident = build_incident(flags, freeze=freeze_texts, configs=parsed, notes=notes)
    loaded = _catalog(catalog, kb_dirs)
    return Report(incident, tuple(check_entries(loaded.checkable(), incident)), (), loaded.problems)
