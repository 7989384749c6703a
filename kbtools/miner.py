"""Mine the dtype / precision / device messages a released artifact can print, for the census.

The hand-written census (``census/<library>.yaml``) covers the messages someone met in a report. This miner reads
the released artifacts instead, so that the census has a denominator nobody chose: every raise site and check whose
message speaks of a dtype, a precision or a device.

- Python sources (in a wheel, an sdist or a source folder) are parsed with ``ast``: ``raise X(msg)``,
  ``assert cond, msg``, TORCH_CHECK-like calls (``torch._check(cond, lambda: msg)``, ``_check(...)``) and
  ``warnings.warn(msg)``. f-strings, ``%`` and ``.format`` become templates with ``{name}`` placeholders.
- Compiled libraries (``*.so``, ``*.pyd``, ``*.dll``) are read for their string tables: C++/CUDA check messages
  (TORCH_CHECK, AT_ERROR, dispatch macros) live there as literal strings, printf ``%s`` and friends become ``{}``.

Only messages whose words speak of dtypes or devices are kept (``_VOCABULARY``). The output is one JSON object per
line (``census/mined/<library>.jsonl``): library, version, site, kind, type and template. Run
``python -m dtypefix.kbtools.miner ARTIFACT --library NAME --version X [--out FILE]``; ``--append`` adds to a file;
``--manifest census/mined/sources.yaml --cache DIR`` re-mines every artifact the manifest lists.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import sys
import tarfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

__all__ = [
    "MinedMessage",
    "main",
    "mine_artifact",
    "mine_cxx",
    "mine_manifest",
    "mine_python",
    "mine_strings",
    "speaks_of_dtype_or_device",
]

# Words that make a message one about dtypes, precisions or devices. Case-sensitive where a word is also English
# ("Half", "Float"), insensitive for the technical names.
_VOCABULARY = re.compile(
    r"(?i:\bdtypes?\b|scalar[ _]?type|\bScalarType\b|\bprecision\b|bfloat16|\bbf16\b|float16|\bfp16\b|\bhalf\b"
    r"|float8|\bfp8\w*|\bf8e\w+|float32|\bfp32\b|\btf32\b|float64|\bfp64\b|\bfp4\b|mxfp\d|nvfp4|\bint8\b|\bint4\b"
    r"|\bDT_[A-Z0-9_]+\b|\bdevices?\b|\bcuda\b|\bcpu\b|\bxpu\b|\bnpu\b|\bmps\b|\bhpu\b|\bmeta tensor)"
    r"|\bHalf\b|\bBFloat16\b|\bFloat8_\w+|\bc10::\w+"
)
# A compiled string is a message only if it reads like one: words and spaces, not a symbol or a path. A match starts
# where a run of letters starts (the same strings match as without the lookbehind): trying every letter of a long
# run made a 57,000-character string table entry take 24 s, and a whole libctranslate2 or libtorch_npu hours.
_SENTENCE = re.compile(r"(?<![A-Za-z])[A-Za-z][A-Za-z'`]+ [A-Za-z'`{]+ ")
_PRINTF = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z|j|t)?[diouxXeEfgGsScpn]")
_MIN_STRING = 12
_MAX_TEMPLATE = 400
# C++/CUDA sources: the check macros and throws whose string literals are the message.
_CXX_CHECK = re.compile(
    r"\b(TORCH_CHECK\w*|STD_TORCH_CHECK|AT_ERROR|TORCH_INTERNAL_ASSERT\w*|NVTE_CHECK\w*|NVTE_ERROR|CHECK_INPUT_DTYPE"
    r"|throw\s+(?:std::)?\w+|PyErr_SetString|PyErr_Format)\s*\("
)
_CXX_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_CXX_SUFFIXES = (".cpp", ".cc", ".cu", ".cuh", ".h", ".hpp")
# Strings of a compiled library that are not messages: C++ type names, bundled runtimes, Python code in docstrings.
_NOISE = re.compile(r"c10::util::detail|\[with T = |^\s*(if|def|return|for|import|from|class)\b|\bconstexpr\b")
_NOT_THE_LIBRARY = re.compile(r"(^|/)(libgomp|libjitbackend_test|libtorchbind_test|libbackend_with_compiler)\b")
_INTERNAL_AT = re.compile(r'INTERNAL ASSERT FAILED at "[^"]*":?\d*')
_CHECK_CALLS = frozenset({"_check", "_check_with", "_check_value", "_check_type", "_check_index", "TORCH_CHECK"})
_WARN_CALLS = frozenset({"warn", "warning", "warning_once", "warn_once"})


@dataclass(frozen=True)
class MinedMessage:
    """One message a release can print, found at one site."""

    library: str
    version: str
    site: str
    """``path:line`` inside the artifact for Python, the library file name for a compiled string."""
    kind: str
    """``raise``, ``assert``, ``check`` or ``warn`` (Python), ``string`` (a compiled library's string table)."""
    type: str
    """The exception class for a raise site (as written, last dotted part); empty otherwise."""
    template: str
    """The message, its variable parts written ``{name}`` (``{}`` where the source gives no name)."""
    function: str = ""
    """Python: the enclosing function's qualified name (``GradScaler._unscale_grads_``), empty at module level and
    for C++ and compiled strings. A paste cut inside that function says which messages it was about to print."""
    function_raises: int = 0
    """Python: how many raise, assert and check sites that function has in all, whatever their message (a dtype or
    not): more than the rows naming it means it can also fail with a message outside the census."""
    callers: tuple[str, ...] = ()
    """Python: where the functions of the same file call this one directly (``self.name(...)`` / ``cls.name(...)``
    from a method of its class, ``name(...)`` for a module-level function), as ``Qualified.name:line``, sorted. A
    paste cut in a caller at that line, before the frames of its callee, says which message the callee raised."""


def speaks_of_dtype_or_device(text: str) -> bool:
    """Whether a message names a dtype, a precision or a device (the miner's filter)."""
    return bool(_VOCABULARY.search(text))


def _name_of(node: ast.expr) -> str:
    """A short placeholder name for an interpolated expression (``{dtype}`` for ``x.dtype``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _name_of(node.func)
    if isinstance(node, ast.Subscript):
        return _name_of(node.value)
    return ""


def _template(node: ast.expr | None) -> str | None:
    """The message an expression formats, as a template; None when it is not built from a literal."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + _name_of(value.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left), _template(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        left = _template(node.left)
        return _PRINTF.sub("{}", left) if left is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        base = _template(node.func.value)
        return (
            re.sub(r"\{[^{}]*\}", lambda m: "{" + m.group(0)[1:-1].split(":")[0].split("!")[0] + "}", base)
            if base
            else None
        )
    if isinstance(node, ast.Lambda):
        return _template(node.body)
    if isinstance(node, ast.Call) and node.args:
        # raise Error(msg) where msg is wrapped once more, e.g. textwrap.dedent(f"...") or "".join([...])
        return _template(node.args[0])
    return None


def _call_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _callee(func: ast.expr, caller: str) -> str:
    """The qualified name a call inside ``caller`` reaches in the same file, when the source alone says it:
    ``self.x()`` / ``cls.x()`` in a method -> ``Class.x``, ``x()`` -> the module-level ``x``; else empty (a call on
    another object, or from a nested function, whose target the file does not fix)."""
    if not caller or "<locals>" in caller:
        return ""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        owner = caller.rpartition(".")[0]
        return f"{owner}.{func.attr}" if owner else ""
    return ""


def _clean(template: str) -> str:
    """One line, trimmed, bounded: the form a census row keeps."""
    text = " ".join(template.split())
    return text[:_MAX_TEMPLATE]


def mine_python(source: str, path: str, library: str, version: str) -> list[MinedMessage]:
    """Every dtype / device message raised, asserted, checked or warned in one Python file."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[MinedMessage] = []
    raises: dict[str, int] = {}
    callers: dict[str, set[str]] = {}  # callee -> "caller:line" of each call

    def keep(node: ast.AST, kind: str, type_: str, message: ast.expr | None, function: str) -> None:
        if kind != "warn":
            raises[function] = raises.get(function, 0) + 1
        template = _clean(_template(message) or "")
        if len(template) > 3 and speaks_of_dtype_or_device(template):
            line = getattr(node, "lineno", 0)
            found.append(MinedMessage(library, version, f"{path}:{line}", kind, type_, template, function))

    for node, function in _walk_scoped(tree):
        if isinstance(node, ast.Raise):
            call = node.exc if isinstance(node.exc, ast.Call) else None
            keep(
                node,
                "raise",
                _call_name(call.func) if call else "",
                call.args[0] if call and call.args else None,
                function,
            )
        elif isinstance(node, ast.Assert):
            keep(node, "assert", "AssertionError", node.msg, function)
        elif isinstance(node, ast.Call):
            name = _call_name(node.func)
            if name in _CHECK_CALLS and len(node.args) >= 2:
                keep(node, "check", "RuntimeError", node.args[1], function)
            elif name in _WARN_CALLS and node.args:
                keep(node, "warn", "", node.args[0], function)
            callee = _callee(node.func, function)
            if callee:
                callers.setdefault(callee, set()).add(f"{function}:{node.lineno}")
    found = [
        replace(m, function_raises=raises.get(m.function, 0), callers=tuple(sorted(callers.get(m.function, ()))))
        if m.function
        else m
        for m in found
    ]
    return sorted(found, key=lambda m: int(m.site.rsplit(":", 1)[1]))


def _walk_scoped(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Every node with the qualified name of the function it is in (``Class.method``, ``outer.<locals>.inner``
    as Python's ``__qualname__`` writes it); empty at module or class level."""
    todo: list[tuple[ast.AST, str, str]] = [(tree, "", "")]  # node, qualified prefix, enclosing function
    while todo:
        node, prefix, function = todo.pop()
        yield node, function
        for child in reversed(list(ast.iter_child_nodes(node))):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                todo.append((child, f"{name}.<locals>.", name))
            elif isinstance(child, ast.ClassDef):
                todo.append((child, f"{prefix}{child.name}.", function))
            else:
                todo.append((child, prefix, function))


def mine_cxx(source: str, path: str, library: str, version: str) -> list[MinedMessage]:
    """Every dtype / device message of a check macro or throw in one C++/CUDA source file."""
    found: list[MinedMessage] = []
    for match in _CXX_CHECK.finditer(source):
        end = source.find(";", match.end())
        call = source[match.end() : end if end != -1 else match.end() + 2000][:2000]
        literals = _CXX_LITERAL.findall(call)
        if not literals:
            continue
        template = _clean(_PRINTF.sub("{}", "{}".join(lit.replace('\\"', '"') for lit in literals)))
        if speaks_of_dtype_or_device(template) and _SENTENCE.search(template + " "):  # checked after trimming
            line = source.count("\n", 0, match.start()) + 1
            kind = "assert" if "ASSERT" in match.group(1) else "check"
            found.append(MinedMessage(library, version, f"{path}:{line}", kind, "", template))
    return found


def _strings(data: bytes) -> Iterator[str]:
    """Printable ASCII runs of a binary, like ``strings``."""
    for match in re.finditer(rb"[\x20-\x7e\t]{%d,}" % _MIN_STRING, data):
        yield match.group(0).decode("ascii")


def mine_strings(data: bytes, site: str, library: str, version: str) -> list[MinedMessage]:
    """The dtype / device messages in a compiled library's string table."""
    found: list[MinedMessage] = []
    seen: set[str] = set()
    for text in _strings(data):
        if not _SENTENCE.search(text) or not speaks_of_dtype_or_device(text) or _NOISE.search(text):
            continue
        template = _clean(_INTERNAL_AT.sub("INTERNAL ASSERT FAILED at {site}", _PRINTF.sub("{}", text)))
        if template not in seen and speaks_of_dtype_or_device(template):
            seen.add(template)
            found.append(MinedMessage(library, version, site, "string", "", template))
    return found


def _members(artifact: Path) -> Iterator[tuple[str, bytes]]:
    """(path, bytes) of every Python or compiled member of a wheel, an sdist or a folder."""
    wanted = (".py", ".so", ".pyd", ".dll", ".dylib", *_CXX_SUFFIXES)
    if artifact.is_dir():
        for path in sorted(artifact.rglob("*")):
            if path.is_file() and (path.suffix in wanted or ".so." in path.name):
                yield str(path.relative_to(artifact)), path.read_bytes()
    elif zipfile.is_zipfile(artifact):
        with zipfile.ZipFile(artifact) as archive:
            for info in archive.infolist():
                if info.filename.endswith(wanted) or ".so." in info.filename:
                    yield info.filename, archive.read(info)
    elif tarfile.is_tarfile(artifact):
        with tarfile.open(artifact) as archive:
            for member in archive:
                if member.isfile() and (member.name.endswith(wanted) or ".so." in member.name):
                    handle = archive.extractfile(member)
                    if handle is not None:
                        yield member.name.split("/", 1)[-1], handle.read()
    else:
        raise ValueError(f"{artifact}: not a wheel, an sdist or a folder")


def mine_artifact(artifact: Path, library: str, version: str) -> list[MinedMessage]:
    """Every dtype / device message of one released artifact, in member order, duplicates (same site and template)
    removed. Test folders are skipped: their messages are the tests' own, not the library's."""
    found: list[MinedMessage] = []
    seen: set[tuple[str, str]] = set()
    for path, data in _members(artifact):
        parts = path.split("/")
        if any(
            p in ("tests", "test", "testing", "benchmarks", "examples", "third_party", "3rdparty") for p in parts[:-1]
        ):
            continue
        if _NOT_THE_LIBRARY.search(path):
            continue
        if path.endswith(".py"):
            rows = mine_python(data.decode("utf-8", "replace"), path, library, version)
        elif path.endswith(_CXX_SUFFIXES):
            rows = mine_cxx(data.decode("utf-8", "replace"), path, library, version)
        else:
            rows = mine_strings(data, parts[-1], library, version)
        for row in rows:
            key = (row.site.rsplit(":", 1)[0] if row.kind != "string" else row.site, row.template)
            if key not in seen:
                seen.add(key)
                found.append(row)
    return found


def _fields(row: MinedMessage) -> dict[str, object]:
    """A row as written: the function fields only where there is a function (most rows are compiled strings)."""
    data = asdict(row)
    if not row.function:
        del data["function"], data["function_raises"]
    if not row.callers:
        del data["callers"]
    else:
        data["callers"] = list(row.callers)
    return data


def _write(rows: Iterable[MinedMessage], out: io.TextIOBase | None, path: Path | None, append: bool) -> int:
    lines = [json.dumps(_fields(row), ensure_ascii=False, sort_keys=False) for row in rows]
    text = "".join(line + "\n" for line in lines)
    if path is None:
        assert out is not None
        out.write(text)
    else:
        with path.open("a" if append else "w", encoding="utf-8") as handle:
            handle.write(text)
    return len(lines)


def mine_manifest(manifest: Path, cache: Path, out_dir: Path) -> dict[str, int]:
    """Mine every reachable artifact a manifest lists (``census/mined/sources.yaml``) into
    ``<out_dir>/<library>.jsonl``, one file per library with all its versions; returns rows per library."""
    import yaml

    counts: dict[str, int] = {}
    items = yaml.safe_load(manifest.read_text(encoding="utf-8"))["artifacts"]
    for item in items:
        if not item.get("artifact"):
            continue
        library = item["library"]
        rows = mine_artifact(cache / item["artifact"], library, str(item["version"]))
        target = out_dir / f"{library}.jsonl"
        counts[library] = counts.get(library, 0) + _write(rows, None, target, append=library in counts)
    return counts


def main(argv: list[str] | None = None) -> int:
    """Command line: mine one artifact, or every artifact of a manifest, into JSON lines."""
    parser = argparse.ArgumentParser(prog="python -m dtypefix.kbtools.miner", description=__doc__.split("\n")[0])
    parser.add_argument("artifact", type=Path, nargs="?", help="a wheel, an sdist (.tar.gz) or a source folder")
    parser.add_argument("--library", help="PyPI name the versions speak of")
    parser.add_argument("--version", help="the release the artifact is")
    parser.add_argument("--out", type=Path, help="JSON-lines file to write (default: stdout)")
    parser.add_argument("--append", action="store_true", help="append to --out instead of replacing it")
    parser.add_argument("--manifest", type=Path, help="census/mined/sources.yaml: mine every artifact it lists")
    parser.add_argument("--cache", type=Path, default=Path(), help="folder the manifest's artifacts lie in")
    args = parser.parse_args(argv)
    if args.manifest is not None:
        try:
            counts = mine_manifest(args.manifest, args.cache, args.out or args.manifest.parent)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, tarfile.TarError) as error:
            print(f"miner: {error}", file=sys.stderr)
            return 2
        for library, count in sorted(counts.items()):
            print(f"{library}: {count} messages", file=sys.stderr)
        return 0
    if args.artifact is None or not args.library or not args.version:
        print("miner: give ARTIFACT --library NAME --version X, or --manifest FILE", file=sys.stderr)
        return 2
    try:
        rows = mine_artifact(args.artifact, args.library, args.version)
    except (OSError, ValueError, zipfile.BadZipFile, tarfile.TarError) as error:
        print(f"miner: {error}", file=sys.stderr)
        return 2
    count = _write(rows, sys.stdout if args.out is None else None, args.out, args.append)  # type: ignore[arg-type]
    print(f"{args.library} {args.version}: {count} messages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
