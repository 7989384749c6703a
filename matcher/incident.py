"""The Incident: everything the input says, in one plain, typed object.

Parsing happens once, here. What an entry may ask of an incident (``precision.bf16``? the ``deepspeed`` version?)
is answered by :mod:`.facts`; each answer says whether the input *knows*.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from .configs import Config, find_embedded
from .cut import CutInside, cut_inside
from .flags import LaunchFlags, parse_flags
from .hardware import Hardware, parse_hardware
from .observation import Note, Origin
from .packages import PackageVersion, parse_versions
from .recover import bare_error_lines, recover_error_lines, variant_lines, variants
from .regex import lazy_regex
from .source import from_text
from .traceback import EXCEPTION, ErrorLine, Frame, Stack, find_error_lines, parse_stacks

__all__ = ["Incident", "build_incident", "with_lines_above"]

# Exceptions that only report that something else failed; the error that matters is elsewhere.
_WRAPPERS = {"ChildFailedError", "CalledProcessError", "SystemExit", "KeyboardInterrupt", "ProcessRaisedException"}


MESSAGE_SEPARATOR = "\n\x00\n"
"""Between messages in :attr:`Incident.message_index`: a line of its own holding a NUL, which no message has."""


@dataclass(frozen=True)
class Incident:
    """One failure as dtypefix understands it."""

    text: str = field(repr=False)
    """The whole input, cleaned (ANSI, carriage returns and timestamps removed)."""
    streams: tuple[str, ...]
    """Process labels seen (``main``, ``rank0``...)."""
    stacks: tuple[Stack, ...]
    """Every traceback found, deduplicated across ranks, in printed order."""
    error_lines: tuple[ErrorLine, ...]
    """``Type: message`` lines, including those outside tracebacks."""
    packages: dict[str, PackageVersion]
    configs: tuple[Config, ...]
    launch: LaunchFlags
    hardware: Hardware
    notes: tuple[Note, ...] = ()
    """Configs that could not be read, shown to the user."""
    skipped_tracebacks: int = 0
    """Tracebacks counted but not read: the middle of a stream that printed more than :data:`MAX_TRACEBACKS`."""
    """Problems met while reading the input (an unreadable config), shown to the user."""

    root_rank: str = ""
    """The global rank torchrun names as the first observed failure (``"3"``), when it printed one."""
    error_line_missing: bool = False
    """The paste ends inside a traceback, before its exception line, and no other line names an exception: what
    is proposed comes from the frames (and a ``raise`` shown in them) alone."""
    cut: CutInside | None = None
    """When the error line is missing and the last frame's function raises one known message: that message (also
    among :attr:`error_lines`, so the entries that recognise it are proposed, at low confidence)."""

    @functools.cached_property
    def primary(self) -> Stack | ErrorLine | None:
        """The error that matters: the first failure's own exception, not a launcher's wrapper around it.

        In a multi-rank log that is the rank torchrun reports as the root cause; otherwise the last exception.
        """
        if self.root_rank:
            for stack in reversed(self.stacks):
                if _rank_of(stack.stream) == self.root_rank and stack.short_type not in _WRAPPERS:
                    return stack
        for stack in reversed(self.stacks):
            if stack.exc_type and stack.short_type not in _WRAPPERS:
                return stack
        for line in reversed(self.error_lines):
            if line.exc_type and line.exc_type.rsplit(".", 1)[-1] not in _WRAPPERS:
                return _as_read(line, self.error_lines)
        # Recovered without a type (a message pasted alone, behind an app's prefix): the first one read.
        for line in self.error_lines:
            if not line.exc_type:
                return line
        return self.stacks[-1] if self.stacks else None

    @property
    def has_own_exception(self) -> bool:
        """An exception other than a launcher's wrapper was found (a traceback or a ``Type: message`` line)."""
        return any(s.exc_type and s.short_type not in _WRAPPERS for s in self.stacks) or any(
            line.exc_type and line.exc_type.rsplit(".", 1)[-1] not in _WRAPPERS for line in self.error_lines
        )

    @property
    def has_frames(self) -> bool:
        return any(stack.frames for stack in self.stacks)

    @property
    def has_complete_traceback(self) -> bool:
        """A whole traceback (header and exception line included) is present, so a frame that is absent really is
        absent. A paste cut before its exception line lost the frames nearest the error."""
        return any(stack.frames and stack.complete and stack.error_line for stack in self.stacks)

    @functools.cached_property
    def exceptions(self) -> tuple[tuple[str, str], ...]:
        """Each distinct ``(type, message)`` of the exceptions and error lines, headline first, in the order patterns
        try them (computed once: every error pattern of every candidate asks).

        The headline first, so that the evidence quotes the same rank and error the answer is about.
        """
        found = dict.fromkeys(
            [(s.exc_type, s.message) for s in self.stacks] + [(e.exc_type, e.message) for e in self.error_lines]
        )
        primary = self.primary
        if primary is not None:
            head = (primary.exc_type, primary.message)
            return (head, *(pair for pair in found if pair != head))
        return tuple(found)

    @functools.cached_property
    def frames(self) -> tuple[Frame, ...]:
        """Every distinct frame of every stack, in the order the stacks give them (a frame condition asks each
        once, however many ranks or repeated tracebacks printed it)."""
        return tuple(dict.fromkeys(frame for stack in self.stacks for frame in stack.frames))

    @functools.cached_property
    def lowered_text(self) -> str:
        """:attr:`text` in lower case: whether a pattern's keyword occurs at all is one C-level substring search,
        so a pattern that cannot match the text is neither compiled nor run over it."""
        return self.text.lower()

    @functools.cached_property
    def message_words(self) -> frozenset[str]:
        """The lower-case words of every message in :attr:`exceptions` (see :func:`.prefilter.words_in`)."""
        from .prefilter import words_in

        return frozenset(words_in(message for _, message in self.exceptions))

    @functools.cached_property
    def message_index(self) -> tuple[str, tuple[int, ...]]:
        """The messages of :attr:`exceptions` joined by a separator no message holds, and where each starts.

        One regex search over the joined text tells which exception a pattern can first match; a flood of distinct
        tracebacks (100k in one log) then costs each pattern one linear scan instead of a search per exception.
        """
        starts: list[int] = []
        at = 0
        for _, message in self.exceptions:
            starts.append(at)
            at += len(message) + len(MESSAGE_SEPARATOR)
        return MESSAGE_SEPARATOR.join(message for _, message in self.exceptions), tuple(starts)


