"""Conditions: where an entry's YAML becomes typed, checked objects, and where each becomes evidence.

Each kind of condition parses its own mapping (``parse``), refusing at load time what could never work: a regex RE2
cannot compile, a config namespace or environment key the registry (:mod:`.facts`) does not know, an operator that
does not fit its value (``<`` against ``"sm89"``), a value YAML typed as a date, a set or bytes. Each then checks
itself against an :class:`~dtypefix.matcher.incident.Incident` (``evaluate``) and returns :class:`Evidence` — data,
never words. Scoring (:mod:`.score`) only combines the evidence.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .evidence import Evidence, Outcome, Reason
from .facts import ENV_KEYS, Fact, Input, ValueType, config_fact, env_fact, namespace_of
from .regex import LazyPattern, Pattern, PatternError, compile_pattern

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

    from .incident import Incident

__all__ = [
    "OPS",
    "Condition",
    "ConfigCondition",
    "EntryError",
    "EnvCondition",
    "ErrorCondition",
    "ErrorHit",
    "FixedCondition",
    "FrameCondition",
    "LogCondition",
    "PackageCondition",
    "check_specifier",
    "compare",
    "installed",
    "parse_group",
    "show",
]


class EntryError(ValueError):
    """An entry that cannot be used: which file, which field, what is wrong (and the line, once lint knows it)."""

    def __init__(self, path: Path | str, field: str, problem: str, line: int = 0) -> None:
        self.path = Path(path)
        self.field = field
        self.problem = problem
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.field}: {self.problem}" if self.field else f"{where}: {self.problem}"

    @property
    def keys(self) -> list[str | int]:
        """The field as a YAML path (``match.errors[0].message`` -> ``["match", "errors", 0, "message"]``)."""
        return [int(part) if part.isdigit() else part for part in re.split(r"[.\[\]]+", self.field) if part]


_ORDERED: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
OPS = ("==", "!=", *_ORDERED, "in", "not-in", "exists", "matches")
_SCALARS = (str, int, float, bool)


def _pattern(value: Any, where: Path, field: str) -> LazyPattern:
    """The written pattern, compiled later: by :func:`parse_group` (which checks it), or at its first search."""
    if not isinstance(value, str) or not value:
        raise EntryError(where, field, "must be a non-empty regex string")
    return LazyPattern(value, field)


def _check_written(condition: Any, where: Path, field: str) -> None:
    """Compile every pattern ``condition`` holds and parse its version range: what parsing leaves to first use
    (see :func:`parse_group`). A refusal becomes an :class:`EntryError` at its field."""
    from dataclasses import fields

    if isinstance(condition, PackageCondition):
        check_specifier(condition.spec, where, f"{field}.spec")
    for item in fields(condition):
        value = getattr(condition, item.name)
        if isinstance(value, LazyPattern):
            try:
                value.compile()
            except PatternError as exc:
                raise EntryError(where, value.field, str(exc)) from None


def _weight(item: Mapping[str, Any], where: Path, field: str, default: float) -> float:
    value = item.get("weight", default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 10:
        raise EntryError(where, f"{field}.weight", f"must be a number from 0 to 10, not {value!r}")
    return float(value)


def _required(item: Mapping[str, Any], where: Path, field: str) -> bool:
    value = item.get("required", False)
    if not isinstance(value, bool):
        raise EntryError(where, f"{field}.required", f"must be true or false, not {value!r}")
    return value


def _plain(value: Any, where: Path, field: str) -> Any:
    """A value as YAML and JSON both write it: a scalar or a list of scalars (not a date, set, bytes or mapping)."""
    if value is None or isinstance(value, _SCALARS):
        return value
    if isinstance(value, list) and all(isinstance(v, _SCALARS) for v in value):
        return list(value)
    raise EntryError(where, field, f"must be a string, number, boolean or a list of them, not {type(value).__name__}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_op(op: Any, value: Any, has_value: bool, where: Path, field: str) -> None:
    """Refuse an operator that cannot be evaluated against its value."""
    if op not in OPS:
        raise EntryError(where, f"{field}.op", f"unknown operator {op!r} (one of {', '.join(OPS)})")
    if op in _ORDERED and not _is_number(value):
        raise EntryError(where, f"{field}.value", f"{op} compares numbers; {value!r} is not a number")
    if op in ("in", "not-in") and not isinstance(value, list):
        raise EntryError(where, f"{field}.value", f"{op} needs a list of values")
    if op == "matches":
        pattern = _pattern(value, where, f"{field}.value")
        try:
            pattern.compile()
        except PatternError as exc:
            raise EntryError(where, pattern.field, str(exc)) from None
    if op == "exists" and has_value:
        raise EntryError(where, f"{field}.value", "exists takes no value")
    if op in ("==", "!=") and (not has_value or isinstance(value, list)):
        raise EntryError(where, f"{field}.value", f"{op} needs one value (use in / not-in for a list)")


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        norm = {"true": True, "false": False}
        a = norm.get(str(actual).lower(), actual) if isinstance(actual, str) else actual
        e = norm.get(str(expected).lower(), expected) if isinstance(expected, str) else expected
        return a is e if isinstance(a, bool) and isinstance(e, bool) else False
    if isinstance(actual, int | float) or isinstance(expected, int | float):
        try:
            return float(actual) == float(expected)
        except (TypeError, ValueError):
            return False
    return str(actual).lower() == str(expected).lower()


def compare(op: str, actual: Any, expected: Any) -> bool:
    """``actual <op> expected``, lenient across the types configs really hold (``"true"``, ``"3"``, lists)."""
    if op == "exists":
        return True
    if op == "==":
        return any(_same(a, expected) for a in actual) if isinstance(actual, list) else _same(actual, expected)
    if op == "!=":
        return not compare("==", actual, expected)
    if op in ("in", "not-in"):
        inside = any(_same(actual, option) for option in expected)
        return inside if op == "in" else not inside
    if op == "matches":
        pattern = compile_pattern(str(expected))
        items = actual if isinstance(actual, list) else [actual]
        return any(pattern.search(str(item)) for item in items)
    try:
        return _ORDERED[op](float(actual), float(expected))
    except (TypeError, ValueError):
        return False  # a config value that is not a number ("auto", "sm89") cannot be ordered: it does not hold


def show(value: Any) -> str:
    """A value as the user wrote it in JSON / YAML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return str(value)


