"""The ``dtypefix`` process: what runs before anything else is imported.

The process is short-lived, and its start-up allocates many objects that live as long as it does (the modules'
dataclasses and patterns, the KB index) and almost no cycles. With CPython's default thresholds the cyclic garbage
collector re-scanned them 17 times in a cold ``explain``: about a fifth of dtypefix's own start-up. So the first
threshold is raised before the imports, and what is alive after them is frozen out of later scans; collection
still runs for the long commands (``run``, ``scan``). Only the command's own process does this: importing
``dtypefix`` as a library (or the IPython extension) leaves the collector alone.

A plain ``explain`` command line skips the typer application altogether (:mod:`.fastpath`).
"""

from __future__ import annotations

import gc
import sys

__all__ = ["run"]


def _explain_fast(argv: list[str]) -> int | None:
    """The exit code of a plain ``explain`` command line, run without typer; None for every other command line."""
    from .fastpath import explain_line

    line = explain_line(argv)
    if line is None:
        return None
    from .explain_command import explain_command
    from .guard import guarded, prepare_streams

    gc.freeze()
    refused = prepare_streams(argv)
    if refused is not None:
        return refused
    return guarded(lambda: explain_command(**vars(line)))


def run() -> None:
    gc.set_threshold(20_000, 50, 100)
    try:
        code = _explain_fast(sys.argv[1:])
    except KeyboardInterrupt:  # a Ctrl-C during a slow start
        from .failure import say

        say("dtypefix: interrupted")
        sys.exit(130)
    if code is not None:
        sys.exit(code)
    from .app import main

    gc.freeze()
    sys.exit(main())
