"""Regular expressions: linear-time ones for untrusted patterns, and our own compiled only when first used.

KB patterns come from pull requests and private KB folders, and the text they run on is whatever a crashed
run printed. Python's backtracking ``re`` can take exponential time on either, so every KB pattern is compiled
by RE2, which rejects the constructs it cannot run in linear time (look-around, back-references).

The matcher's own patterns (reviewed here, run on bounded lines) use ``re``. There are over a hundred, and most
inputs need a fraction of them (GPU names, IPython layouts, launcher prefixes...): compiling all of them at
import cost a cold ``dtypefix explain`` about a fifth of its own time. :class:`LazyRegex` compiles on first use.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, Protocol, cast

import re2

__all__ = ["LazyPattern", "LazyRegex", "Pattern", "PatternError", "compile_pattern", "lazy_regex"]


class Pattern(Protocol):
    """What the matcher uses of a compiled RE2 pattern (google-re2 ships no type hints)."""

    @property
    def pattern(self) -> str: ...

    def search(self, text: str) -> Any: ...

    def finditer(self, text: str) -> Any: ...

    def sub(self, repl: Any, text: str) -> str: ...


class PatternError(ValueError):
    """A KB pattern that RE2 cannot compile (bad syntax, or a construct without a linear-time engine)."""


@functools.lru_cache(maxsize=4096)
def compile_pattern(source: str) -> Pattern:
    """Compile ``source`` with RE2; raise :class:`PatternError` with RE2's reason when it cannot.

    Remembered per process: located causes repeat their family's message pattern (the mat1/mat2 wordings appear in
    a dozen entries), and a compiled RE2 pattern is immutable, so each distinct pattern is compiled once."""
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


class LazyPattern:
    """A KB pattern that RE2 compiles on its first search, or when :meth:`compile` checks it.

    An entry built from the validated KB cache was compiled, and so checked, by this same code when the cache was
    written; a start-up builds a few dozen candidate entries, most of which fail on their first pattern, so their
    other patterns are never compiled. ``field`` names where the pattern was written, for the error message.
    """

    __slots__ = ("_compiled", "field", "pattern")

    def __init__(self, pattern: str, field: str = "") -> None:
        self.pattern = pattern
        self.field = field
        self._compiled: Pattern | None = None

    def compile(self) -> Pattern:
        """The compiled pattern; raises :class:`PatternError` when RE2 refuses it."""
        if self._compiled is None:
            self._compiled = compile_pattern(self.pattern)
        return self._compiled

    def search(self, text: str) -> Any:
        return self.compile().search(text)

    def finditer(self, text: str) -> Any:
        return self.compile().finditer(text)

    def sub(self, repl: Any, text: str) -> str:
        return self.compile().sub(repl, text)


class LazyRegex:
    """A ``re`` pattern that compiles itself on first use; the methods the matcher calls, with ``re``'s meaning.

    On first use the compiled pattern's own methods are bound onto the instance, so later calls go straight to
    ``re``'s C code with no wrapper in between (hot loops call ``match`` once per line). A module-level constant
    still behaves as a constant: only its first use differs.
    """

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    @property
    def compiled(self) -> re.Pattern[str]:
        compiled = re.compile(self.pattern, self.flags)
        for name in ("search", "match", "fullmatch", "finditer", "findall", "sub", "split"):
            setattr(self, name, getattr(compiled, name))
        return compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(string, maxsplit)


def lazy_regex(pattern: str, flags: int = 0) -> LazyRegex:
    """``re.compile``, deferred to the first search (see the module docstring)."""
    return LazyRegex(pattern, flags)