def _dedupe(stacks: Iterable[Stack]) -> tuple[Stack, ...]:
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    unique: list[Stack] = []
    for stack in stacks:
        key = (stack.exc_type, stack.message, tuple(f.function for f in stack.frames))
        if key not in seen:
            seen.add(key)
            unique.append(stack)
    return tuple(unique)


MAX_TRACEBACKS = 1000
"""Tracebacks read per stream. A loop that logs an exception and goes on can print 100,000 of them; the first
:data:`_HEAD_TRACEBACKS` (where the run started to go wrong) and the last ones (where it died) decide, and the
cost of a run stays bounded whatever the flood. The middle is counted, at ``str.find`` speed."""
_HEAD_TRACEBACKS = 200
_HEADER = "Traceback (most recent call last):"


def _bounded_tracebacks(text: str) -> tuple[str, int]:
    """``text`` with the tracebacks beyond :data:`MAX_TRACEBACKS` cut from its middle, and how many were cut."""
    total = text.count(_HEADER)
    if total <= MAX_TRACEBACKS:
        return text, 0
    starts = []
    at = text.find(_HEADER)
    while at >= 0:
        starts.append(at)
        at = text.find(_HEADER, at + len(_HEADER))
    tail = MAX_TRACEBACKS - _HEAD_TRACEBACKS
    head_end, tail_start = starts[_HEAD_TRACEBACKS], starts[-tail]
    return text[:head_end] + text[tail_start:], len(starts) - MAX_TRACEBACKS


_SCAN_HEAD = 1 << 20
_SCAN_TAIL = 1 << 20


def _scan_region(text: str) -> str:
    """Where versions, configs, flags and GPU names are looked for in a big log: its head and its tail.

    Environment dumps, launch commands and printed configs come at the start of a run, pasted reports are
    small, and the end holds the crash; the middle of a multi-gigabyte log is training progress.
    """
    if len(text) <= _SCAN_HEAD + _SCAN_TAIL:
        return text
    return text[:_SCAN_HEAD] + "\n" + text[-_SCAN_TAIL:]


