"""From raw bytes to clean text, one stream per process.

A crashed distributed run prints colour codes, tqdm bars redrawn with carriage returns, launcher timestamps and
the output of eight ranks interleaved line by line. Tracebacks can only be parsed once each rank's lines are
back together, so this stage undoes all of that before anything else looks at the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .regex import LazyRegex, lazy_regex

__all__ = ["Source", "Stream", "decode", "normalise", "split_streams"]

# ANSI CSI / OSC sequences and lone escapes (colour, cursor movement, hyperlinks).
_ANSI = lazy_regex(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# Control characters other than tab, newline and carriage return (NUL bytes from binary junk included), the C1
# controls (U+009B is a one-character CSI and U+009D an OSC to a terminal) and the bidi embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069), which make a terminal or a rendered page show text other than it holds.
_CONTROL = lazy_regex("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Launcher timestamps: "2024-05-01 12:00:01,123 - ", "[2024-05-01 12:00:01]", "2024-05-01T12:00:01.123Z ".
_TIMESTAMP = lazy_regex(
    r"^\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?(?:\s*-\s*|\s+)"
)
# Per-process prefixes, most specific first. Each yields the label of the stream the line belongs to.
_RANK_PREFIXES = (
    lazy_regex(r"^\[(?P<label>rank\d+)\]:\s?"),  # torchrun --log-line-prefix / torch >= 2.2 "[rank3]:"
    lazy_regex(r"^\[(?P<label>default\d+)\]:\s?"),  # torchrun --tee / --redirects "[default0]:"
    # pdsh / deepspeed multi-node: "worker-1: ", "node03: ", "10.0.0.7: "
    lazy_regex(r"^(?P<label>[\w-]*(?:worker|node|host)[-_]?\d+|\d{1,3}(?:\.\d{1,3}){3}):\s"),
    lazy_regex(r"^(?P<label>\d{1,4}):\s"),  # srun --label "0: "
)
# Each run is tried once, from its first character: the look-behind refuses every start inside a run at once.
# Without it a run of N spaces or carriage returns not at a line end costs N^2 steps (69 s for 80,000 spaces).
_TRAILING_CR = lazy_regex(r"(?<!\r)\r+(?=\n|$)")
# A log saved with "\r" line endings only (classic Mac) rather than a progress bar redrawn in place: a traceback's
# lines follow carriage returns, which a bar never prints.
_CR_ONLY_TRACEBACK = lazy_regex(r"\r(?:Traceback \(most recent call last\)|[ \t]+File \")")
_UP_TO_LAST_CR = lazy_regex(r"^[^\n]*\r", re.MULTILINE)  # anchored: one scan per line, not per position
_TIMESTAMP_LINE = lazy_regex(_TIMESTAMP.pattern, re.MULTILINE)
# tqdm ends a bar's state with its rate ("... 2.41it/s]", "1.5s/it]") and no newline when the run then crashes: the
# traceback header lands on the bar's line, and a header that does not start its line is not read as one.
_BAR_BEFORE_TRACEBACK = lazy_regex(r"(/s\]|/it\])(Traceback \(most recent call last\):)")
_TRAILING_SPACE = lazy_regex(r"(?<![ \t])[ \t]+$", re.MULTILINE)
_ANY_PREFIX = lazy_regex(
    r"^(?:\[(?:rank|default)\d+\]:|[\w-]*(?:worker|node|host)[-_]?\d+: |\d{1,3}(?:\.\d{1,3}){3}: |\d{1,4}: "
    r"|[A-Za-z][\w.-]{0,40}?\d+: )",
    re.MULTILINE,
)
_BARE_LABEL_HINT = lazy_regex(r"^\d{1,4}: ", re.MULTILINE)


@dataclass(frozen=True)
class Stream:
    """The lines one process printed, with its prefix removed."""

    label: str
    """``rank3``, ``default0``, ``worker-1``, ``0``; ``main`` for lines without a process prefix."""
    text: str
    """The stream's lines joined with ``\\n``."""


