"""How every ``dtypefix`` process ends: an exit code and at most one line on stderr, never a traceback.

Shared by the typer application (:mod:`.app`) and the fast ``explain`` path (:mod:`.fastpath`), so a bad input, a
closed pipe or a bug in dtypefix ends the same way whichever of the two ran. Nothing here imports typer.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable

from .failure import say, say_failure, say_unwritable
from .inputs import InputError

__all__ = ["guarded", "prepare_streams"]


def prepare_streams(argv: list[str]) -> int | None:
    """Make the standard streams safe to write to; an exit code when the command cannot run at all."""
    for stream in (sys.stdout, sys.stderr):
        # A terminal or pipe that is not UTF-8 (PYTHONIOENCODING=ascii, a latin-1 locale) gets degraded characters
        # instead of nothing at all.
        if stream is not None and hasattr(stream, "reconfigure"):
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(errors="replace")
    if sys.stdout is None and argv[:1] != ["run"]:  # `run` still runs its command (its output is dropped)
        say_unwritable(OSError("standard output is closed"))
        return 2
    return None


def guarded(command: Callable[[], int]) -> int:
    """Run ``command`` and map every way it can end to an exit code (grep's: 0 found, 1 not found, 2 error,
    130 interrupted)."""
    try:
        return command()
    except InputError as exc:
        say(f"dtypefix: error: {exc}")
        return 2
    except KeyboardInterrupt:
        say("dtypefix: interrupted")
        return 130
    except BrokenPipeError:
        # The reader (head, less) went away: stop quietly, as grep does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:  # writing the answer failed: a full disk, a closed descriptor
        say_unwritable(exc)
        return 2
    except Exception as exc:
        say_failure(exc)
        return 2
