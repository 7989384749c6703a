"""The ``dtypefix`` process: what runs before anything else is imported.

The process is short-lived, and its start-up allocates many objects that live as long as it does (the modules'
dataclasses and patterns, the KB index) and almost no cycles. With CPython's default thresholds the cyclic garbage
collector re-scanned them 17 times in a cold ``explain``: about a fifth of dtypefix's own start-up. So the first
threshold is raised before the imports, and what is alive after them is frozen out of later scans; collection
still runs for the long commands (``run``, ``scan``). Only the command's own process does this: importing
``dtypefix`` as a library (or the IPython extension) leaves the collector alone.
"""

from __future__ import annotations

import gc
import sys

__all__ = ["run"]


def run() -> None:
    gc.set_threshold(20_000, 50, 100)
    from .app import main

    gc.freeze()
    sys.exit(main())
