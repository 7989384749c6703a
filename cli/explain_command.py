"""``explain`` itself, and the start it shares with ``report``, ``check`` and ``run``: read the log and what
``--freeze``, ``--config`` and ``--this-env`` attach, score against the KB, and render.

Nothing here imports typer: :mod:`.fastpath` calls :func:`explain_command` directly for the common command lines,
and :mod:`.commands` calls it from the typer command, so both give the same answer.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from dtypefix.matcher.configs import Config
from dtypefix.matcher.explain import explain_incident, incident_from
from dtypefix.matcher.result import Report

from .formats import Document, emit
from .inputs import read_config, read_text_file, this_env_freeze
from .json_output import report_json
from .markdown import format_check, format_report
from .settings import Lang, catalog_for, lang_of
from .sources import source_for

__all__ = ["Attachments", "attachments", "explain_command", "explain_input", "report_document"]


@dataclass(frozen=True)
class Attachments:
    """What ``--freeze``, ``--this-env`` and ``--config`` brought, each file read once."""

    freeze: list[str]
    configs: list[Config]
    config_texts: dict[str, str]
    """File name -> text, for ``report``, which shows the configs (redacted)."""
    environment: str = ""
    """``--this-env``: this interpreter's packages as freeze lines (evidence says "this environment")."""


def attachments(freeze: list[str] | None, configs: list[str] | None, this_env: bool) -> Attachments:
    """Read every attached file once (a bad one raises :class:`~.inputs.InputError`: exit 2 with one line)."""
    texts = [read_text_file(path, "freeze") for path in freeze or []]
    read = {Path(path).name: read_config(path) for path in configs or []}
    return Attachments(
        texts,
        [config for _, config in read.values()],
        {n: t for n, (t, _) in read.items()},
        this_env_freeze() if this_env else "",
    )


def explain_input(
    file: str | None, freeze: list[str] | None, config: list[str] | None, this_env: bool, kb: list[Path] | None
) -> tuple[Report, Attachments]:
    """The shared start of ``explain`` and ``report``: read the log and attachments, score against the KB."""
    text = source_for(file).read()
    attached = attachments(freeze, config, this_env)
    incident = incident_from(text, freeze=attached.freeze, configs=attached.configs, environment=attached.environment)
    return explain_incident(incident, catalog_for(kb)), attached


def report_document(report: Report, lang: str, top: int, command: str, details: bool = False) -> Document:
    """The answer in every output format; each is rendered only when asked for."""

    def markdown() -> str:
        if command == "check":
            return format_check(report, lang, details)
        return format_report(report, lang, top, details)

    return Document(markdown, lambda: report_json(report, command), report, lang)


def explain_command(
    file: str | None,
    freeze: list[str] | None,
    config: list[str] | None,
    this_env: bool,
    lang: Lang | None,
    fmt: str | None,
    top: int,
    details: bool,
    kb: list[Path] | None,
) -> int:
    """``dtypefix explain``: exit 0 when a known cause matched, 1 when none did."""
    report, _ = explain_input(file, freeze, config, this_env, kb)
    emit(fmt, sys.stdout, report_document(report, lang_of(lang), top, "explain", details))
    return 0 if report.found else 1
