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


class _Hook:
    """dtypefix's hook, holding the one it replaced: the state lives in the installed hook itself (``sys`` holds
    it), not in this module."""

    def __init__(self, previous: Callable[..., Any]) -> None:
        self.previous = previous

    def __call__(self, exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        self.previous(exc_type, exc, tb)
        if not issubclass(exc_type, KeyboardInterrupt):
            explain_exception(exc_type, exc, tb)


class _ThreadHook:
    """The same for ``threading.excepthook``."""

    def __init__(self, previous: Callable[..., Any]) -> None:
        self.previous = previous

    def __call__(self, args: threading.ExceptHookArgs) -> None:
        self.previous(args)
        if args.exc_value is not None and not issubclass(args.exc_type, SystemExit):
            explain_exception(args.exc_type, args.exc_value, args.exc_traceback)


def install() -> None:
    """Explain uncaught exceptions in this process and its threads (idempotent)."""
    if not isinstance(sys.excepthook, _Hook):
        sys.excepthook = _Hook(sys.excepthook)
    if not isinstance(threading.excepthook, _ThreadHook):
        threading.excepthook = _ThreadHook(threading.excepthook)


def uninstall() -> None:
    """Restore the hooks that were there before :func:`install`."""
    if isinstance(sys.excepthook, _Hook):
        sys.excepthook = sys.excepthook.previous
    if isinstance(threading.excepthook, _ThreadHook):
        threading.excepthook = threading.excepthook.previous
