"""``packages``: an installed package's version inside a PEP 440 range."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..evidence import Evidence, Outcome, Reason
from ..facts import Input
from ..observation import Origin, Place, ValueSeen
from .base import EntryError, Kind, item_schema, parse_required, parse_weight

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from ..incident import Incident

__all__ = ["KIND", "PackageCondition", "check_specifier", "installed"]


@functools.lru_cache(maxsize=1024)
def _specifier(spec: str) -> SpecifierSet:
    """Parsed PEP 440 specifier sets, memoised: many entries share the same few ranges."""
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(spec)


def installed(incident: Incident, name: str) -> tuple[Version | None, ValueSeen, Place | None]:
    """``(Version or None, version as printed, where it was read)`` for an installed package."""
    from packaging.version import InvalidVersion, Version

    found = incident.packages.get(name)
    if found is None:
        return None, ValueSeen(""), None
    where = Place(Origin(found.origin))
    try:
        return Version(Version(found.version).public), ValueSeen(found.version), where
    except InvalidVersion:
        return None, ValueSeen(found.version), where


def check_specifier(spec: Any, where: Path, field: str) -> str:
    from packaging.specifiers import InvalidSpecifier

    if not isinstance(spec, str):
        raise EntryError(where, field, f"must be a PEP 440 specifier string, not {spec!r}")
    try:
        _specifier(spec)
    except InvalidSpecifier:
        raise EntryError(where, field, f"not a PEP 440 specifier: {spec!r}") from None
    return spec


@dataclass(frozen=True)
class PackageCondition:
    """An installed package's version inside a PEP 440 range."""

    kind: ClassVar[str] = "package"
    decider: ClassVar[str] = Input.FREEZE
    name: str
    spec: str
    weight: float = 2.0
    required: bool = False

    @property
    def label(self) -> str:
        return f"{self.name}{self.spec}"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> PackageCondition:
        spec = item.get("spec")
        if not isinstance(spec, str):  # parsed as PEP 440 by _verify, left out for an entry from the checked cache
            raise EntryError(where, f"{field}.spec", f"must be a PEP 440 specifier string, not {spec!r}")
        return cls(
            item["name"].lower().replace("_", "-"),
            spec,
            parse_weight(item, where, field),
            parse_required(item, where, field),
        )

    def evaluate(self, incident: Incident) -> Evidence:
        version, printed, origin = installed(incident, self.name)
        if version is None:
            return Evidence(self, Outcome.UNKNOWN, Reason.NOT_GIVEN)
        held = _specifier(self.spec).contains(version, prereleases=True)
        return Evidence(self, Outcome.HELD if held else Outcome.FAILED, Reason.FOUND, printed, origin)


def _verify(condition: PackageCondition, where: Path, field: str) -> None:
    check_specifier(condition.spec, where, f"{field}.spec")


KIND = Kind(
    key="packages",
    name="package",
    condition=PackageCondition,
    parse=PackageCondition.parse,
    schema=item_schema(
        {"name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"}, "spec": {"type": "string"}},
        ("name", "spec"),
    ),
    fields=("name", "spec"),
    doc="An installed package `name` whose version is inside the PEP 440 `spec`; read from `--freeze`, "
    "`--this-env` or a listing in the input.",
    checked=True,
    asks=True,
    verify=_verify,
)
