"""Configs: parse them leniently, tell which tool they belong to, and find those pasted inside a log.

People paste DeepSpeed configs with comments, trailing commas, Python ``True``, a missing closing brace, or
only the two keys they think matter. A strict JSON parser would throw all of that away, so JSON-ish text goes
through a tolerant reader; YAML goes through ``yaml.safe_load`` with limits that make alias bombs and absurd
nesting a clear error instead of a hang.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .regex import lazy_regex

__all__ = ["Config", "ConfigError", "detect_kind", "find_embedded", "parse_config"]

_MAX_CONFIG_BYTES = 4 << 20
_MAX_NODES = 200_000
_MAX_DEPTH = 64
_MAX_ALIASES = 64


class ConfigError(ValueError):
    """A config that cannot be read; the message is one line meant for the user, ``line`` where it is known."""

    def __init__(self, problem: str, line: int = 0) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


@dataclass(frozen=True)
class Config:
    """One parsed config and what it is."""

    kind: str
    """A namespace of :data:`.facts.NAMESPACES` that reads config files (``deepspeed``, ``torchtune`` ...)."""
    data: dict[str, Any] = field(repr=False)
    origin: str
    """A file name, or ``pasted`` when it was found inside the log."""


# --------------------------------------------------------------------------------------------------- reading
_TOKEN = lazy_regex(
    r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|(?P<punct>[{}\[\]:,])'
    r"|(?P<word>[A-Za-z_+\-.0-9][\w+\-.]*)|(?P<comment>//[^\n]*|#[^\n]*|/\*.*?\*/))",
    re.DOTALL,
)
_WORDS: dict[str, Any] = {"true": True, "True": True, "false": False, "False": False, "null": None, "None": None}


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            pos += 1  # a stray character (ellipsis, backslash): skip it, keep reading
            continue
        pos = match.end()
        if match["string"] is not None:
            raw = match["string"]
            try:
                out.append(("value", json.loads('"' + raw[1:-1].replace('"', '\\"') + '"')))
            except ValueError:
                out.append(("value", raw[1:-1]))
        elif match["punct"] is not None:
            out.append((match["punct"], None))
        elif match["word"] is not None:
            out.append(("value", _scalar(match["word"])))
    return out


def _scalar(word: str) -> Any:
    if word in _WORDS:
        return _WORDS[word]
    for convert in (int, float):
        try:
            return convert(word)
        except ValueError:
            pass
    return word


class _Reader:
    """Recursive descent over JSON-ish tokens that forgives missing commas, trailing commas and EOF."""

    def __init__(self, tokens: list[tuple[str, Any]]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else "eof"

    def value(self, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise ConfigError(f"nested deeper than {_MAX_DEPTH} levels")
        kind = self.peek()
        if kind == "{":
            self.pos += 1
            return self.members(depth + 1, "}")
        if kind == "[":
            self.pos += 1
            items: list[Any] = []
            while self.peek() not in ("]", "eof"):
                if self.peek() == ",":
                    self.pos += 1
                    continue
                items.append(self.value(depth + 1))
            self.pos += 1
            return items
        if kind == "value":
            self.pos += 1
            return self.tokens[self.pos - 1][1]
        self.pos += 1
        return None

    def members(self, depth: int, closer: str) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while self.peek() not in (closer, "eof"):
            if self.peek() != "value":
                self.pos += 1
                continue
            key = str(self.tokens[self.pos][1])
            self.pos += 1
            if self.peek() != ":":
                continue
            self.pos += 1
            result[key] = self.value(depth)
            if self.peek() == ",":
                self.pos += 1
        self.pos += 1
        return result


def _read_jsonish(text: str) -> dict[str, Any]:
    stripped = text.strip()
    try:
        data = json.loads(stripped)
        if isinstance(data, dict):
            return data
    except (ValueError, RecursionError):
        pass
    reader = _Reader(_tokens(stripped))
    if reader.peek() == "{":
        reader.pos += 1
    data = reader.members(0, "}")
    if not data:
        raise ConfigError("no key/value pairs found")
    return data


def _count_nodes(value: Any, budget: list[int], depth: int = 0) -> None:
    if depth > _MAX_DEPTH:
        raise ConfigError(f"nested deeper than {_MAX_DEPTH} levels")
    budget[0] -= 1
    if budget[0] < 0:
        raise ConfigError(f"more than {_MAX_NODES} values (an alias bomb?)")
    if isinstance(value, dict):
        for item in value.values():
            _count_nodes(item, budget, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _count_nodes(item, budget, depth + 1)


_YAML_ALIAS = lazy_regex(r"(?:^|[\s\[{,:-])\*[^\s,\]}]+")


def _read_yaml(text: str) -> dict[str, Any]:
    import yaml  # imported on first use: most explanations read no YAML

    if len(_YAML_ALIAS.findall(text)) > _MAX_ALIASES:
        raise ConfigError(f"more than {_MAX_ALIASES} YAML aliases; refusing to expand them")
    if _yaml_depth(text) > _MAX_DEPTH:
        raise ConfigError(f"nested deeper than {_MAX_DEPTH} levels")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
    except RecursionError:
        raise ConfigError(f"nested deeper than {_MAX_DEPTH} levels") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{problem}{where}", mark.line + 1 if mark is not None else 0) from None
    if not isinstance(data, dict):
        raise ConfigError("not a mapping of settings")
    return data


def _yaml_depth(text: str) -> int:
    """An upper bound of the YAML text's nesting, found in one pass before any YAML library sees it.

    The bound is ours whatever the loader does: some releases of the C loader refuse deep nesting with their
    own wording, others recurse until Python's limit, so the check cannot be left to them. Flow brackets
    outside quotes and comments, block indentation levels and compact ``- - x`` sequences all count; the
    result over-counts rather than under-counts, which only matters for configs no tool would accept anyway.
    """
    deepest = flow = 0
    indents: list[int] = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        if flow == 0:
            column = len(line) - len(body)
            while indents and indents[-1] >= column:
                indents.pop()
            indents.append(column)
            dashes = 0
            while body.startswith("- "):
                dashes += 1
                body = body[2:].lstrip(" ")
            deepest = max(deepest, len(indents) + dashes)
        quote = ""
        for index, char in enumerate(body):
            if quote:
                if char == quote:
                    quote = ""
            elif char in "\"'" and (index == 0 or body[index - 1] in " \t[{,:"):
                quote = char
            elif char == "#" and (index == 0 or body[index - 1] in " \t"):
                break
            elif char in "[{":
                flow += 1
                deepest = max(deepest, len(indents) + flow)
            elif char in "]}" and flow:
                flow -= 1
    return deepest


def detect_kind(data: dict[str, Any]) -> str | None:
    """Which tool a parsed config belongs to, from the keys only that tool uses (see :data:`.facts.NAMESPACES`)."""
    from .facts import NAMESPACES  # the registry's detect functions; facts imports nothing of this module

    keys = set(data)
    return next((ns.name for ns in NAMESPACES.values() if ns.detect is not None and ns.detect(keys, data)), None)


def parse_config(text: str, origin: str, kind: str | None = None, *, strict: bool = False) -> Config:
    """Parse a config file's text; ``kind`` overrides detection. Raises :class:`ConfigError`.

    Pasted fragments are read leniently (a JSON block cut mid-way still yields its keys). ``strict`` is for a
    file the user names: JSON must be JSON, as DeepSpeed and the Trainer will read it, and a syntax error is
    reported with its line instead of being read around.
    """
    if len(text) > _MAX_CONFIG_BYTES:
        raise ConfigError(f"larger than {_MAX_CONFIG_BYTES >> 20} MB; not a config")
    if "\x00" in text:
        raise ConfigError("binary data, not a JSON or YAML config")
    stripped = text.lstrip()
    if not stripped:
        raise ConfigError("empty file")
    try:
        if strict and stripped.startswith("{"):
            _check_json(text)
        data = _read_jsonish(stripped) if stripped.startswith(("{", '"')) else _read_yaml(text)
    except ConfigError:
        raise
    except ValueError:
        # Python refuses to convert an integer of more than 4300 digits (CVE-2020-10735); the loaders let it out.
        raise ConfigError("a number too long to read (thousands of digits); not a config") from None
    _count_nodes(data, [_MAX_NODES])
    found = kind or detect_kind(data)
    if found is None:
        from .facts import NAMESPACES

        tools = [ns.title for ns in NAMESPACES.values() if ns.detect is not None]
        raise ConfigError(f"not recognised as a {', '.join(tools[:-1])} or {tools[-1]} config")
    return Config(found, data, origin)


def _check_json(text: str) -> None:
    import json

    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", exc.lineno) from None
    except RecursionError:
        raise ConfigError(f"nested deeper than {_MAX_DEPTH} levels") from None


# --------------------------------------------------------------------------------------------------- embedded
_FENCE = lazy_regex(r"^\s*(```|~~~)[\w+-]*\s*$")
# "\s*-?\s*" would split a run of N spaces between its two halves N ways (quadratic on a long blank run); the dash
# and the spaces after it are one optional group, so each run is read once.
_YAML_LINE = lazy_regex(r"^\s*(?:-\s*)?[A-Za-z_][\w.-]*:(?:\s.*)?$")
# `accelerate env`: "- `Accelerate` default config:" (newer) / "- `Accelerate` configs:" followed by "\t- key: value".
_ACCELERATE_ENV_CONFIG = lazy_regex(r"^\s*-\s+`?Accelerate`?\s+(?:default\s+)?configs?:\s*$", re.IGNORECASE)
_TRAINING_ARGS = lazy_regex(r"TrainingArguments\($|^\s*(?:Training|Seq2SeqTraining)Arguments\($")
_KWARG_LINE = lazy_regex(r"^\s*(?P<key>[a-z_][a-z0-9_]*)=(?P<value>.*)$")  # value trimmed in code: linear
_MAX_BLOCK_LINES = 1500


def _blocks(lines: list[str]) -> Iterator[tuple[str, str]]:
    """Candidate (text, hint) regions: fenced blocks, brace-balanced objects, YAML-looking runs."""
    index = 0
    while index < len(lines):
        line = lines[index]
        if _FENCE.match(line):
            end = index + 1
            while end < len(lines) and end - index < _MAX_BLOCK_LINES and not _FENCE.match(lines[end]):
                end += 1
            yield "\n".join(lines[index + 1 : end]), "fence"
            index = end + 1
            continue
        if line.strip().startswith("{"):
            depth = 0
            end = index
            while end < len(lines) and end - index < _MAX_BLOCK_LINES:
                depth += lines[end].count("{") - lines[end].count("}")
                if depth <= 0:
                    break
                end += 1
            if end > index:
                yield "\n".join(lines[index : end + 1]), "json"
                index = end + 1
                continue
        if _ACCELERATE_ENV_CONFIG.match(line):
            end = index + 1
            body = []
            while end < len(lines) and lines[end].strip().startswith("- ") and end - index < 200:
                body.append(lines[end].strip()[2:])
                end += 1
            yield "\n".join(body), "accelerate"
            index = end
            continue
        if _TRAINING_ARGS.search(line.strip()):
            end = index + 1
            pairs: dict[str, str] = {}
            while end < len(lines) and end - index < 400:
                kwarg = _KWARG_LINE.match(lines[end])
                if not kwarg:
                    break
                value = kwarg["value"].rstrip()
                pairs[kwarg["key"]] = (value[:-1] if value.endswith(",") else value).rstrip()
                end += 1
            yield json.dumps({k: _scalar(v) for k, v in pairs.items()}), "trainer"
            index = end
            continue
        if _YAML_LINE.match(line):
            end = index
            while (
                end < len(lines)
                and end - index < _MAX_BLOCK_LINES
                and (_YAML_LINE.match(lines[end]) or (lines[end].startswith(("  ", "\t")) and lines[end].strip()))
            ):
                end += 1
            if end - index >= 3:
                yield "\n".join(lines[index:end]), "yaml"
                index = end
                continue
        index += 1


def find_embedded(text: str) -> list[Config]:
    """Configs pasted inside a log or bug report; fragments that are not a known config are skipped."""
    found: list[Config] = []
    for block, hint in _blocks(text.split("\n")):
        if not block.strip():
            continue
        try:
            kind = hint if hint in ("accelerate", "trainer") else None
            config = parse_config(block, "pasted", kind)
        except (ConfigError, RecursionError):
            continue
        found.append(config)
    return found
