"""Flags from launch command lines echoed in a log or pasted into a report.

``torchrun train.py --bf16 True --deepspeed ds_z3.json`` says as much about precision as a config file does,
and it is often the only place the config file's name appears.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from .regex import lazy_regex

__all__ = ["LaunchFlags", "parse_flags"]

_LAUNCHER = lazy_regex(
    r"(?:^|[\s/$>])(?:python[\d.]*|torchrun|deepspeed|accelerate\s+launch|accelerate-launch|llamafactory-cli|"
    r"axolotl(?:\.cli\.train)?|srun|mpirun|tune\s+run|trl)\b.*\s--?[A-Za-z]"
)
_ENV_ASSIGN = lazy_regex(r"^(?P<name>[A-Z_][A-Z0-9_]*)=(?P<value>\S*)$")
_MAX_LINE = 8192


@dataclass(frozen=True)
class LaunchFlags:
    """Flags and environment assignments found on launch lines."""

    flags: dict[str, Any]
    """``--name value`` pairs, names without dashes, ``-`` replaced by ``_``; ``True``/``False`` as booleans."""
    env: dict[str, str]
    """``NAME=value`` assignments before the command (``CUDA_VISIBLE_DEVICES=0,1 torchrun ...``)."""
    files: tuple[str, ...]
    """Config-looking arguments (``*.json``, ``*.yaml``, ``*.yml``) in the order given."""


def _value(raw: str) -> Any:
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    return raw


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=False, posix=True)
    except ValueError:  # an unbalanced quote in a pasted line
        return line.split()


def _join_continuations(text: str) -> list[str]:
    """Shell lines ending in a backslash continue on the next line (long torchrun commands)."""
    joined: list[str] = []
    pending = ""
    for line in text.split("\n"):
        stripped = line.rstrip()
        if stripped.endswith("\\") and len(pending) < _MAX_LINE:
            pending += stripped[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    if pending:
        joined.append(pending)
    return joined


def parse_flags(text: str) -> LaunchFlags:
    """Every flag on every launch line; a later line overrides an earlier one for the same flag."""
    flags: dict[str, Any] = {}
    env: dict[str, str] = {}
    files: list[str] = []
    for line in _join_continuations(text):
        if len(line) > _MAX_LINE or "--" not in line or not _LAUNCHER.search(line):
            continue
        tokens = _split(line.strip().lstrip("$>+ "))
        index = 0
        while index < len(tokens):
            token = tokens[index]
            assign = _ENV_ASSIGN.match(token)
            if assign and not flags:
                env[assign["name"]] = assign["value"]
            if token.startswith("--") and len(token) > 2:
                name, eq, value = token[2:].partition("=")
                name = name.replace("-", "_")
                if eq:
                    flags[name] = _value(value)
                elif index + 1 < len(tokens) and not tokens[index + 1].startswith("-"):
                    flags[name] = _value(tokens[index + 1])
                    index += 1
                else:
                    flags[name] = True
                if isinstance(flags[name], str) and flags[name].endswith((".json", ".yaml", ".yml")):
                    files.append(flags[name])
            elif token.endswith((".yaml", ".yml", ".json")) and not token.startswith("-"):
                files.append(token)
            index += 1
    return LaunchFlags(flags, env, tuple(dict.fromkeys(files)))