@dataclass(frozen=True)
class ErrorHit:
    """Where an error pattern matched."""

    groups: dict[str, str]
    """Named groups, to fill ``{{name}}`` in the entry's text."""
    seen: str
    """``Type: first line of the message``, or the matched text when found in the log without a type."""
    source: str
    """``traceback`` (an exception or ``Type: message`` line) or ``log`` (the message printed without a type)."""


@dataclass(frozen=True)
class ErrorCondition:
    """The anchor: an exception type and message regex. An entry is a candidate only when one of these matches."""

    kind: ClassVar[str] = "error"
    decider: ClassVar[str] = Input.TRACEBACK
    message: Pattern = field(compare=False)
    pattern: str
    """The regex as written (for JSON and lint; never shown to readers)."""
    type: Pattern | None = field(default=None, compare=False)
    type_pattern: str = ""
    weight: float = 2.0
    required: bool = False
    scan: Pattern | None = field(default=None, compare=False)
    """The pattern for a scan over the joined messages (``Incident.message_index``): with ``^`` and ``$`` at every
    line, so its first match lies in or before the first message that matches on its own (a match across a
    separator only makes the per-message search start earlier); None for ``\\A`` / ``\\z``, which cannot be."""

    @property
    def label(self) -> str:
        """The condition in code form, for machines (JSON); readers get :mod:`dtypefix.cli.evidence_words`."""
        return f"{self.type_pattern}: /{self.pattern}/" if self.type_pattern else f"/{self.pattern}/"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> ErrorCondition:
        typed = item.get("type")
        message = _pattern(item.get("message"), where, f"{field}.message")
        written = item["message"]
        scan: Pattern | None = message
        if any(mark in written for mark in ("\\A", "\\z", "\\Z")):
            scan = None
        elif "^" in written or "$" in written:
            scan = _pattern(f"(?m){written}", where, f"{field}.message")
        return cls(
            message=message,
            scan=scan,
            pattern=written,
            type=_pattern(typed, where, f"{field}.type") if typed else None,
            type_pattern=typed or "",
            weight=_weight(item, where, field, 2.0),
            required=_required(item, where, field),
        )

    def find(self, incident: Incident) -> ErrorHit | None:
        """The first exception (typed), or failing that the first place in the text (untyped only), that matches.

        A pattern without ``type`` may be printed without an exception type ("Inference failed: <message>", a
        warning turned fatal, prose around a pasted message), so it also searches the whole text — but only when the
        input holds no exception of its own, or the match starts on an exception's own line (a multi-line message
        read whole): a harmless warning must not claim a log that failed with a KeyError.
        """
        exceptions = incident.exceptions
        skip = 0
        if self.scan is not None:
            # One scan skips the exceptions before the first place the pattern matches at all (a flood of 100k
            # distinct tracebacks then costs one search, not one per exception).
            joined, starts = incident.message_index
            anywhere = self.scan.search(joined)
            skip = bisect.bisect_right(starts, anywhere.start()) - 1 if anywhere else len(exceptions)
        for exc_type, message in exceptions[skip:]:
            short = exc_type.rsplit(".", 1)[-1]
            # An empty type is unknown (a message pasted without it): the message alone has to match.
            if self.type is not None and exc_type and not (self.type.search(short) or self.type.search(exc_type)):
                continue
            found = self.message.search(message)
            if found:
                first = message.splitlines()[0][:200] if message.strip() else ""
                return ErrorHit(_groups(found), f"{short}: {first}" if short else first, "traceback")
        if self.type is None:
            found = self.message.search(incident.text)
            if found and (not incident.has_own_exception or _continues_an_exception(found.group(0), incident)):
                return ErrorHit(_groups(found), found.group(0)[:200], "log")
        return None

    def evaluate(self, incident: Incident) -> Evidence:
        hit = self.find(incident)
        if hit is None:
            return Evidence(self, Outcome.FAILED, Reason.ABSENT)
        return Evidence(self, Outcome.HELD, Reason.MATCHED, hit.seen, hit.source)


