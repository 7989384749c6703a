"""Explain exceptions where they happen: ``sys.excepthook``, ``threading.excepthook`` and IPython.

``install()`` keeps the normal traceback and prints dtypefix's explanation under it, on stderr, only when a known
cause matches. It imports nothing heavy (no torch, no typer, no rich): the work happens only when an exception
actually reaches the hook.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

__all__ = ["explain_exception", "install", "uninstall"]

_saved: dict[str, Any] = {}


def explain_exception(
    exc_type: type[BaseException],
    exc: BaseException,
    tb: TracebackType | None,
    *,
    lang: str | None = None,
    stream: TextIO | None = None,
    top: int = 1,
) -> bool:
    """Print the explanation of one exception (Markdown) to ``stream``; return whether a cause matched."""
    from dtypefix.matcher import explain

    from .i18n import default_lang
    from .markdown import format_report

    text = "".join(traceback.format_exception(exc_type, exc, tb))
    try:
        report = explain(text)
    except Exception:  # the hook must never add a second failure on top of the user's
        return False
    if not report.found:
        return False
    out = stream or sys.stderr
    out.write("\n" + format_report(report, lang or default_lang(), top))
    out.flush()
    return True


def _excepthook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    previous: Callable[..., Any] = _saved.get("sys", sys.__excepthook__)
    previous(exc_type, exc, tb)
    if not issubclass(exc_type, KeyboardInterrupt):
        explain_exception(exc_type, exc, tb)


def _thread_hook(args: threading.ExceptHookArgs) -> None:
    previous: Callable[..., Any] = _saved.get("threading", threading.__excepthook__)
    previous(args)
    if args.exc_value is not None and not issubclass(args.exc_type, SystemExit):
        explain_exception(args.exc_type, args.exc_value, args.exc_traceback)


def install() -> None:
    """Explain uncaught exceptions in this process and its threads (idempotent)."""
    if "sys" not in _saved:
        _saved["sys"] = sys.excepthook
        _saved["threading"] = threading.excepthook
    sys.excepthook = _excepthook
    threading.excepthook = _thread_hook


def uninstall() -> None:
    """Restore the hooks that were there before :func:`install`."""
    if "sys" in _saved:
        sys.excepthook = _saved.pop("sys")
        threading.excepthook = _saved.pop("threading")
