"""Linear-time regular expressions for untrusted patterns and untrusted text.

KB patterns come from pull requests and private KB folders, and the text they run on is whatever a crashed
run printed. Python's backtracking ``re`` can take exponential time on either, so every KB pattern is compiled
by RE2, which rejects the constructs it cannot run in linear time (look-around, back-references).
"""

from __future__ import annotations

from typing import Any, Protocol, cast

import re2

__all__ = ["Pattern", "PatternError", "compile_pattern"]


class Pattern(Protocol):
    """What the matcher uses of a compiled RE2 pattern (google-re2 ships no type hints)."""

    def search(self, text: str) -> Any: ...

    def finditer(self, text: str) -> Any: ...

    def sub(self, repl: Any, text: str) -> str: ...


class PatternError(ValueError):
    """A KB pattern that RE2 cannot compile (bad syntax, or a construct without a linear-time engine)."""


def compile_pattern(source: str) -> Pattern:
    """Compile ``source`` with RE2; raise :class:`PatternError` with RE2's reason when it cannot."""
    options = re2.Options()
    options.log_errors = False
    options.max_mem = 16 << 20  # a hostile pattern cannot make RE2 build an unbounded DFA
    try:
        return cast(Pattern, re2.compile(source, options))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(f"RE2 cannot compile {source!r}: {reason}") from None