def _continues_an_exception(matched: str, incident: Incident) -> bool:
    first = matched.lstrip().splitlines()[0].strip() if matched.strip() else ""
    return bool(first) and any(
        first in message or message.splitlines()[0].strip() in first
        for _, message in incident.exceptions
        if message.strip()
    )


def _groups(found: Any) -> dict[str, str]:
    return {k: v for k, v in found.groupdict().items() if v is not None}


CODE_SEPARATOR = " :: "
"""Between a held frame's place and the source line a ``code`` pattern matched, in ``Evidence.observed``."""


@dataclass(frozen=True)
class FrameCondition:
    """A traceback frame, by file path, function name and / or the source line printed under it.

    ``code`` tells apart two causes that end in the same library frame with the same message: which call the
    caller's frame made (``dispatch_model(...)`` inside ``from_pretrained``) survives a paste whose innermost
    frames were cut.
    """

    kind: ClassVar[str] = "frame"
    decider: ClassVar[str] = Input.TRACEBACK
    file: Pattern | None = field(compare=False)
    function: Pattern | None = field(compare=False)
    file_pattern: str = ""
    function_pattern: str = ""
    code: Pattern | None = field(default=None, compare=False)
    code_pattern: str = ""
    weight: float = 2.0
    required: bool = False

    @property
    def label(self) -> str:
        where = " in ".join(p for p in (self.file_pattern, self.function_pattern) if p)
        return f"{where}: {self.code_pattern}" if self.code_pattern else where

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> FrameCondition:
        if not item.get("file") and not item.get("function"):
            raise EntryError(where, field, "a frame needs a file or a function pattern")
        return cls(
            file=_pattern(item["file"], where, f"{field}.file") if item.get("file") else None,
            function=_pattern(item["function"], where, f"{field}.function") if item.get("function") else None,
            file_pattern=item.get("file") or "",
            function_pattern=item.get("function") or "",
            code=_pattern(item["code"], where, f"{field}.code") if item.get("code") else None,
            code_pattern=item.get("code") or "",
            weight=_weight(item, where, field, 2.0),
            required=_required(item, where, field),
        )

    def evaluate(self, incident: Incident) -> Evidence:
        if not incident.has_frames:
            return Evidence(self, Outcome.UNKNOWN, Reason.NO_FRAMES)
        for frame in incident.frames:
            path = frame.file.replace("\\", "/")  # Windows paths match the same patterns
            if (
                (self.file is None or self.file.search(path))
                and (self.function is None or self.function.search(frame.function))
                and (self.code is None or self.code.search(frame.code))
            ):
                shown = f"{path.rsplit('site-packages/', 1)[-1]}:{frame.line}"
                observed = f"{shown} in {frame.function}"
                if self.code is not None:
                    observed += f"{CODE_SEPARATOR}{frame.code}"
                return Evidence(self, Outcome.HELD, Reason.MATCHED, observed, "traceback")
        if not incident.has_complete_traceback and not self.required:
            # A paste that starts mid-traceback lost its top frames; only a required frame (one that sits next to
            # the error, so it survives trimming) counts as absent.
            return Evidence(self, Outcome.UNKNOWN, Reason.PARTIAL_TRACEBACK)
        return Evidence(self, Outcome.FAILED, Reason.ABSENT)


