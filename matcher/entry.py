"""A KB entry as typed data, built from its validated YAML mapping.

The YAML shape is documented in ``docs/entry-format.md`` and enforced by ``kb/schema.json``; this module turns a
mapping that already passed the schema into frozen dataclasses with compiled (RE2) patterns and parsed PEP 440
specifiers, so that scoring never touches raw YAML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .regex import Pattern, PatternError, compile_pattern

__all__ = [
    "Condition",
    "ConfigCondition",
    "EntryError",
    "EnvCondition",
    "ErrorPattern",
    "Example",
    "FramePattern",
    "KBEntry",
    "LogPattern",
    "PackageCondition",
    "Text",
    "check_specifiers",
    "entry_from_mapping",
]


class EntryError(ValueError):
    """An entry that cannot be used; ``str()`` is ``file: field: problem``."""


@dataclass(frozen=True)
class Text:
    """One piece of prose in both languages (Markdown)."""

    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class ErrorPattern:
    """The anchor: an exception type and message regex."""

    message: Pattern
    source: str
    """The regex as written, for evidence and lint messages."""
    type: Pattern | None = None
    weight: float = 2.0
    required: bool = False


@dataclass(frozen=True)
class FramePattern:
    file: Pattern | None
    function: Pattern | None
    source: str
    weight: float = 2.0
    required: bool = False


@dataclass(frozen=True)
class LogPattern:
    pattern: Pattern
    source: str
    weight: float = 1.0
    required: bool = False


@dataclass(frozen=True)
class PackageCondition:
    name: str
    spec: str
    """A PEP 440 specifier set; parsed when evaluated (``packaging`` is imported only then)."""
    weight: float = 2.0
    required: bool = False


@dataclass(frozen=True)
class ConfigCondition:
    path: str
    op: str = "=="
    value: Any = None
    default: Any = None
    has_default: bool = False
    weight: float = 2.0
    required: bool = False


@dataclass(frozen=True)
class EnvCondition:
    key: str
    op: str = "=="
    value: Any = None
    weight: float = 2.0
    required: bool = False


Condition = ErrorPattern | FramePattern | LogPattern | PackageCondition | ConfigCondition | EnvCondition


@dataclass(frozen=True)
class Example:
    """An input that must (or, as a counter-example, must not) rank the entry first."""

    input: Path
    configs: tuple[Path, ...]
    freeze: Path | None
    source: str


@dataclass(frozen=True)
class KBEntry:
    """One known failure: how to recognise it and what to say about it."""

    id: str
    slug: str
    """``<area>/<file stem>``: names the failure; also the docs page path."""
    path: Path
    title: Text
    kind: str
    """``cause`` or ``family``."""
    family: str
    tags: tuple[str, ...]
    severity: str
    status: str
    errors: tuple[ErrorPattern, ...]
    frames: tuple[FramePattern, ...] = ()
    log: tuple[LogPattern, ...] = ()
    packages: tuple[PackageCondition, ...] = ()
    configs: tuple[ConfigCondition, ...] = ()
    env: tuple[EnvCondition, ...] = ()
    exclude: tuple[Condition, ...] = ()
    cause: Text = field(default=Text("", ""), repr=False)
    fix: tuple[Text, ...] = field(default=(), repr=False)
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
    def evidence_conditions(self) -> tuple[Condition, ...]:
        """Every condition other than the error anchor."""
        return (*self.frames, *self.log, *self.packages, *self.configs, *self.env)


def _pattern(value: str, where: str) -> Pattern:
    try:
        return compile_pattern(value)
    except PatternError as exc:
        raise EntryError(f"{where}: {exc}") from None


def _text(value: dict[str, str]) -> Text:
    return Text(value["en"].strip(), value["zh"].strip())


def _conditions(group: dict[str, Any], where: str) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    out["errors"] = tuple(
        ErrorPattern(
            message=_pattern(item["message"], f"{where}.errors[{i}].message"),
            source=item["message"],
            type=_pattern(item["type"], f"{where}.errors[{i}].type") if item.get("type") else None,
            weight=float(item.get("weight", 2.0)),
            required=bool(item.get("required", False)),
        )
        for i, item in enumerate(group.get("errors", []))
    )
    out["frames"] = tuple(
        FramePattern(
            file=_pattern(item["file"], f"{where}.frames[{i}].file") if item.get("file") else None,
            function=_pattern(item["function"], f"{where}.frames[{i}].function") if item.get("function") else None,
            source=" in ".join(x for x in (item.get("file"), item.get("function")) if x),
            weight=float(item.get("weight", 2.0)),
            required=bool(item.get("required", False)),
        )
        for i, item in enumerate(group.get("frames", []))
    )
    out["log"] = tuple(
        LogPattern(
            _pattern(item["pattern"], f"{where}.log[{i}].pattern"),
            item["pattern"],
            weight=float(item.get("weight", 2.0)),
            required=bool(item.get("required", False)),
        )
        for i, item in enumerate(group.get("log", []))
    )
    out["packages"] = tuple(
        PackageCondition(
            item["name"].lower().replace("_", "-"),
            item["spec"],
            weight=float(item.get("weight", 2.0)),
            required=bool(item.get("required", False)),
        )
        for item in group.get("packages", [])
    )
    out["configs"] = tuple(
        ConfigCondition(
            path=item["path"],
            op=item.get("op", "=="),
            value=item.get("value"),
            default=item.get("default"),
            has_default="default" in item,
            weight=float(item.get("weight", 2.0)),
            required=bool(item.get("required", False)),
        )
        for item in group.get("configs", [])
    )
    out["env"] = tuple(
        EnvCondition(
            item["key"],
            item.get("op", "=="),
            item.get("value"),
            weight=float(item.get("weight", 2.0)),
            required=bool(item.get("required", False)),
        )
        for item in group.get("env", [])
    )
    for i, item in enumerate(group.get("configs", [])):
        if item.get("op") == "matches":
            _pattern(str(item.get("value", "")), f"{where}.configs[{i}].value")
    return out


def check_specifiers(entry: KBEntry) -> None:
    """Raise :class:`EntryError` when a package condition is not a PEP 440 specifier set (lint, cache build)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    for i, condition in enumerate(entry.packages):
        try:
            SpecifierSet(condition.spec)
        except InvalidSpecifier:
            raise EntryError(
                f"{entry.path}: match.packages[{i}].spec: not a PEP 440 specifier: {condition.spec!r}"
            ) from None
    for name, spec in entry.affected.items():
        try:
            SpecifierSet(spec)
        except InvalidSpecifier:
            raise EntryError(f"{entry.path}: affected.{name}: not a PEP 440 specifier: {spec!r}") from None


