"""A KB entry as typed data, built from its validated YAML mapping.

The YAML shape is documented in ``docs/entry-format.md`` and enforced by ``kb/schema.json``; this module turns a
mapping that already passed the schema into frozen dataclasses with compiled (RE2) patterns and parsed PEP 440
specifiers, so that scoring never touches raw YAML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .conditions import (
    KINDS,
    Condition,
    EntryError,
    ErrorCondition,
    FixedCondition,
    PackageCondition,
    check_specifier,
    kind_named,
    parse_group,
)
from .evidence import Outcome

if TYPE_CHECKING:
    from .incident import Incident

__all__ = [
    "EntryError",
    "EntryKind",
    "Example",
    "FixStep",
    "KBEntry",
    "Status",
    "Text",
    "applicable_step",
    "entry_from_mapping",
]


class EntryKind(str, Enum):
    CAUSE = "cause"
    """A specific root cause, with its own evidence."""
    FAMILY = "family"
    """What a message means in general; ranks below a cause that has its own evidence."""


class Status(str, Enum):
    ACTIVE = "active"
    RETIRED = "retired"
    """Kept so its id is never reused; never matches."""


@dataclass(frozen=True)
class Text:
    """One piece of prose in both languages (Markdown)."""

    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class FixStep(Text):
    """One fix step. ``when`` holds conditions over the same facts as ``match`` (frames, log, packages, configs,
    environment): a step that declares them is the one the answer shows first when they all hold, ahead of the
    general steps (those without ``when``), which keep their order."""

    when: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Example:
    """An input that must (or, as a counter-example, must not) rank the entry first."""

    input: Path
    configs: tuple[Path, ...]
    freeze: Path | None
    source: str
    step: int = 1
    """The fix step (1-based) whose conditions this example meets first: what its answer shows first."""


@dataclass(frozen=True)
class KBEntry:
    """One known failure: how to recognise it and what to say about it."""

    id: str
    slug: str
    """``<area>/<file stem>``: names the failure; also the docs page path."""
    path: Path
    title: Text
    kind: EntryKind
    family: str
    tags: tuple[str, ...]
    severity: str
    status: Status
    errors: tuple[ErrorCondition, ...]
    """The anchor: an entry is a candidate only when one of these matches."""
    conditions: tuple[Condition, ...] = ()
    """Every other condition of ``match``, kind by kind in :data:`~.conditions.KINDS` order: the evidence."""
    exclude: tuple[Condition, ...] = ()
    fixed: tuple[FixedCondition, ...] = ()
    """One condition per ``fixed_in`` package: an installed version that contains the fix counts against."""
    cause: Text = field(default=Text("", ""), repr=False)
    fix: tuple[FixStep, ...] = field(default=(), repr=False)
    does_not_help: tuple[Text, ...] = field(default=(), repr=False)
    notes: Text | None = field(default=None, repr=False)
    affected: dict[str, str] = field(default_factory=dict)
    fixed_in: dict[str, str] = field(default_factory=dict)
    bound_refs: dict[str, str] = field(default_factory=dict)
    """``package<clause>`` -> the PR, commit or release note that establishes that version bound."""
    messages: tuple[str, ...] = ()
    references: tuple[tuple[str, str], ...] = ()
    """(url, title) pairs."""
    examples: tuple[Example, ...] = field(default=(), repr=False)
    counter_examples: tuple[Example, ...] = field(default=(), repr=False)

    @property
    def area(self) -> str:
        return self.slug.split("/", 1)[0]

    @property
    def packages(self) -> tuple[PackageCondition, ...]:
        """The ``packages`` conditions (search and the docs index entries by package)."""
        return tuple(c for c in self.conditions if isinstance(c, PackageCondition))

    @property
    def checkable(self) -> bool:
        """``dtypefix check`` can decide it: a cause with a condition a config, the environment or the hardware
        settles (:attr:`~.conditions.Kind.decides`)."""
        return self.kind is EntryKind.CAUSE and any(_decides(c) for c in self.conditions)

    @property
    def is_family(self) -> bool:
        return self.kind is EntryKind.FAMILY

    @property
    def is_active(self) -> bool:
        return self.status is Status.ACTIVE

    @property
    def is_safety_net(self) -> bool:
        """A family whose every anchor pattern has weight 0 (DTF050, DTF051): it can only ever be a fallback."""
        return self.is_family and bool(self.errors) and all(pattern.weight == 0 for pattern in self.errors)


def _decides(condition: Condition) -> bool:
    kind = kind_named(condition.kind)
    return kind is not None and kind.decides


def _text(value: dict[str, str]) -> Text:
    return Text(value["en"].strip(), value["zh"].strip())


def _step(value: dict[str, Any], path: Path, field: str, *, checked: bool) -> FixStep:
    when = parse_group(value.get("when", {}), path, f"{field}.when", checked=checked)
    return FixStep(value["en"].strip(), value["zh"].strip(), tuple(c for group in when.values() for c in group))


def applicable_step(entry: KBEntry, incident: Incident) -> int:
    """The index of the fix step to show first for ``incident``: the first step that declares ``when`` it applies
    and whose conditions all hold; otherwise the first step that declares none (the general one)."""
    for index, step in enumerate(entry.fix):
        if step.when and all(c.evaluate(incident).outcome is Outcome.HELD for c in step.when):
            return index
    return next((index for index, step in enumerate(entry.fix) if not step.when), 0)


def _bounds(data: dict[str, Any], path: Path, *, checked: bool) -> tuple[dict[str, str], dict[str, str]]:
    """``affected`` specs and ``fixed_in`` versions, checked as PEP 440 (unless the cache did already)."""
    if checked:
        return dict(data.get("affected", {})), {name: str(v) for name, v in data.get("fixed_in", {}).items()}
    from packaging.version import InvalidVersion, Version

    affected = {
        name: check_specifier(spec, path, f"affected.{name}") for name, spec in data.get("affected", {}).items()
    }
    fixed_in: dict[str, str] = {}
    for name, version in data.get("fixed_in", {}).items():
        try:
            Version(str(version))
        except InvalidVersion:
            raise EntryError(path, f"fixed_in.{name}", f"not a PEP 440 version: {version!r}") from None
        fixed_in[name] = str(version)
    return affected, fixed_in


def _examples(items: list[dict[str, Any]], folder: Path, field: str, *, checked: bool) -> tuple[Example, ...]:
    """Example files, which must stay inside the KB (``../../family/x/y.log`` may point at a sibling's folder;
    ``/dev/zero`` or ``../../../etc/passwd`` may not). Only lint and the tests read them: an entry from the checked
    cache skips the (system-call heavy) resolution."""
    root = folder.parent.parent.resolve() if not checked else folder

    def inside(name: str, where: str) -> Path:
        path = folder / name
        if checked:
            return path
        if Path(name).is_absolute() or not path.resolve().is_relative_to(root):
            raise EntryError(folder.with_suffix(".yaml"), where, f"{name!r} is outside the KB folder")
        return path

    return tuple(
        Example(
            input=inside(item["input"], f"{field}[{i}].input"),
            configs=tuple(inside(c, f"{field}[{i}].configs") for c in item.get("configs", [])),
            freeze=inside(item["freeze"], f"{field}[{i}].freeze") if item.get("freeze") else None,
            source=item["source"],
            step=int(item.get("step", 1)),
        )
        for i, item in enumerate(items)
    )


def entry_from_mapping(data: dict[str, Any], path: Path, slug: str, *, checked: bool = False) -> KBEntry:
    """Build a :class:`KBEntry` from a schema-valid mapping; raises :class:`EntryError` on anything unusable.

    ``checked``: the mapping comes from the KB cache, written after this same code built it without an error, so
    the checks that cost a start-up most (RE2 compiling every pattern, resolving every example path, PEP 440
    parsing) are not repeated; patterns compile on first use.
    """
    match = parse_group(data["match"], path, "match", checked=checked)
    exclude = parse_group(data["match"].get("exclude", {}), path, "match.exclude", checked=checked)
    affected, fixed_in = _bounds(data, path, checked=checked)
    explanation = data["explanation"]
    folder = path.with_suffix("")
    return KBEntry(
        id=data["id"],
        slug=slug,
        path=path,
        title=_text(data["title"]),
        kind=EntryKind(data["kind"]),
        family=data.get("family", "other"),
        tags=tuple(data.get("tags", ())),
        severity=data["severity"],
        status=Status(data["status"]),
        errors=tuple(c for c in match["errors"] if isinstance(c, ErrorCondition)),
        conditions=tuple(c for kind in KINDS if not kind.anchor for c in match[kind.key]),
        exclude=tuple(c for group in exclude.values() for c in group),
        fixed=tuple(FixedCondition(name, version) for name, version in fixed_in.items()),
        cause=_text(explanation["cause"]),
        fix=tuple(
            _step(step, path, f"explanation.fix[{i}]", checked=checked) for i, step in enumerate(explanation["fix"])
        ),
        does_not_help=tuple(_text(item) for item in explanation.get("does_not_help", [])),
        notes=_text(explanation["notes"]) if explanation.get("notes") else None,
        affected=affected,
        fixed_in=fixed_in,
        bound_refs=dict(data.get("bound_refs", {})),
        messages=tuple(data.get("messages", ())),
        references=tuple((ref["url"], ref["title"]) for ref in data["references"]),
        examples=_examples(data["examples"], folder, "examples", checked=checked),
        counter_examples=_examples(data["counter_examples"], folder, "counter_examples", checked=checked),
    )