@dataclass(frozen=True)
class Source:
    """Input text after cleaning, both whole and split per process."""

    text: str
    """The whole input, cleaned, prefixes kept (for ``log`` patterns and embedded configs)."""
    streams: tuple[Stream, ...]
    """One stream per process label; a single ``main`` stream for ordinary output."""


def decode(data: bytes) -> str:
    """Decode bytes as UTF-8, replacing what is not; a BOM and UTF-16 dumps from Windows are recognised."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8", errors="replace")


def normalise(text: str) -> str:
    """Strip ANSI codes and control bytes, fold carriage returns, drop launcher timestamps; lines end in ``\\n``.

    Whole-text substitutions rather than a loop over lines: a log can hold millions of lines.
    """
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    text = text.replace("\r\n", "\n")
    text = _CONTROL.sub("", text)
    if "\r" in text and "\n" not in text.rstrip("\n") and _CR_ONLY_TRACEBACK.search(text):
        text = text.replace("\r", "\n")  # classic Mac line endings: every "\r" ends a line, none redraws one
    if "\r" in text:
        text = _TRAILING_CR.sub("", text)  # a bar ending in "\r" keeps its last state
        text = _UP_TO_LAST_CR.sub("", text)  # what a terminal shows: the text after the last "\r"
    if "]Traceback (most recent call last):" in text:
        text = _BAR_BEFORE_TRACEBACK.sub("\\1\n\\2", text)  # the traceback starts its own line again
    text = _TIMESTAMP_LINE.sub("", text)
    return _TRAILING_SPACE.sub("", text)


_HOST_LABEL = lazy_regex(r"^(?P<label>[A-Za-z][\w.-]{0,40}?\d+):\s", re.MULTILINE)


def _prefix_patterns(text: str) -> tuple[LazyRegex, ...]:
    """The prefixes to strip. Bare "0: " and any "hostname7: " (pdsh with other host names) are too common in
    ordinary output to trust alone, so they count only when at least three lines carry them."""
    patterns = list(_RANK_PREFIXES[:3])
    if len(_BARE_LABEL_HINT.findall(text, 0, 200_000)) >= 3:
        patterns.append(_RANK_PREFIXES[3])
    if len(_HOST_LABEL.findall(text, 0, 200_000)) >= 3:
        patterns.append(_HOST_LABEL)
    return tuple(patterns)


def split_streams(text: str) -> tuple[Stream, ...]:
    """Group lines by their process prefix, preserving order within each stream."""
    if not _ANY_PREFIX.search(text):
        return (Stream("main", text),)  # ordinary output: no per-line work at all
    patterns = _prefix_patterns(text)
    order: list[str] = []
    buckets: dict[str, list[str]] = {}
    for line in text.split("\n"):
        label = "main"
        for pattern in patterns:
            match = pattern.match(line)
            if match:
                label = match.group("label")
                line = line[match.end() :]
                break
        if label not in buckets:
            buckets[label] = []
            order.append(label)
        buckets[label].append(line)
    return tuple(Stream(label, "\n".join(buckets[label])) for label in order)


def lines_containing(pattern: LazyRegex, text: str) -> Iterator[str]:
    """Each whole line of ``text`` in which ``pattern`` occurs, once, in order.

    Scanners use this to visit only the few lines of a big log that can matter: one C-level search for the
    pattern, then the enclosing line, instead of several regexes on every line.
    """
    end = -1
    for found in pattern.finditer(text):
        if found.start() <= end:
            continue
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        if end < 0:
            end = len(text)
        yield text[start:end]


def from_text(text: str) -> Source:
    """Clean ``text`` and split it per process."""
    clean = normalise(text)
    return Source(clean, split_streams(clean))


__all__ += ["from_text", "lines_containing"]