def _examples(items: list[dict[str, Any]], folder: Path) -> tuple[Example, ...]:
    return tuple(
        Example(
            input=folder / item["input"],
            configs=tuple(folder / c for c in item.get("configs", [])),
            freeze=folder / item["freeze"] if item.get("freeze") else None,
            source=item["source"],
        )
        for item in items
    )


def entry_from_mapping(data: dict[str, Any], path: Path, slug: str) -> KBEntry:
    """Build a :class:`KBEntry` from a schema-valid mapping; raises :class:`EntryError` on bad patterns."""
    where = f"{path}: match"
    match = _conditions(data["match"], where)
    exclude = _conditions(data["match"].get("exclude", {}), f"{where}.exclude")
    explanation = data["explanation"]
    folder = path.with_suffix("")
    return KBEntry(
        id=data["id"],
        slug=slug,
        path=path,
        title=_text(data["title"]),
        kind=data["kind"],
        family=data.get("family", "other"),
        tags=tuple(data.get("tags", ())),
        severity=data["severity"],
        status=data["status"],
        errors=match["errors"],
        frames=match["frames"],
        log=match["log"],
        packages=match["packages"],
        configs=match["configs"],
        env=match["env"],
        exclude=tuple(c for group in exclude.values() for c in group),
        cause=_text(explanation["cause"]),
        fix=tuple(_text(step) for step in explanation["fix"]),
        does_not_help=tuple(_text(item) for item in explanation.get("does_not_help", [])),
        notes=_text(explanation["notes"]) if explanation.get("notes") else None,
        affected=dict(data.get("affected", {})),
        fixed_in={k: str(v) for k, v in data.get("fixed_in", {}).items()},
        bound_refs=dict(data.get("bound_refs", {})),
        messages=tuple(data.get("messages", ())),
        references=tuple((ref["url"], ref["title"]) for ref in data["references"]),
        examples=_examples(data["examples"], folder),
        counter_examples=_examples(data["counter_examples"], folder),
    )