def build_incident(
    text: str,
    *,
    freeze: Iterable[str] = (),
    configs: Iterable[Config] = (),
    notes: Iterable[Note] = (),
    environment: str = "",
) -> Incident:
    """Parse ``text`` (and any attached freeze texts and configs) into an :class:`Incident`.

    Explicitly given configs and freeze files come first, so they win over what is found pasted in the log.
    ``environment`` is the running interpreter's packages (``--this-env``, ``run``) as freeze lines: after the
    freeze files, before what the log shows, and marked as such (origin ``environment``).
    """
    source = from_text(text)
    stacks: list[Stack] = []
    lines: list[ErrorLine] = []
    skipped = 0
    for stream in source.streams:
        read, cut = _bounded_tracebacks(stream.text)
        skipped += cut
        stacks.extend(parse_stacks(read, stream.label))
        lines.extend(find_error_lines(read, stream.label))
        lines.extend(recover_error_lines(read, stream.label))
    if not any(s.exc_type for s in stacks) and not any(line.exc_type for line in lines):
        # Nothing names an exception: a short paste's lines are the message itself.
        for stream in source.streams:
            lines.extend(bare_error_lines(stream.text, stream.label))
    missing = _error_line_missing(stacks, lines, source.text)
    inside = cut_inside(stacks[-1]) if missing else None
    if inside is not None:
        lines.append(inside.error_line(stacks[-1].stream))
    lines.extend(variant_lines(stacks, lines))
    packages: dict[str, PackageVersion] = {}
    for extra in freeze:
        for name, version in parse_versions(extra).items():
            packages.setdefault(name, version)
    for name, version in parse_versions(environment).items():
        packages.setdefault(name, replace(version, origin=Origin.ENVIRONMENT.value))
    scan = _scan_region(source.text)
    for name, version in parse_versions(scan).items():
        packages.setdefault(name, version)
    all_configs = (*configs, *find_embedded(scan))
    seen_lines: set[tuple[str, str]] = set()
    unique_lines = []
    for line in lines:
        if (line.exc_type, line.message) not in seen_lines:
            seen_lines.add((line.exc_type, line.message))
            unique_lines.append(line)
    return Incident(
        text=_bounded_tracebacks(source.text)[0],  # what was read: the same middle left out
        streams=tuple(s.label for s in source.streams),
        stacks=_dedupe(stacks),
        error_lines=tuple(unique_lines),
        packages=packages,
        configs=all_configs,
        launch=parse_flags(scan),
        hardware=parse_hardware(scan),
        notes=tuple(notes),
        root_rank=_root_rank(source.text),
        error_line_missing=missing,
        cut=inside,
        skipped_tracebacks=skipped,
    )


def _as_read(line: ErrorLine, lines: tuple[ErrorLine, ...]) -> ErrorLine:
    """The line as the input printed it, when ``line`` is one of the readings :func:`variants` added for a damaged
    copy (joined inside a word, a quote closed): those stay candidates for matching, but the error shown and whose
    operands are read is what was printed ("torch.float32" then "trainable params: ..." is not "float32trainable")."""
    for read in lines:
        if read is not line and read.exc_type == line.exc_type and line.message in variants(read.message):
            return read
    return line


def with_lines_above(incident: Incident) -> Incident | None:
    """A short paste of messages without a traceback whose typed exception no entry knows, with its other lines read
    as messages too; None when the paste is not one (a traceback, a log longer than a short paste, no typed line).

    Lines around an exception are prose, not the error, while the exception is one the KB knows; when it is not, the
    line above it may be the message that is (vLLM prints its bf16 refusal, then raises a hardware-floor
    RuntimeError no entry lists). The caller asks only after nothing matched."""
    if incident.stacks or not any(line.exc_type for line in incident.error_lines):
        return None
    known = {line.message for line in incident.error_lines}
    above = [
        line
        for stream in from_text(incident.text).streams
        for line in bare_error_lines(stream.text, stream.label)
        if "\n" not in line.message and not EXCEPTION.match(line.message) and line.message not in known
    ]
    return replace(incident, error_lines=(*incident.error_lines, *above)) if above else None


def _error_line_missing(stacks: list[Stack], lines: list[ErrorLine], text: str = "") -> bool:
    """The last traceback was cut before its exception line, and no other line shows the error (typed or not).

    An untyped line that is only the traceback again (a frame's header, or the code line under one, behind a log
    prefix such as ``container | 2024-02-20 | ERROR | stderr |``) shows no error."""
    if not stacks or stacks[-1].error_line:
        return False

    def frames_again(line: ErrorLine) -> bool:
        if line.exc_type or "\n" in line.message:
            return not line.exc_type and all(frames_again(ErrorLine("", part, "")) for part in line.message.split("\n"))
        if 'File "' in line.message:
            return True
        at = text.find(line.message)
        before = text[text.rfind("\n", 0, max(at - 1, 0)) + 1 : max(at - 1, 0)] if at > 0 else ""
        return 'File "' in before

    return not any(s.error_line for s in stacks) and all(frames_again(line) for line in lines)


_ROOT_CAUSE = lazy_regex(r"Root Cause \(first observed failure\):\s*\n(?:.*\n){0,6}?\s*rank\s*:\s*(?P<rank>\d+)")


def _root_rank(text: str) -> str:
    """The rank torchrun's error summary names as the first observed failure."""
    found = _ROOT_CAUSE.search(text[-(1 << 20) :])
    return found["rank"] if found else ""


def _rank_of(stream: str) -> str:
    """``rank3``, ``default3`` and srun's ``3`` are all rank 3."""
    return stream.removeprefix("rank").removeprefix("default") if stream != "main" else ""
