"""Conditions: where an entry's YAML becomes typed, checked objects, and where each becomes evidence.

One module per kind (``errors``, ``frames``, ``log``, ``packages``, ``configs``, ``env``, ``gpu_memory``), each
with its class and its :class:`~.base.Kind` record; :data:`KINDS` lists them in the order entries write them. Each
kind parses its own mapping, refusing at load time what could never work (a regex RE2 cannot compile, a namespace
or key the registry in :mod:`..facts` does not know, a comparison that can never hold); each checks itself against
an :class:`~dtypefix.matcher.incident.Incident` and returns :class:`~dtypefix.matcher.evidence.Evidence` — data,
never words. Scoring (:mod:`..score`) only combines the evidence.

Adding a kind is one module here, its line in :data:`KINDS`, and its words in ``cli/evidence_words.py`` and
``cli/i18n.py`` (a test requires both languages for every kind); the ``match`` block of ``kb/schema.json``, the
canonical key order and the docs table are generated from :data:`KINDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import config, env, error, frame, gpu_memory, log, package
from .base import Condition, EntryError, Kind, check_written
from .config import ConfigCondition
from .env import EnvCondition
from .error import ErrorCondition, ErrorHit
from .fixed import FixedCondition
from .frame import FrameCondition
from .gpu_memory import GpuMemoryCondition
from .log import LogCondition
from .package import PackageCondition, check_specifier
from .values import OPS, compare, show

__all__ = [
    "KINDS",
    "OPS",
    "Condition",
    "ConfigCondition",
    "EntryError",
    "EnvCondition",
    "ErrorCondition",
    "ErrorHit",
    "FixedCondition",
    "FrameCondition",
    "GpuMemoryCondition",
    "Kind",
    "LogCondition",
    "PackageCondition",
    "check_specifier",
    "compare",
    "kind_named",
    "match_schema",
    "parse_group",
    "show",
]

KINDS: tuple[Kind, ...] = (error.KIND, frame.KIND, log.KIND, package.KIND, config.KIND, env.KIND, gpu_memory.KIND)
"""Every kind an entry's ``match`` (and ``match.exclude``) may hold, in canonical order."""


def kind_named(name: str) -> Kind | None:
    """The kind whose evidence is called ``name`` (``frame``); None for ``fixed``, which no entry writes."""
    return next((kind for kind in KINDS if kind.name == name), None)


def parse_group(
    group: Mapping[str, Any], where: Path, field: str, *, checked: bool = False
) -> dict[str, tuple[Condition, ...]]:
    """Every condition of a ``match`` (or ``match.exclude``) mapping, by YAML key; raises :class:`EntryError`.

    ``checked``: the mapping comes from the validated KB cache, so its patterns compiled and its version ranges
    parsed once already; patterns are left to compile on first use (see :class:`..regex.LazyPattern`), and a
    start-up that reads no versions never imports ``packaging``.
    """
    out: dict[str, tuple[Condition, ...]] = {}
    for kind in KINDS:
        items = group.get(kind.key, [])
        if not isinstance(items, list):
            raise EntryError(where, f"{field}.{kind.key}", "must be a list")
        parsed = []
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise EntryError(where, f"{field}.{kind.key}[{index}]", "must be a mapping")
            condition = kind.parse(item, where, f"{field}.{kind.key}[{index}]")
            if not checked:
                check_written(kind, condition, where, f"{field}.{kind.key}[{index}]")
            parsed.append(condition)
        out[kind.key] = tuple(parsed)
    return out


def match_schema() -> dict[str, Any]:
    """The ``match`` block of ``kb/schema.json``, generated from :data:`KINDS` (``dtypefix docs --check``)."""
    lists = {kind.key: {"type": "array", "items": dict(kind.schema)} for kind in KINDS}
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [kind.key for kind in KINDS if kind.anchor],
        "properties": {
            **lists,
            "exclude": {"type": "object", "additionalProperties": False, "properties": lists},
        },
    }