@dataclass(frozen=True)
class LogCondition:
    """A line anywhere in the input (a warning printed before the crash, a banner)."""

    kind: ClassVar[str] = "log"
    decider: ClassVar[str] = Input.LOG
    regex: Pattern = field(compare=False)
    pattern: str
    weight: float = 1.0
    required: bool = False

    @property
    def label(self) -> str:
        return f"/{self.pattern}/"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> LogCondition:
        return cls(
            _pattern(item.get("pattern"), where, f"{field}.pattern"),
            item["pattern"],
            _weight(item, where, field, 2.0),
            _required(item, where, field),
        )

    def evaluate(self, incident: Incident) -> Evidence:
        found = self.regex.search(incident.text)
        if found:
            return Evidence(self, Outcome.HELD, Reason.MATCHED, found.group(0)[:160], "log")
        return Evidence(self, Outcome.UNKNOWN, Reason.NOT_IN_LOG)


@functools.lru_cache(maxsize=1024)
def _specifier(spec: str) -> SpecifierSet:
    """Parsed PEP 440 specifier sets, memoised: many entries share the same few ranges."""
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(spec)


def installed(incident: Incident, name: str) -> tuple[Any, str, str]:
    """``(Version or None, version as printed, where it was read)`` for an installed package."""
    from packaging.version import InvalidVersion, Version

    found = incident.packages.get(name)
    if found is None:
        return None, "", ""
    try:
        return Version(Version(found.version).public), found.version, found.origin
    except InvalidVersion:
        return None, found.version, found.origin


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
        if not isinstance(spec, str):
            raise EntryError(where, f"{field}.spec", f"must be a PEP 440 specifier string, not {spec!r}")
        return cls(
            item["name"].lower().replace("_", "-"),
            spec,
            _weight(item, where, field, 2.0),
            _required(item, where, field),
        )

    def evaluate(self, incident: Incident) -> Evidence:
        version, printed, origin = installed(incident, self.name)
        if version is None:
            return Evidence(self, Outcome.UNKNOWN, Reason.NOT_GIVEN)
        held = _specifier(self.spec).contains(version, prereleases=True)
        return Evidence(self, Outcome.HELD if held else Outcome.FAILED, Reason.FOUND, printed, origin)


def _config_reason(fact: Fact) -> Reason:
    if fact.auto == "unresolved":
        return Reason.AUTO_UNRESOLVED
    return Reason.NOT_SET if fact.kind_present else Reason.NO_CONFIG


@dataclass(frozen=True)
class ConfigCondition:
    """A predicate over a parsed config, a launch flag or a derived fact (``precision.bf16``)."""

    kind: ClassVar[str] = "config"
    path: str
    op: str = "=="
    value: Any = None
    default: Any = None
    has_default: bool = False
    weight: float = 2.0
    required: bool = False

    @property
    def decider(self) -> str:
        namespace = namespace_of(self.path)
        return namespace.decider if namespace is not None else Input.LAUNCH

    @property
    def label(self) -> str:
        return self.path if self.op == "exists" else f"{self.path} {self.op} {show(self.value)}"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> ConfigCondition:
        path = item.get("path")
        if not isinstance(path, str):
            raise EntryError(where, f"{field}.path", "must be a dotted config path")
        prefix, _, key = path.partition(".")
        namespace = namespace_of(path)
        if namespace is None or not key:
            from .facts import NAMESPACES

            raise EntryError(where, f"{field}.path", f"unknown namespace {prefix!r} (one of {', '.join(NAMESPACES)})")
        if namespace.keys and key not in namespace.keys:
            raise EntryError(
                where, f"{field}.path", f"unknown key {key!r} of {prefix} (one of {', '.join(namespace.keys)})"
            )
        op = item.get("op", "==")
        value = _plain(item.get("value"), where, f"{field}.value")
        _check_op(op, value, "value" in item, where, field)
        return cls(
            path=path,
            op=op,
            value=value,
            default=_plain(item.get("default"), where, f"{field}.default"),
            has_default="default" in item,
            weight=_weight(item, where, field, 2.0),
            required=_required(item, where, field),
        )

    def evaluate(self, incident: Incident) -> Evidence:
        fact = config_fact(incident, self.path)
        if fact.known:
            held = compare(self.op, fact.value, self.value)
            outcome = Outcome.HELD if held else Outcome.FAILED
            return Evidence(self, outcome, Reason.FOUND, show(fact.value), fact.source, fact.auto)
        if fact.kind_present and fact.auto != "unresolved":
            if self.has_default:
                held = compare(self.op, self.default, self.value)
                outcome = Outcome.HELD if held else Outcome.FAILED
                return Evidence(self, outcome, Reason.DEFAULT, show(self.default), fact.source)
            if self.op == "exists":
                return Evidence(self, Outcome.FAILED, Reason.NOT_SET, source=fact.source)
        return Evidence(self, Outcome.UNKNOWN, _config_reason(fact), source=fact.source)


