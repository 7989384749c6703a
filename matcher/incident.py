"""The Incident: everything the input says, in one typed object, and the fact lookups entries ask of it.

Parsing happens once, here; the scorer only asks questions (``precision.bf16``? ``deepspeed`` version?). Each
answer says whether the input *knows* — an unknown is not a no, and the output treats them differently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .configs import Config, find_embedded, lookup
from .flags import LaunchFlags, parse_flags
from .hardware import Hardware, parse_hardware
from .packages import PackageVersion, parse_versions
from .source import from_text
from .traceback import ErrorLine, Stack, find_error_lines, parse_stacks

__all__ = ["Fact", "Incident", "build_incident"]

# Exceptions that only report that something else failed; the error that matters is elsewhere.
_WRAPPERS = {"ChildFailedError", "CalledProcessError", "SystemExit", "KeyboardInterrupt", "ProcessRaisedException"}
_MODEL_HINTS = {
    "load_in_8bit": re.compile(r"load_in_8bit\s*[=:]\s*True|load_in_8bit:\s*true"),
    "load_in_4bit": re.compile(r"load_in_4bit\s*[=:]\s*True|load_in_4bit:\s*true"),
    "device_map_auto": re.compile(r"device_map\s*=\s*[\"']auto[\"']|device_map:\s*auto"),
}


@dataclass(frozen=True)
class Fact:
    """The answer to one lookup."""

    known: bool
    """False when the input says nothing about it (no such config, no version)."""
    value: Any = None
    source: str = ""
    """Where the value was read, for the evidence list (``ds_config.json``, ``pip freeze``, ``log``)."""
    kind_present: bool = False
    """For config paths: a config of that kind was given, but the key was absent."""


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

    def config_fact(self, path: str) -> Fact:
        """Look up ``<kind>.<dotted.key>``, ``flags.<name>``, ``precision.<p>`` or ``model.<hint>``."""
        prefix, _, rest = path.partition(".")
        if prefix == "flags":
            if rest in self.launch.flags:
                return Fact(True, self.launch.flags[rest], "launch command")
            return Fact(False, kind_present=bool(self.launch.flags))
        if prefix == "precision":
            return self._precision(rest)
        if prefix == "model":
            return self._model(rest)
        present = False
        for config in self.configs:
            if config.kind != prefix:
                continue
            present = True
            found, value = lookup(config.data, rest)
            if found:
                if prefix == "deepspeed" and value == "auto" and rest in ("fp16.enabled", "bf16.enabled"):
                    return self._resolve_auto(rest.split(".")[0], config.origin)
                return Fact(True, value, config.origin)
        return Fact(False, kind_present=present)

    def _resolve_auto(self, precision: str, origin: str) -> Fact:
        # The HF Trainer fills DeepSpeed "auto" from its own --bf16/--fp16; without them "auto" is unknown.
        for source in (
            f"trainer.{precision}",
            f"flags.{precision}",
            f"axolotl.{precision}",
            f"llamafactory.{precision}",
        ):
            fact = self.config_fact(source)
            if fact.known and isinstance(fact.value, bool):
                return Fact(True, fact.value, f'{origin} ("auto" from {fact.source})')
        return Fact(False, kind_present=True)

    def _precision(self, name: str) -> Fact:
        says_true: list[str] = []
        says_other: list[str] = []
        for source in ("deepspeed", "trainer", "flags", "axolotl", "llamafactory"):
            fact = self.config_fact(f"{source}.{name}.enabled" if source == "deepspeed" else f"{source}.{name}")
            if fact.known and fact.value is True:
                says_true.append(fact.source)
            elif fact.known and fact.value is False:
                says_other.append(fact.source)
        for source in (
            "accelerate.mixed_precision",
            "flags.mixed_precision",
            "accelerate.deepspeed_config.mixed_precision",
        ):
            fact = self.config_fact(source)
            if fact.known and isinstance(fact.value, str) and fact.value.lower() != "auto":
                (says_true if fact.value.lower() == name else says_other).append(fact.source)
        if says_true:
            return Fact(True, True, says_true[0])
        if says_other:
            return Fact(True, False, says_other[0])
        return Fact(False)

    def _model(self, name: str) -> Fact:
        for source in (f"axolotl.{name}", f"llamafactory.{name}", f"flags.{name}", f"trainer.{name}"):
            fact = self.config_fact(source)
            if fact.known and isinstance(fact.value, bool):
                return Fact(True, fact.value, fact.source)
        pattern = _MODEL_HINTS.get(name)
        if pattern is not None and pattern.search(self.text):
            return Fact(True, True, "log")
        return Fact(False)

    def env_fact(self, key: str) -> Fact:
        """Look up a hardware / environment key (``gpu.min_compute_capability``, ``os``...)."""
        hw = self.hardware
        caps = () if hw.unmapped else hw.capabilities  # a card the table does not know could be the extreme
        values: dict[str, Any] = {
            "gpu.names": list(hw.gpu_names) or None,
            "gpu.count": len(hw.gpu_names) or None,
            "gpu.min_compute_capability": min(caps) if caps else None,
            "gpu.max_compute_capability": max(caps) if caps else None,
            "gpu.mixed_models": (len(set(hw.gpu_names)) > 1) if len(hw.gpu_names) > 1 else None,
            "cuda_visible_devices": hw.cuda_visible_devices or self.launch.env.get("CUDA_VISIBLE_DEVICES"),
            "cuda_device_order": hw.cuda_device_order or self.launch.env.get("CUDA_DEVICE_ORDER"),
            "os": hw.os,
            "device.mps": True if hw.mps else None,
        }
        value = values.get(key)
        return Fact(value is not None, value, "log" if value is not None else "")

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
