"""The Incident: everything the input says, in one plain, typed object.

Parsing happens once, here. What an entry may ask of an incident (``precision.bf16``? the ``deepspeed`` version?)
is answered by :mod:`.facts`; each answer says whether the input *knows*.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .configs import Config, find_embedded
from .flags import LaunchFlags, parse_flags
from .hardware import Hardware, parse_hardware
from .packages import PackageVersion, parse_versions
from .source import from_text
from .traceback import ErrorLine, Stack, find_error_lines, parse_stacks

__all__ = ["Incident", "build_incident"]

# Exceptions that only report that something else failed; the error that matters is elsewhere.
_WRAPPERS = {"ChildFailedError", "CalledProcessError", "SystemExit", "KeyboardInterrupt", "ProcessRaisedException"}


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
    notes: tuple[str, ...] = ()
    """Problems met while reading the input (an unreadable config), shown to the user."""

    @property
    def primary(self) -> Stack | ErrorLine | None:
        """The error that matters: the last exception that is not a launcher's wrapper around another one."""
        for stack in reversed(self.stacks):
            if stack.short_type not in _WRAPPERS:
                return stack
        for line in reversed(self.error_lines):
            if line.exc_type.rsplit(".", 1)[-1] not in _WRAPPERS:
                return line
        return self.stacks[-1] if self.stacks else None

    @property
    def has_frames(self) -> bool:
        return any(stack.frames for stack in self.stacks)

    @property
    def has_complete_traceback(self) -> bool:
        """A whole traceback (header included) is present, so a frame that is absent really is absent."""
        return any(stack.frames and stack.complete for stack in self.stacks)

    @property
    def exceptions(self) -> list[tuple[str, str]]:
        """``(type, message)`` of every exception and error line, in the order error patterns are tried."""
        return [(s.exc_type, s.message) for s in self.stacks] + [(e.exc_type, e.message) for e in self.error_lines]

    def package(self, name: str) -> PackageVersion | None:
        return self.packages.get(name)


def _dedupe(stacks: Iterable[Stack]) -> tuple[Stack, ...]:
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    unique: list[Stack] = []
    for stack in stacks:
        key = (stack.exc_type, stack.message, tuple(f.function for f in stack.frames))
        if key not in seen:
            seen.add(key)
            unique.append(stack)
    return tuple(unique)


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
    notes: Iterable[str] = (),
) -> Incident:
    """Parse ``text`` (and any attached freeze texts and configs) into an :class:`Incident`.

    Explicitly given configs and freeze files come first, so they win over what is found pasted in the log.
    """
    source = from_text(text)
    stacks: list[Stack] = []
    lines: list[ErrorLine] = []
    for stream in source.streams:
        stacks.extend(parse_stacks(stream.text, stream.label))
        lines.extend(find_error_lines(stream.text, stream.label))
    packages: dict[str, PackageVersion] = {}
    for extra in freeze:
        for name, version in parse_versions(extra).items():
            packages.setdefault(name, version)
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
        text=source.text,
        streams=tuple(s.label for s in source.streams),
        stacks=_dedupe(stacks),
        error_lines=tuple(unique_lines),
        packages=packages,
        configs=all_configs,
        launch=parse_flags(scan),
        hardware=parse_hardware(scan),
        notes=tuple(notes),
    )
