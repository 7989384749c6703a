"""The message census: every dtype / precision / device message the stack prints, and whether the KB knows it.

The census is KB-editing data kept beside the KB (``census/<library>.yaml``, format in ``census/README.md``), not
part of the runtime pipeline. ``tests/test_census.py`` holds every row to its entries, and ``dtypefix docs``
publishes the table with its coverage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from dtypefix.matcher.catalog import Catalog
from dtypefix.matcher.explain import answers, explain
from dtypefix.matcher.regex import Pattern
from dtypefix.matcher.regex import compile_pattern as _linear

__all__ = [
    "OUT_OF_SCOPE",
    "CensusRow",
    "MinedRow",
    "callee_index",
    "census_dir",
    "instantiate",
    "load_census",
    "load_mined",
    "mined_answered",
    "mined_summary",
    "raise_index",
    "recognised_by",
    "template_regex",
    "triage",
]

_PLACEHOLDER = re.compile(r"\{[a-z_][a-z0-9_]*\}")
# Any named placeholder (``{need}``, ``{FP8_MAX}``): its name is not part of what the message says.
_ANY_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


@dataclass(frozen=True)
class CensusRow:
    """One wording of one message, where it is raised, and the entries that must recognise it."""

    library: str
    where: str
    """``<file stem>[<index>]``, for test ids and messages."""
    template: str
    """The message as the source formats it, variable parts written ``{name}``."""
    example: str
    """One instance of the template (real output where it exists)."""
    type: str
    """The exception class as printed; empty for warnings and log lines."""
    kind: str
    source: str
    """``owner/repo@tag:path:line``; empty when only a public report shows the message."""
    report: str
    versions: str
    entries: tuple[str, ...]

    @property
    def text(self) -> str:
        """The input the census test explains: ``Type: example``, or the example alone for a warning."""
        return f"{self.type}: {self.example}" if self.type else self.example

    @property
    def source_url(self) -> str:
        """A link to the raise site at its tag (GitHub), or the report."""
        if not self.source:
            return self.report
        repo, _, rest = self.source.partition("@")
        tag, _, location = rest.partition(":")
        path, _, line = location.rpartition(":")
        return f"https://github.com/{repo}/blob/{tag}/{path}#L{line.lstrip('L').split('-')[0]}"


OPERANDS = "operands.yaml"
"""Beside the rows: which side each two-operand message names is which (``census/operands.yaml``)."""


def census_dir(kb_dir: Path) -> Path:
    """The census beside a KB checkout (``<repo>/census`` next to ``<repo>/kb``)."""
    return kb_dir.resolve().parent / "census"


def template_regex(template: str) -> re.Pattern[str]:
    """The template as a regex: literal text, each ``{placeholder}`` any non-empty run."""
    return re.compile("(?s)" + ".+?".join(re.escape(part) for part in _PLACEHOLDER.split(template)))


def load_census(folder: Path) -> list[CensusRow]:
    """Every row of every ``census/*.yaml``, in file and row order (empty when there is no census)."""
    import yaml

    rows: list[CensusRow] = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        if path.name == OPERANDS:
            continue  # the operand roles of the rows, not rows (matcher/location.py reads it)
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for index, row in enumerate(data["rows"]):
            rows.append(
                CensusRow(
                    library=data["library"],
                    where=f"{path.stem}[{index}]",
                    template=row["template"],
                    example=row.get("example", row["template"]),
                    type=row.get("type") or "",
                    kind=row.get("kind", "error"),
                    source=row.get("source") or "",
                    report=row.get("report") or "",
                    versions=str(row.get("versions") or ""),
                    entries=tuple(row["entries"]),
                )
            )
    return rows


def recognised_by(row: CensusRow, catalog: Catalog) -> str | None:
    """The id of the entry that ranks first on the row's example, or None when nothing matches."""
    report = explain(row.text, catalog=catalog)
    return report.matches[0].entry.id if report.matches else None


# --- Mined messages (census/mined/<library>.jsonl, written by kbtools/miner.py) ---------------------------------

# Why a mined message is not ours to explain. Fixed list: the docs and the test name these keys.
OUT_OF_SCOPE: dict[str, str] = {
    "not-a-check": "help text, a log line or a string fragment: no check that fails",
    "other-sense": "the word that looked like a dtype or device means something else here (half of, device-side,"
    " part of a name: dt_bias, mm_mxfp8)",
    "shape": "shape, size, rank, stride or layout",
    "index-range": "an index or value out of range",
    "memory": "memory: allocation, out of memory, pinned or shared memory",
    "install-or-build": "a missing extension, library, driver or build option",
    "api-misuse": "an argument of the wrong kind (device string, ordinal, stream, option name)",
    "complex-sparse-quantized": "complex, sparse or quantized-layout tensors, not a precision choice",
    "internal": "an internal invariant or a runtime's own machinery (streams, events, graphs, profiler, compiler IR)",
    "platform": "a hardware or platform capability (GPU generation, CUDA version, SM count, interconnect), no dtype",
    "offload-or-parallel-config": "an offload, sharding or parallel-layout setting, not where a tensor is",
}

_DTYPE_WORDS = _linear(
    r"(?i:\bdtypes?\b|scalar[ _]?type|'half'|bfloat16|\bbf16\b|float16|\bfp16\b|float8|\bfp8\w*|\bf8e\w+|float32|\bfp32\b"
    r"|\btf32\b|float64|\bfp64\b|\bfp4\b|\bmxfp\d|\bnvfp4|(?:\b|_)precision\b)|\bDT_[A-Z0-9_]+\b|\bHalf\b|\bBFloat16\b|\bFloat8_\w+"
)
_DEVICE_WORDS = _linear(r"(?i:\bdevices?\b|\bcuda\b|\bcpu\b|\bxpu\b|\bnpu\b|\bmps\b|\bhpu\b|\bmeta\b)")
_CHECK_WORDS = _linear(
    r"(?i:\bmust\b|\bexpect(ed|s)?\b|\bshould\b|\brequires?\b|\brequired\b|not supported|unsupported|not implemented"
    r"|\bonly (supports?|works?|accepts?|allowed|available)\b|\bcannot\b|can't|\bcan not\b|\binvalid\b|mismatch"
    r"|(does|do|is|are)( not|n't) (support|match|allowed|compatible|implemented)|\bincompatible\b|\bunable\b"
    r"|\bno kernel\b|\bnot (available|allowed)\b|\bneeds?\b|\bdisallowed\b|\bforbidden\b"
    # a dtype the check refuses to handle (autocast's prioritize: "Unexpected floating ScalarType")
    r"|\bunexpected floating\b)"
)
# Out-of-scope rules, tried in order on messages that name no dtype or precision (device-only or neither).
_OUT_RULES: tuple[tuple[str, Pattern], ...] = (
    (
        "internal",
        _linear(
            r"INTERNAL ASSERT|(?i:\bstreams?\b|\bevents?\b|graph capture|cuda[ -]?graph|profil|\bnvtx\b|\bJIT kernel\b"
            # CUDA capture, the compilers' and dispatchers' own state, foreign-language runtimes' panics
            r"|\bcapture\b|\bcompiler\b|\bcompilation\b|\bdestructor\b|context invalid|\bpanic\b|unwrap\(\)"
            r"|DispatchKey|dispatch time|register_fake|impl_abstract|ge_converter|\bdecomps\b|\blowering\b|FakeTensor"
            r"|functionaliz|\bRNG\b|JitType|\bdevice cache\b|storage cannot be shared|falling back to run on|coredump"
            r"|device-bound|\bpointer\b|\bserializ|\bATen\b|\bat::|\blauncher\b|device state|\bplaceholder\b|copy failed|\bskipping\b|\bhandle\b|not handled)"
        ),
    ),
    ("memory", _linear(r"(?i:out of memory|\bOOM\b|\bmemory\b|\ballocat|pinned|\bpin_memory\b|\bipc\b)")),
    (
        "install-or-build",
        _linear(
            r"(?i:compiled|\bbuilt?\b|\bbuild\b|install|\bimport|extension|\blibrary\b|\bdriver\b|\bnvcc\b|\bnvrtc\b|\.so\b"
            r"|\bversion\b|\bruntime\b|not (found|loaded)|\bsymbol\b|\bcupti\b|\bcudnn\b|\bnccl\b|\bmpi\b|\blibs\b)"
        ),
    ),
    (
        "api-misuse",
        _linear(
            r"(?i:device (string|ordinal|index|id|type at start)|device_(id|index|ids)\b|\bordinal\b|\bkwarg|argument"
            r"|\boption\b|\bkeyword\b|\bmode\b|\bbackend\b|\bcallable\b|\bstring\b|\bformat\b|\bscheme\b"
            # a value of the wrong kind or a missing one, a legacy or pickling API, two arguments that exclude each other
            r"|\bJSON\b|\ban int\b|\binteger\b|\bstr\b|torch\.device\b|\bnegative\b|\bparse\b|\blegacy\b|\bpickl"
            r"|\bprovided?\b|must (?:not )?be specified|\binfer\b|\bdetermine\b|\bnotebook\b|map location|device[_-]ids\b"
            r"|\bis required (?:when|for)\b|\biterator\b|\bdeclare\b|(?:must not|can ?not) be None\b|\bnon-empty\b|\bPIL\b|simultaneously"
            r"|set_device\b|\barg\b|\bmodel id\b|\bexplicit\b)"
            # an environment variable set to a value it does not take ("VLLM_X=cuda is not supported")
            r"|\b[A-Z][A-Z0-9_]{3,}=\w"
        ),
    ),
    (
        "offload-or-parallel-config",
        _linear(
            r"(?i:offload|\bshard|tensor.parallel|\btp_size\b|\bpipeline.parallel|\branks?\b|\bnodes?\b|\bworld.size\b"
            r"|\bpg\b|process group|\bpartitions?\b|disaggregation|\bPD\b|_tp_|\bnvme\b|remote device|sync_module_states"
            r"|DeviceMeshes|device mesh from|as many devices as)"
        ),
    ),
    (
        "platform",
        _linear(
            r"(?i:compute capability|\bsm_?\d+|\bSMs?\b|cuda \d+\.\d+|\b(turing|volta|ampere|hopper|blackwell|ada)\b|\bgpu\b|nvswitch|nvlink"
            r"|\barch\b|architecture|environment without|\bneuron\b|multicast|\bB[23]00\b|\bH[12]00\b|\bA100\b|\brocm\b|\bhip\b|triton|\bnot available\b"
            # what the machine has: peers, SM resources, device queries, OS, CPU features, interconnect
            r"|\bpeer\b|\bL2\b|\bCTA\b|kernel cluster|co.resident|\bcapability\b|\bAMX\b|\bArm64\b|cooperative launch"
            r"|oneMKL|jemalloc|\bMLX\b|\bMetal\b|Apple Silicon|\bWindows\b|MacOS|\bnvml\b|amdsmi|ascend_hal|\bUUIDs?\b"
            r"|device count|device handle|\baffinity\b|\bHCA\b|\bIB devices?\b|\bVMM\b|device (major|minor)|product name"
            r"|\bhardware\b|mach-o|AMDGPU|invalid cpu|too many blocks|cpu binding|requires NVIDIA)"
        ),
    ),
    (
        "shape",
        _linear(
            r"(?i:\bshapes?\b|\bsizes?\b|\bdim(s|ension|ensions)?\b|\brank\b|\bstrides?\b|contiguous|\bnumel\b|\bndim\b|\blayout\b|\baligned\b"
            r"|\belements?\b|\bcapacity\b|\brow mismatch\b|\bwidth\b|\bheight\b|\bexactly one\b)"
        ),
    ),
    (
        "index-range",
        _linear(
            r"(?i:\bindex\b|out of (range|bounds)|\brange\b|must be in \[|\bpositive\b|must be \d+(?:, \d+)+"
            # a numeric bound ("max_num_batched_tokens must be <= 65528 when LoRA is enabled")
            r"|must be [<>]=? ?\d)"
        ),
    ),
    # the CUDA runtime's own error table, linked statically into a library (libctranslate2): which GPUs a build
    # targets, and the runtime's contexts, not where a tensor is
    ("platform", _linear(r"(?i:\bkernel image\b|dynamic parallelism)")),
    ("internal", _linear(r"(?i:invalid device (?:context|function)|device is active in this process)")),
    # an interop protocol asked of the other kind of array (NumPy's of a CUDA array, CUDA's of a host array)
    ("api-misuse", _linear(r"__(?:cuda_)?array_interface__")),
    ("other-sense", _linear(r"(?i:another device|reserved device name|virtual filesystem)")),
    # a warning about what will change or run slowly, not a check that failed
    ("not-a-check", _linear(r"(?i:will be deprecated|might result in slow)")),
    # about how a command-line option was used, when nothing above says more
    ("api-misuse", _linear(r"^--[a-z]")),
)
_COMPLEX = _linear(r"(?i:\bcomplex\b|\bsparse\b|quantized tensor|\bqint|\bquint|\bmkldnn\b|\bnested tensor)")


@dataclass(frozen=True)
class MinedRow:
    """One mined message (``census/mined/<library>.jsonl``) and how it was triaged."""

    library: str
    version: str
    site: str
    kind: str
    type: str
    template: str
    scope: str
    """``in`` (the KB must recognise it) or one of ``OUT_OF_SCOPE``'s keys."""
    function: str = ""
    """The enclosing function's qualified name (Python sites), empty otherwise."""
    function_raises: int = 0
    """How many raise, assert and check sites that function has, whatever their message."""
    callers: tuple[str, ...] = ()
    """Where the functions of the same file call that function directly: ``Qualified.name:line``."""

    @property
    def text(self) -> str:
        """The template instantiated as a user would paste it: ``Type: message`` (or the message for a warning)."""
        message = instantiate(self.template)
        if self.kind == "warn":
            return message
        error = self.type or ("NotImplementedError" if "not implemented for" in message else "RuntimeError")
        return f"{error}: {message}"


_SHAPE = _linear(
    r"(?i:\bshapes?\b|\bsizes?\b|\bdim(s|ension|ensions)?\b|\brank\b|\brank-\d|\bstrides?\b|contiguous|\bnumel\b"
    r"|\bndim\b|\bdivisible\b|\bdivide\b|\bmultiple of\b|\b\d+D\b|column-major|row-major|\baligned\b)"
)
# A message that names a precision only as a qualifier ("FP4 scale shape must be ...") is about the shape; one that
# speaks of the dtype itself stays ours.
_DTYPE_NOUN = _linear(r"(?i:\bdtypes?\b|scalar.?types?|data.?types?|\bprecision\b|\btype\b|\bsame\b|\bmismatch)")
_COMPILER_IR = _linear(
    r"&& \"|->get\w+\(|\bkLazy\b|failed to satisfy constraint|\bop attribute\b|\bop operand\b|\bop result\b|\bLLVM\b|\bMLIR\b|async token type"
)


_INSTALL = _linear(
    r"(?i:\bpip install\b|please install|\bnot installed\b|\bis not available\. please install|_HOME\b"
    r"|unable to compile|include directory|\bunable to (?:load|warm)\b|\bkernels? (?:is |are )?not available\b"
    r"|package missing)"
)
_LOW_PRECISION = _linear(r"(?i:half|bfloat16|bf16|fp16|float16|fp8|float8)")
_DTYPE_OR_DEVICE = _linear(f"{_DTYPE_WORDS.pattern}|{_DEVICE_WORDS.pattern}")
_SHAPE_OR_DTYPE = _linear(r"(?i:\bshape or dtype\b)")  # a layout check that names the dtype in passing
_BOTH_PASSED = _linear(r"(?i:\bpass(?:ed)? both\b)")
# "precision" as a format's digits or as numerical accuracy, not a dtype.
_NOT_A_PRECISION = _linear(
    r"(?i:precision not allowed for this argument|minor precision differences|JitScalarType object)"
)
# A device-only message raised by an installer script is about what to install.
_INSTALLER_SITE = re.compile(r"(?:^|/)_?(?:auto_)?install\w*\.py:")
# A device-only assert inside the compiler stack (inductor, functorch, fake tensors, torchgen) is an invariant of it.
_COMPILER_SITE = re.compile(r"^(?:torch/(?:_inductor|_functorch|_subclasses|_dynamo|fx)|torchgen)/")
# A device-only message that says where a tensor must be (``must be a CUDA tensor``, ``on the same device``) is a
# placement check whatever else it mentions (a compiler, a capture, a size): the out-of-scope rules do not apply.
_PLACEMENT = _linear(
    r"(?i:\b(?:must|should|expect(?:s|ed)?|requires?|needs?)\b[^\n]{0,40}?\b(?:cpu|cuda|xpu|npu|mps|hpu|meta)\b[^\n]{0,30}?"
    r"\b(?:tensors?|devices?)\b|\bmust be (?:a |an )?(?:cpu|cuda|xpu|npu|mps|hpu)\b|\bsame device|\b(?:on|share|use) one (?:\w+ )?device\b"
    r"|\bon (?:the )?(?:same|expected|destination|its|runtime|one) (?:\w+ )?device\b|\bdevice of (?:the )?data\b"
    r"|\bon (?:two )?different devices\b|\b(?:must|should)\b[^\n]{0,30}?\b(?:(?:be|stay|reside|live) on\b|on (?:the )?(?:cpu|cuda|xpu|npu|mps|hpu)\b)"
    r"|\bmust (?:all )?share\b[^\n]{0,30}?\bdevice\b"
    r"|\bmismatched device\b|\bdevice mismatch\b|\bwrong device\b)"
)


def triage(template: str, site: str = "", kind: str = "", error: str = "") -> str:
    """``in`` when a mined message is ours (a failed check about a dtype, a precision or a device placement),
    else the ``OUT_OF_SCOPE`` key that says why not. ``site`` and ``kind`` (where the miner found it) tell an
    internal assert of the compiler stack; ``error`` (the exception class) an import that failed."""
    if not _CHECK_WORDS.search(_ANY_PLACEHOLDER.sub("{}", template)):
        return "not-a-check"
    if _COMPILER_IR.search(template) or "INTERNAL ASSERT" in template:
        return "internal"
    if error in ("ImportError", "ModuleNotFoundError"):
        return "install-or-build"
    if _INSTALL.search(template):
        return "install-or-build"
    if _BOTH_PASSED.search(template) or (
        template.startswith("--") and not _DTYPE_OR_DEVICE.search(_named(template.split(". ", 1)[0]))
    ):
        # two arguments that exclude each other; how a command-line option was used, a dtype named only in the advice
        return "api-misuse"
    if _SHAPE.search(template) and not _DTYPE_NOUN.search(template):
        return "shape"
    if _COMPLEX.search(template) and not _LOW_PRECISION.search(template):
        return "complex-sparse-quantized"
    if _SHAPE_OR_DTYPE.search(template):
        return "shape"
    if _NOT_A_PRECISION.search(template):
        return "other-sense"
    if _DTYPE_WORDS.search(_named(template)):
        return "in"
    if _DEVICE_WORDS.search(template) and _PLACEMENT.search(template):
        return "in"
    if (kind == "assert" or error == "AssertionError") and _COMPILER_SITE.search(site):
        return "internal"
    if _INSTALLER_SITE.search(site):
        return "install-or-build"
    for reason, rule in _OUT_RULES:
        if rule.search(template):
            return reason
    # What the miner took for a dtype or a device word names something else (``dt_bias``, ``mm_mxfp8``, half of).
    return "in" if _DEVICE_WORDS.search(template) else "other-sense"


# Device before dtype: ``{device_type}`` prints a device. ``type`` alone (a word, not ``quant_type``) is a dtype.
_FILL = (
    (re.compile(r"(?i)device|place|(?<![a-z])loc(?:ation)?(?![a-z])"), "cuda:0"),
    (re.compile(r"(?i)dtype|(?<![a-z_])type\b|precision|scalar"), "BFloat16"),
)


_DTYPE_NAME = re.compile(r"(?i)dtype|scalar|precision")


def _named(template: str) -> str:
    """The template with each named placeholder replaced by what its name says it prints (``dtype``, ``device``) or
    ``x``: a name like ``{nvfp4_backend}`` or ``{FP8_ACCUM_MODE_CHOICES}`` prints a backend or a list of choices, and
    the precision word in it is not what the message says."""

    def word(match: re.Match[str]) -> str:
        name = match.group(1)
        if not name:
            return match.group(0)
        if _DTYPE_NAME.search(name):
            return "dtype"
        return "device" if _FILL[0][0].search(name) else "x"  # a bare {type} is a Python type as often as a dtype

    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)?\}", word, template)


def instantiate(template: str) -> str:
    """A mined template with each ``{placeholder}`` filled: a dtype where the name (or the word before an unnamed
    one) speaks of a type, a device where it speaks of a place, else a short name."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1) or template[max(0, match.start() - 16) : match.start()]
        for rule, value in _FILL:
            if rule.search(name):
                return value
        # a value glued to a word ("FP32{shape}") is printed apart from it ("FP32(4, 8)"), not as one word
        before = " " if match.start() and template[match.start() - 1].isalnum() else ""
        after = " " if template[match.end() : match.end() + 1].isalnum() else ""
        return f"{before}x{after}"

    return re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)?\}", fill, template)


def load_mined(folder: Path) -> list[MinedRow]:
    """Every mined message of ``<folder>/*.jsonl`` (``census/mined``), triaged; empty when nothing was mined."""
    import json

    rows: list[MinedRow] = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                data = json.loads(line)
                rows.append(
                    MinedRow(
                        library=data["library"],
                        version=str(data["version"]),
                        site=data["site"],
                        kind=data["kind"],
                        type=data.get("type") or "",
                        template=data["template"],
                        scope=triage(data["template"], data["site"], data["kind"], data.get("type") or ""),
                        function=data.get("function") or "",
                        function_raises=int(data.get("function_raises") or 0),
                        callers=tuple(data.get("callers") or ()),
                    )
                )
    return rows


def mined_answered(rows: Iterable[MinedRow], catalog: Catalog) -> dict[str, bool]:
    """Whether the KB answers each in-scope mined message, keyed by its text (a wording mined from several releases
    is explained once). :func:`~dtypefix.matcher.explain.answers` stops at the first entry that matches: the whole
    in-scope census costs a few seconds, not the half-minute of a full explanation of each."""
    texts = {row.text for row in rows if row.scope == "in"}
    return {text: answers(text, catalog) for text in sorted(texts)}


def _release_order(library: str, version: str) -> tuple[str, bool, Version | str]:
    """Releases of a library in version order (2.3.1 before 2.13.0), a version PEP 440 cannot read after them."""
    try:
        return library, False, Version(version)
    except InvalidVersion:
        return library, True, version


def mined_summary(mined: list[tuple[MinedRow, bool]]) -> tuple[str, str]:
    """The mined census as Markdown: a section for the census page (per library and version: mined, in scope,
    recognised; out-of-scope reasons) and a page listing every in-scope message nothing recognises."""
    by_release: dict[tuple[str, str], list[tuple[MinedRow, bool]]] = {}
    for row, known in mined:
        by_release.setdefault((row.library, row.version), []).append((row, known))
    in_scope = [(r, t) for r, t in mined if r.scope == "in"]
    recognised = sum(1 for _, t in in_scope if t)
    share = f"{100 * recognised / len(in_scope):.1f} %" if in_scope else "—"
    section = [
        "## Mined from the released code",
        "",
        f"`kbtools/miner.py` read {len(by_release)} releases (wheels, an sdist, tags; `census/mined/sources.yaml` "
        f"says which, and why a library could not be read) and kept {len(mined)} raise sites, checks, asserts, "
        f"warnings and compiled strings whose message speaks of a dtype, a precision or a device. {len(in_scope)} are "
        f"in scope (a failed check about a dtype, a precision or a device placement); {recognised} of them "
        f"({share}) get an answer when instantiated and explained (`tests/test_census.py` fails on any that does "
        "not); [census-mined.md](census-mined.md) lists those that do not. Out of scope, by reason: "
        + ", ".join(
            f"{reason} {sum(1 for r, _ in mined if r.scope == reason)}"
            for reason in OUT_OF_SCOPE
            if any(r.scope == reason for r, _ in mined)
        )
        + " (reasons: "
        + "; ".join(f"`{k}`: {v}" for k, v in OUT_OF_SCOPE.items())
        + ").",
        "",
        "| library | version | mined | in scope | recognised | share |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for (library, version), rows in sorted(by_release.items(), key=lambda item: _release_order(*item[0])):
        scoped = [t for r, t in rows if r.scope == "in"]
        good = sum(1 for t in scoped if t)
        pct = f"{100 * good / len(scoped):.1f} %" if scoped else "—"
        section.append(f"| {library} | {version} | {len(rows)} | {len(scoped)} | {good} | {pct} |")
    missed = [
        "# Mined messages not yet recognised",
        "",
        'In-scope messages of `census/mined/` that meet "no known cause" when instantiated '
        "(`kbtools/census.py`, `instantiate`). Each is a wording for an entry to learn.",
        "",
        "| library | version | site | message |",
        "| --- | --- | --- | --- |",
    ]
    for row, known in in_scope:
        if not known:
            text = row.text[:200].replace("|", "\\|").replace("`", "'")
            missed.append(f"| {row.library} | {row.version} | {row.site.replace('|', '/')} | `{text}` |")
    return "\n".join(section) + "\n", "\n".join(missed) + "\n"


# A raise about a dtype or a device: in scope, or raised without a check word ("Attempting to unscale FP16
# gradients.", "Bfloat16 is only supported on GPUs with compute capability of at least 8.0"). The other reasons
# (shape, install, API misuse, internal) are the function's other failures.
_RAISED_OURS = ("in", "not-a-check")


def _as_raised(row: MinedRow) -> list[str]:
    """``[type, template]``, and the template instantiated when it has placeholders: what the matcher reads."""
    text = instantiate(row.template)
    return [row.type or "RuntimeError", row.template, *([text] if text != row.template else [])]


def _python_raises(rows: Iterable[MinedRow]) -> Iterator[tuple[str, MinedRow]]:
    """The raise, assert and check sites inside a Python function (not a warning, not a compiled string), with the
    file path in the release: what a traceback's frame can stop in."""
    for row in rows:
        path = row.site.rsplit(":", 1)[0]
        if row.function and path.endswith(".py") and row.kind != "warn":
            yield path, row


def raise_index(rows: Iterable[MinedRow]) -> dict[str, dict[str, list[list[str]]]]:
    """Which dtype / device messages each library function raises, for a paste cut inside it (``census/raises.json``,
    read by :mod:`dtypefix.matcher.cut`): ``{file path in the release: {function: [[type, template] or [type,
    template, instantiated message], ...]}}``.

    Keyed by the function's own name, not its qualified one: a traceback prints only ``co_name`` (two methods of
    one name in one file share a key, and must both qualify). A function is left out when, in any release mined,
    it has raise or check sites beyond those messages (a shape check, a message without a dtype word): a paste cut
    inside it may be raising one of those, so it says nothing."""
    sites: dict[tuple[str, str, str], list[MinedRow]] = {}
    for path, row in _python_raises(rows):
        sites.setdefault((path, row.function, row.version), []).append(row)
    found: dict[tuple[str, str], list[list[str]]] = {}
    others: set[tuple[str, str]] = set()
    for (path, function, _), mined in sorted(sites.items()):
        key = (path, function.rsplit(".", 1)[-1])
        ours = [r for r in mined if r.scope in _RAISED_OURS]
        # the function's sites in this release beyond ours (out of scope, or no dtype word: never mined)
        if not ours or mined[0].function_raises > len({r.site for r in ours}):
            others.add(key)
            continue
        messages = found.setdefault(key, [])
        for row in ours:
            message = _as_raised(row)
            if message not in messages:
                messages.append(message)
    index: dict[str, dict[str, list[list[str]]]] = {}
    for (path, function), messages in found.items():
        if (path, function) not in others:
            index.setdefault(path, {})[function] = messages
    return index


def callee_index(rows: Iterable[MinedRow]) -> dict[str, dict[str, list[Any]]]:
    """The one dtype / device message a library function reaches through a function it calls, for a paste cut in
    that caller before its callee's frames (``census/calls.json``, read by :mod:`dtypefix.matcher.cut`):
    ``{file path in the release: {caller: [callee, [type, template(, instantiated message)], [call lines]]}}``.

    One level only, within one file (the miner's ``callers``: ``self.x()`` from a method of the class, ``x()`` for a
    module-level function), with the lines where the releases mined make the call. A caller is left out when, in any
    release mined, it raises a dtype / device message itself, or its callees raise more than one such message, or
    one that is out of scope: the guess must leave one message. Its other failures (a shape check, a state check)
    may still be what was raised, which is why the matcher proposes the answer at low confidence and says it looked
    one call deeper than the paste."""
    own: set[tuple[str, str]] = set()
    reached: dict[tuple[str, str], list[tuple[str, int, MinedRow]]] = {}
    for path, row in _python_raises(rows):
        own.add((path, row.function.rsplit(".", 1)[-1]))
        for call in row.callers:
            caller, _, line = call.rpartition(":")
            if caller != row.function:
                reached.setdefault((path, caller.rsplit(".", 1)[-1]), []).append((row.function, int(line), row))
    index: dict[str, dict[str, list[Any]]] = {}
    for (path, caller), found in sorted(reached.items()):
        callees = {function.rsplit(".", 1)[-1] for function, _, _ in found}
        templates = {row.template for _, _, row in found}
        if (path, caller) in own or len(callees) != 1 or len(templates) != 1:
            continue
        if any(row.scope not in _RAISED_OURS for _, _, row in found):
            continue
        lines = sorted({line for _, line, _ in found})
        index.setdefault(path, {})[caller] = [callees.pop(), _as_raised(found[0][2]), lines]
    return index
