"""What dtypefix says when it fails itself: one line on stderr, never a traceback (``DTYPEFIX_DEBUG=1`` shows it).

Written without typer: the fast ``explain`` path (:mod:`.fastpath`) reports its failures through here too, and it
never imports the command-line framework.
"""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["say", "say_failure", "say_unwritable"]


def say(line: str) -> None:
    """One line on stderr; nothing when stderr is closed or gone (the exit code still says it)."""
    stream = sys.stderr
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError, AttributeError):
        stream.write(line + "\n")
        stream.flush()


def say_unwritable(exc: OSError) -> None:
    """One line on stderr when the answer could not be written (a full disk, a closed descriptor)."""
    say(f"dtypefix: error: cannot write the output: {exc.strerror or exc}")


def say_failure(exc: BaseException) -> None:
    """One line on stderr for a failure of dtypefix itself (never a traceback, never exit 1, which means
    "no known cause"); ``DTYPEFIX_DEBUG=1`` shows the traceback for a bug report."""
    if os.environ.get("DTYPEFIX_DEBUG"):
        import traceback

        traceback.print_exc()
    say(f"dtypefix: internal error ({type(exc).__name__}: {exc}); rerun with DTYPEFIX_DEBUG=1")