@dataclass(frozen=True)
class EnvCondition:
    """A hardware / environment fact (``gpu.min_compute_capability < 8.0``)."""

    kind: ClassVar[str] = "env"
    decider: ClassVar[str] = Input.GPU
    key: str
    op: str = "=="
    value: Any = None
    weight: float = 2.0
    required: bool = False

    @property
    def label(self) -> str:
        return f"{self.key} {self.op} {show(self.value)}"

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> EnvCondition:
        key = item.get("key")
        spec = ENV_KEYS.get(key) if isinstance(key, str) else None
        if spec is None:
            raise EntryError(where, f"{field}.key", f"unknown environment key {key!r} (one of {', '.join(ENV_KEYS)})")
        op = item.get("op", "==")
        value = _plain(item.get("value"), where, f"{field}.value")
        _check_op(op, value, "value" in item, where, field)
        if spec.type is not ValueType.NUMBER and op in _ORDERED:
            raise EntryError(where, f"{field}.op", f"{key} is not a number: {op} does not apply")
        if spec.type is ValueType.BOOL and op in ("==", "!=") and not isinstance(value, bool):
            raise EntryError(where, f"{field}.value", f"{key} is true or false, not {value!r}")
        return cls(spec.name, op, value, _weight(item, where, field, 2.0), _required(item, where, field))

    def evaluate(self, incident: Incident) -> Evidence:
        fact = env_fact(incident, self.key)
        if not fact.known:
            return Evidence(self, Outcome.UNKNOWN, Reason.NOT_GIVEN)
        held = compare(self.op, fact.value, self.value)
        return Evidence(self, Outcome.HELD if held else Outcome.FAILED, Reason.FOUND, show(fact.value), fact.source)


@dataclass(frozen=True)
class FixedCondition:
    """From ``fixed_in``: the cause is unlikely when the installed version already contains the fix."""

    kind: ClassVar[str] = "fixed"
    decider: ClassVar[str] = Input.FREEZE
    package: str
    version: str
    weight: float = 2.0
    required: bool = False

    @property
    def label(self) -> str:
        return f"{self.package}<{self.version}"

    def evaluate(self, incident: Incident) -> Evidence:
        from packaging.version import InvalidVersion, Version

        version, printed, origin = installed(incident, self.package)
        if version is None:
            return Evidence(self, Outcome.UNKNOWN, Reason.NOT_GIVEN)
        try:
            fixed = Version(self.version)
        except InvalidVersion:
            return Evidence(self, Outcome.UNKNOWN, Reason.NOT_GIVEN)
        if version >= fixed:
            return Evidence(self, Outcome.FAILED, Reason.FIXED, printed, origin)
        return Evidence(self, Outcome.HELD, Reason.FOUND, printed, origin)


Condition = (
    ErrorCondition | FrameCondition | LogCondition | PackageCondition | ConfigCondition | EnvCondition | FixedCondition
)

_KINDS: dict[str, Any] = {
    "errors": ErrorCondition,
    "frames": FrameCondition,
    "log": LogCondition,
    "packages": PackageCondition,
    "configs": ConfigCondition,
    "env": EnvCondition,
}


def parse_group(
    group: Mapping[str, Any], where: Path, field: str, *, checked: bool = False
) -> dict[str, tuple[Any, ...]]:
    """Every condition of a ``match`` (or ``match.exclude``) mapping, by kind; raises :class:`EntryError`.

    ``checked``: the mapping comes from the validated KB cache, so its patterns compiled and its version ranges
    parsed once already; patterns are left to compile on first use (see :class:`.regex.LazyPattern`), and a start-up
    that reads no versions never imports ``packaging``.
    """
    out: dict[str, tuple[Any, ...]] = {}
    for name, kind in _KINDS.items():
        items = group.get(name, [])
        if not isinstance(items, list):
            raise EntryError(where, f"{field}.{name}", "must be a list")
        parsed = []
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise EntryError(where, f"{field}.{name}[{index}]", "must be a mapping")
            condition = kind.parse(item, where, f"{field}.{name}[{index}]")
            if not checked:
                _check_written(condition, where, f"{field}.{name}[{index}]")
            parsed.append(condition)
        out[name] = tuple(parsed)
    return out
