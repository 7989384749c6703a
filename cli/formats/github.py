"""``--format github``: GitHub Actions workflow commands, so a CI job that runs a training smoke test shows the
explanation as an annotation on the failing line of the pull request.

Each match of ``explain`` / ``run`` becomes ``::error file=…,line=…,title=…::message`` pointing at the innermost
frame of the user's own code in the headline traceback (not a library's, not the interpreter's); a check finding
becomes ``::warning``. Paths under ``GITHUB_WORKSPACE`` are made relative to it, as annotations need. Other
commands (``show``, ``search``, ``report``) have nothing to point at and print their Markdown.

See https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, TextIO

from dtypefix.matcher.traceback import Frame, Stack

from ..i18n import t
from ..markdown import fill
from .base import Document, Format

if TYPE_CHECKING:
    from dtypefix.matcher import Incident, Match, Report

__all__ = ["FORMAT", "user_frame", "workflow_commands"]

# Frames that are not the user's code: installed libraries, the standard library, the interpreter's own.
_NOT_USER = re.compile(r"site-packages|dist-packages|[\\/]lib[\\/]python\d|^<")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def user_frame(incident: Incident) -> Frame | None:
    """The innermost frame of the user's own code in the headline traceback: where the annotation goes."""
    primary = incident.primary
    if not isinstance(primary, Stack):
        return None
    return next((f for f in reversed(primary.frames) if f.file and not _NOT_USER.search(f.file)), None)


def _relative(path: str, workspace: str) -> str:
    posix = path.replace("\\", "/")
    if workspace:
        base = workspace.replace("\\", "/").rstrip("/") + "/"
        if posix.startswith(base):
            return posix[len(base) :]
    return str(PurePosixPath(posix))


def _command(level: str, title: str, message: str, frame: Frame | None, workspace: str) -> str:
    props = []
    if frame is not None:
        props += [f"file={_escape_property(_relative(frame.file, workspace))}", f"line={frame.line}"]
    props.append(f"title={_escape_property(title)}")
    return f"::{level} {','.join(props)}::{_escape_data(message)}"


def _message(match: Match, lang: str) -> str:
    entry = match.entry
    lines = [t(match.confidence.value + ".confidence", lang)]
    if entry.fix:
        lines.append(f"{t('fix', lang)}{t('colon.inline', lang)}{fill(entry.fix[0].get(lang), match.groups)}")
    lines.append(t("more", lang, id=entry.id))
    return "\n".join(lines)


def workflow_commands(report: Report, lang: str, workspace: str = "") -> list[str]:
    """One workflow command per match (``error`` for an explained failure, ``warning`` for a check finding)."""
    one = "en" if lang == "both" else lang
    level = "error" if report.incident.stacks or report.incident.error_lines else "warning"
    frame = user_frame(report.incident) if level == "error" else None
    return [
        _command(level, f"dtypefix {m.entry.id}: {m.entry.title.get(one)}", _message(m, one), frame, workspace)
        for m in report.matches
    ]


def _write(document: Document, stream: TextIO) -> None:
    if document.report is None:
        stream.write(document.markdown())
        return
    for line in workflow_commands(document.report, document.lang, os.environ.get("GITHUB_WORKSPACE", "")):
        stream.write(line + "\n")


FORMAT = Format("github", "GitHub Actions annotations on the failing line", _write)
