"""One-pass candidate selection: which entries can possibly match, before any entry's regex runs.

Each error pattern contributes one *keyword*: the longest whole word its every match must contain (taken from the
pattern's required literal text). An inverted index maps keywords to entries, so finding candidates costs one
tokenisation of the exception messages plus dictionary lookups — independent of how many entries the KB holds.
A pattern without a usable keyword (alternations only, character classes) makes its entry always a candidate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

try:  # Python >= 3.11
    import re._constants as _sre_constants
    import re._parser as _sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre_constants
    import sre_parse as _sre_parse

__all__ = ["choose_keywords", "leading_text", "required_words", "words_in"]

_WORD = re.compile(r"[a-z0-9_]+")
_MIN_WORD = 3


def _literal_runs(parsed: Iterable[tuple[object, object]]) -> list[str]:
    """Runs of literal text that every match contains, in order (branches and optional parts are skipped)."""
    runs: list[str] = []
    current: list[str] = []
    for op, arg in parsed:
        if op is _sre_constants.LITERAL:
            current.append(chr(arg))  # type: ignore[arg-type]
            continue
        if current:
            runs.append("".join(current))
            current = []
        if op is _sre_constants.SUBPATTERN:
            runs.extend(_literal_runs(arg[-1]))  # type: ignore[index]
        elif op in (_sre_constants.MAX_REPEAT, _sre_constants.MIN_REPEAT) and arg[0] >= 1:  # type: ignore[index]
            runs.extend(_literal_runs(arg[2]))  # type: ignore[index]
    if current:
        runs.append("".join(current))
    return runs


def required_words(pattern: str) -> list[str]:
    """Whole words (lower case) that every match of ``pattern`` contains; empty when none can be proven."""
    try:
        parsed = _sre_parse.parse(pattern)
    except Exception:  # RE2-only syntax Python cannot parse: no keyword, the entry is always a candidate
        return []
    words: list[str] = []
    for run in _literal_runs(parsed):
        lowered = run.lower()
        for match in _WORD.finditer(lowered):
            # Only words with a non-word character inside the run on both sides are whole words for sure.
            if match.start() == 0 or match.end() == len(lowered):
                continue
            if len(match.group(0)) >= _MIN_WORD:
                words.append(match.group(0))
    return words


def leading_text(pattern: str) -> tuple[str, bool]:
    """The literal text every match of ``pattern`` starts with, and whether it compares without case (``(?i)``);
    empty when the pattern starts with anything else. A message cut after its first clause is a prefix of it."""
    try:
        parsed = _sre_parse.parse(pattern)
    except Exception:  # RE2-only syntax Python cannot parse: no leading text known
        return "", False
    text: list[str] = []
    for op, arg in parsed:
        if op is not _sre_constants.LITERAL:
            break
        text.append(chr(arg))
    return "".join(text), bool(parsed.state.flags & re.IGNORECASE)


def choose_keywords(patterns: list[list[str]]) -> list[str]:
    """For each pattern's required words, the one fewest patterns of the whole KB share (the longest on a tie).

    A rare keyword keeps the candidate list short: "mat1" selects the few mat1/mat2 entries where "dtype" would
    select half the KB.
    """
    frequency: dict[str, int] = {}
    for words in patterns:
        for word in set(words):
            frequency[word] = frequency.get(word, 0) + 1
    return [min(words, key=lambda w: (frequency[w], -len(w), w)) if words else "" for words in patterns]


def words_in(texts: Iterable[str]) -> set[str]:
    """The lower-case words of ``texts``, tokenised the way :func:`required_words` splits patterns."""
    found: set[str] = set()
    for text in texts:
        found.update(_WORD.findall(text.lower()))
    return found
