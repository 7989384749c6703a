"""What dtypefix says when it fails itself: one line on stderr, never a traceback (``DTYPEFIX_DEBUG=1`` shows it)."""

from __future__ import annotations

import contextlib
import os

import typer

__all__ = ["say_failure", "say_unwritable"]


def say_unwritable(exc: OSError) -> None:
    """One line on stderr when the answer could not be written (a full disk, a closed descriptor)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        typer.echo(f"dtypefix: error: cannot write the output: {exc.strerror or exc}", err=True)


def say_failure(exc: BaseException) -> None:
    """One line on stderr for a failure of dtypefix itself (never a traceback, never exit 1, which means
    "no known cause"); ``DTYPEFIX_DEBUG=1`` shows the traceback for a bug report."""
    if os.environ.get("DTYPEFIX_DEBUG"):
        import traceback

        traceback.print_exc()
    with contextlib.suppress(OSError, ValueError):  # stderr itself is gone: the exit code still says it
        typer.echo(f"dtypefix: internal error ({type(exc).__name__}: {exc}); rerun with DTYPEFIX_DEBUG=1", err=True)
