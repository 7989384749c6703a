"""GPU facts: which cards, which compute capability, and how the process was told to order them.

bf16 needs compute capability 8.0, FP8 needs 8.9, and a mixed box (a TITAN RTX beside a GTX 1080 Ti) fails in
ways a single card does not. Logs rarely state the capability, but they do name the card, so names are mapped
to capabilities with a table of the cards people train on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .regex import LazyRegex, lazy_regex
from .source import lines_containing

__all__ = ["Gpu", "Hardware", "compute_capability", "gpus", "parse_hardware", "required_capability", "sm"]

# (pattern on the card's name, compute capability), from NVIDIA's list https://developer.nvidia.com/cuda-gpus and its
# legacy page https://developer.nvidia.com/cuda-legacy-gpus. First match wins: specific names before families. Only
# names that say one capability: "GTX 960M" is Maxwell 5.0 while "GTX 960" is 5.2, "GeForce GTX TITAN X" is Maxwell
# 5.2 while "NVIDIA TITAN X" is Pascal 6.1, and "Jetson T4000" is no T4; a name the table does not match stays
# unknown (:attr:`Hardware.unmapped`) rather than guessed.
_CAPABILITIES: tuple[tuple[LazyRegex, float], ...] = tuple(
    (lazy_regex(pattern, re.IGNORECASE), cc)
    for pattern, cc in (
        (r"\bGB10\b", 12.1),
        (r"RTX\s*50[5-9]0(?!\d)|RTX\s*PRO\s*\d{4}\s*Blackwell", 12.0),
        (r"\bGB300\b|\bB300\b", 10.3),
        (r"Jetson\s*T[45]000\b", 11.0),
        (r"\bB200\b|\bGB200\b", 10.0),
        (r"\bH100\b|\bH200\b|\bGH200\b", 9.0),
        (r"RTX\s*40[5-9]0(?!\d)|RTX\s*\d+\s*(?:SFF\s*)?Ada|\bL40S?\b|\bL4\b", 8.9),
        (r"\bA100\b|\bA30\b", 8.0),
        (r"RTX\s*30[5-9]0(?!\d)|\bA40\b|\bA10\b|\bA16\b|\bA2\b|RTX\s*A\d{4}|\bA\d000\b", 8.6),
        (r"\bAGX Orin\b|\bOrin\b", 8.7),
        (r"TITAN\s*RTX|RTX\s*20\d0|\bT4\b|Quadro\s*RTX|GTX\s*16\d0", 7.5),
        (r"\bXavier\b", 7.2),
        (r"TITAN\s*V\b|\bV100S?\b|Quadro\s*GV100", 7.0),
        (r"\bP100\b|Quadro\s*GP100", 6.0),
        (r"GTX\s*TITAN\s*X\b(?!p)(?!\s*\(Pascal)", 5.2),  # the Maxwell card; "NVIDIA TITAN X (Pascal)" is 6.1
        (r"GTX\s*10\d0|TITAN\s*Xp|TITAN\s*X\b|\bP40\b|\bP4\b|Quadro\s*P\d+", 6.1),
        (r"GTX\s*9[5-8]0(?!\d)(?!\s*M\b)|GTX\s*9(?:65|70|80)\s*M\b|\bM40\b|\bM60\b", 5.2),
        (r"GTX\s*9[56]0\s*M\b|GTX\s*750(?!\d)", 5.0),
        (r"\bK80\b", 3.7),
        (r"\bK40\b|\bK20\b", 3.5),
        # Not on NVIDIA's list (variants sold to one market or one cloud): the capability their machines print
        # (``nvidia-smi --query-gpu=name,compute_cap``: "NVIDIA A800 80GB PCIe, 8.0", "NVIDIA L20, 8.9", "NVIDIA A10G,
        # 8.6"; torch's warning: "NVIDIA H800 with CUDA capability sm_90", "NVIDIA H20 with CUDA capability sm_90").
        (r"\bH800\b|\bH20\b", 9.0),
        (r"\bL20\b", 8.9),
        (r"\bA10G\b", 8.6),
        (r"\bA800\b", 8.0),
    )
)
_GPU_LINES = (
    # collect_env, nvidia-smi -L; sglang's check_env prints one line for several GPUs of one model ("GPU 0,1: NVIDIA A10")
    lazy_regex(r"^GPU \d+(?:,\d+)*: (?P<name>.+?)(?: \(UUID: [^)]*\))?$"),
    lazy_regex(r"^\|\s+\d+\s+(?P<name>(?:NVIDIA|Tesla|Quadro|GeForce|TITAN)[^|]*?)\s+(?:On|Off)\s+\|"),  # nvidia-smi
    lazy_regex(r"^[-*\s]*GPU (?:type|name|model)s?:\s*(?P<name>.+)$", re.IGNORECASE),  # accelerate / transformers env
    lazy_regex(r"Found GPU\d+ (?P<name>.+?) which (?:is of|requires) cuda capability", re.IGNORECASE),
    # vLLM's bf16 check names the GPU it refused; Triton's check in torch.compile the one it found too old; torch
    # warns of a GPU its build has no kernels for
    lazy_regex(r"\bYour (?P<name>.+?) GPU (?:has|does not have a) compute capability"),
    lazy_regex(r"\bFound (?P<name>.+?) which is too old to be supported by the triton GPU compiler"),
    lazy_regex(
        r"(?P<name>(?:NVIDIA|Tesla|Quadro|GeForce|TITAN)\b[^`:]*?) with CUDA capability sm_\d+ is not compatible"
    ),
    lazy_regex(r"GPU (?:device )?name:\s*(?P<name>.+)$", re.IGNORECASE),
    lazy_regex(r"^GPU models and configuration:\s*(?P<name>(?:NVIDIA|Tesla|Quadro|GeForce|TITAN).+)$"),
    # ``nvidia-smi --query-gpu=name,compute_cap --format=csv``'s rows, unsloth's banner, YOLOv5's / Ultralytics' banner,
    # a script's own ``print(f"Using device: {torch.cuda.get_device_name()}")`` ("CUDA device: …", "Running on …")
    lazy_regex(r"^(?P<name>(?:NVIDIA|Tesla|Quadro|GeForce|TITAN)\b[^,]*), \d{1,2}\.\d$"),
    lazy_regex(r"\bGPU: (?P<name>.+?)\. Max memory: "),
    lazy_regex(r"\bCUDA:\d+ \((?P<name>[^,()]+), \d+MiB\)"),
    lazy_regex(
        r"\b(?:[Uu]sing (?:device|GPU)|CUDA device|[Dd]evice name|get_device_name\(\d*\)|[Rr]unning on(?: GPU)?)"
        r"\s*[:：=]?\s*(?P<name>(?:NVIDIA|Tesla|Quadro|GeForce|TITAN)\b[^,;()]*?)\s*$"
    ),
    lazy_regex(
        r"^[-*\s]*(?:GPUs?|Hardware|Device)\s*(?:\(s\))?\s*[:：]\s*(?P<name>.+)$", re.IGNORECASE
    ),  # issue templates
)
# "compute capability 7.5", "cuda capability 3.7", "sm_86", "Highest compute capability among GPUs detected: 6.1".
_CAPABILITY_TEXT = lazy_regex(
    r"(?:capability\D{0,40}?|sm_?)\(?(?P<major>\d{1,2})[.,]?\s?(?P<minor>\d)\)?(?!\d)",
    re.IGNORECASE,
)
# In a line that states a requirement, only the part that reports the machine: "Current capability: 70",
# "Your Tesla T4 GPU has compute capability 7.5", "your device is of CUDA capability 6.1", accelerate's "The current
# device has compute capability of (8, 0)", transformers' "actual = `8.0`", axolotl's "Detected 'sm_89'".
_CURRENT_CAPABILITY = lazy_regex(
    r"(?:(?:current(?: device has)?|your\b[^.]{0,60}?\b(?:has|is of))\s+(?:compute\s+|cuda\s+)?capability(?:\s+of)?\s*:?\s*"
    r"|your GPU's (?:compute )?capability is\s*|\bactual = `?|\bDetected '?sm_?)"
    r"\(?(?P<major>\d{1,2})[.,]?\s?(?P<minor>\d)\)?(?!\d)",
    re.IGNORECASE,
)
# Lines that can name a GPU or a capability; the per-line patterns run only on these.
_CANDIDATE = lazy_regex(r"GPU|[Cc]apabilit|sm_\d|NVIDIA|Tesla|Device|Hardware")
_GPU_WORDS = lazy_regex(r"NVIDIA|GeForce|Tesla|Quadro|TITAN|\bRTX|\bGTX|Radeon|Instinct|\bMI\d{2,3}\b", re.IGNORECASE)
# A line that states what a check requires (or what a build supports: torch's "The current PyTorch install supports
# CUDA capabilities sm_50 sm_60 ..." lists no GPU of the machine).
_REQUIREMENT = lazy_regex(
    r"or (?:higher|newer|above|later)|at least|requires?|required|only supported|minimum|>=|>|below|not supported|need"
    r"|install supports"
)
_VISIBLE = lazy_regex(r"CUDA_VISIBLE_DEVICES\W{0,3}\s*=\s*[\"']?(?P<value>[\d, ]+|\w+)")
_ORDER = lazy_regex(r"CUDA_DEVICE_ORDER\W{0,3}\s*=\s*[\"']?(?P<value>PCI_BUS_ID|FASTEST_FIRST)")
# A drive-letter path with a further folder (``E:\Anaconda\envs``, ``c:\Users``; three characters at least, so that an
# escape sequence in a printed code line, ``"a:\tb\n"``, is no path), a package folder written with backslashes
# (``.conda\Lib\site-packages\`` when the paste starts below the drive), a script run as ``.\x.py``, a wheel,
# interpreter or platform tag.
_WINDOWS = lazy_regex(
    r"\b[A-Za-z]:\\\\?[\w .~$-]{3,}\\|\\(?:Lib|lib)\\site-packages\\|\\site-packages\\\w|struct c10::|OS: Microsoft Windows"
    r"|\bwin_amd64\b|\bon win32\b|Platform: Windows-|File \"\.\\[\w.-]"
)
_MACOS = lazy_regex(r"OS: macOS|/Users/[^/\s]+/|\bMPS\b|mps:0|darwin", re.IGNORECASE)
# nvidia-smi's table row ("|    2079MiB /   6144MiB |") and torch's out-of-memory message ("GPU 0 has a total
# capacity of 79.18 GiB"): the two places a log states how much memory a GPU has.
_MEMORY_LINE = lazy_regex(r"MiB\s*/|total capacity of")
_SMI_MEMORY = lazy_regex(r"\b\d+MiB\s*/\s*(?P<mib>\d+)MiB\b")
_OOM_CAPACITY = lazy_regex(r"\bGPU \d+ has a total capacity of (?P<gib>\d+(?:\.\d+)?) GiB")
_MPS = lazy_regex(r"\bmps:0\b|device\(type='mps'|\bMPS backend\b|on device: mps|torch\.backends\.mps")


@dataclass(frozen=True)
class Hardware:
    """What the input says about the machine; empty fields mean it said nothing."""

    gpu_names: tuple[str, ...]
    """One name per listed GPU, in the order printed."""
    capabilities: tuple[float, ...]
    """Compute capabilities printed or known from the names."""
    unmapped: tuple[str, ...]
    """Names whose capability the table does not know: the minimum and maximum are then uncertain."""
    cuda_visible_devices: str | None
    cuda_device_order: str | None
    os: str | None
    """``linux``, ``windows`` or ``macos`` when the input shows it."""
    mps: bool
    """The MPS (Apple) backend appears in the input."""
    memory_gib: tuple[float, ...] = ()
    """Total memory of each GPU whose size the input states (``nvidia-smi``'s table, torch's out-of-memory
    message), in GiB as printed; empty when none is stated."""
    stated: tuple[float, ...] = ()
    """The compute capabilities the input prints for this machine (part of :attr:`capabilities`, which adds those the
    table gives the names)."""


@dataclass(frozen=True)
class Gpu:
    """One GPU model of the machine, as the input names it."""

    name: str
    """As printed (``Tesla V100-SXM2-32GB``); empty when the input prints a capability but no name."""
    capability: float | None
    """Its compute capability, as printed or from the table; ``None`` when neither gives it."""


def gpus(hardware: Hardware) -> tuple[Gpu, ...]:
    """The machine's GPU models, each once, in the order printed: what a refusal of the GPU is shown against.

    A name that another extends by its board (``Tesla V100`` beside ``Tesla V100-SXM2-32GB``, ``NVIDIA A800`` beside
    ``NVIDIA A800 80GB PCIe``) is that model. The capability the input prints is the one of a machine with one model
    (vLLM's "Your Tesla T4 GPU has compute capability 7.5"), unless the table says otherwise for its name (then neither
    is shown), and it alone, without a name, when it prints one value only; a machine with several models gets the
    table's value for each. Several different printed values and no name say nothing that could be shown as this
    machine's."""
    names: list[str] = []
    for name in hardware.gpu_names:
        if any(_extends(n, name) for n in names):
            continue
        names = [n for n in names if not _extends(name, n)] + [name]
    stated = set(hardware.stated)
    one = stated.pop() if len(stated) == 1 else None
    if not names:
        return (Gpu("", one),) if one is not None else ()
    if len(names) == 1:
        known = compute_capability(names[0])
        return (Gpu(names[0], known if one is None else one if known in (None, one) else None),)
    return tuple(Gpu(n, compute_capability(n)) for n in names)


def _extends(longer: str, shorter: str) -> bool:
    """``longer`` is ``shorter`` with its board or memory after it (``-SXM2-32GB``, `` 80GB PCIe``), or the same."""
    a, b = _bare(longer), _bare(shorter)
    return a == b or (a.startswith(b) and bool(re.match(r"-|\s+\d+\s*gb\b", a[len(b) :])))


def _bare(name: str) -> str:
    return re.sub(r"^(?:NVIDIA\s+)?(?:GeForce\s+)?", "", name.strip(), flags=re.IGNORECASE).lower()


def sm(capability: float) -> str:
    """A compute capability as the architecture flags write it: 7.5 -> ``sm_75``, 12.0 -> ``sm_120``."""
    return f"sm_{round(capability * 10)}"


# What a check requires, as its message or source says it: "8.0", "9.x", ">= 9.0 or 8.9", "≥8.9", "(8, 0)", "sm_90",
# "arch < 89", "Minimum capability: 75", or an architecture by the first compute capability NVIDIA gives it.
_REQUIRED = lazy_regex(
    r"\((?P<tmajor>\d{1,2}),\s*(?P<tminor>\d)\)|\b(?P<major>\d{1,2})\.(?P<minor>\d|x)\b|sm_?(?P<sm>\d{2,3})\b"
    r"|(?<![\d.])(?P<bare>\d{2,3})\b|\b(?P<arch>Volta|Turing|Ampere|Ada|Hopper|Blackwell)\b",
    re.IGNORECASE,
)
_ARCHITECTURES = {"volta": 7.0, "turing": 7.5, "ampere": 8.0, "ada": 8.9, "hopper": 9.0, "blackwell": 10.0}


def required_capability(text: str) -> float | None:
    """The lowest compute capability ``text`` requires (a check that takes "9.0 or 8.9" takes 8.9), or ``None``."""
    found: list[float] = []
    for m in _REQUIRED.finditer(text):
        if m["tmajor"]:
            found.append(float(f"{m['tmajor']}.{m['tminor']}"))
        elif m["major"]:
            found.append(float(f"{m['major']}.{m['minor'].replace('x', '0').replace('X', '0')}"))
        elif m["sm"] or m["bare"]:
            found.append(int(m["sm"] or m["bare"]) / 10)
        else:
            found.append(_ARCHITECTURES[m["arch"].lower()])
    return min(found, default=None)


def _memory(text: str) -> tuple[float, ...]:
    sizes: list[float] = []
    for line in lines_containing(_MEMORY_LINE, text):
        sizes += [round(int(m["mib"]) / 1024, 2) for m in _SMI_MEMORY.finditer(line)]
        sizes += [float(m["gib"]) for m in _OOM_CAPACITY.finditer(line)]
    return tuple(sizes)


def compute_capability(name: str) -> float | None:
    """The compute capability of a card by its marketing name, when the table knows it."""
    for pattern, capability in _CAPABILITIES:
        if pattern.search(name):
            return capability
    return None


def parse_hardware(text: str) -> Hardware:
    """Collect GPU names, capabilities, device-order settings and the OS from ``text``."""
    names: list[str] = []
    printed: list[float] = []
    for line in lines_containing(_CANDIDATE, text):
        stripped = line.strip()
        if not stripped or len(stripped) > 300:
            continue
        for pattern in _GPU_LINES:
            match = pattern.search(stripped)
            if match:
                for part in re.split(r"[,/;]| and |\+", match["name"]):
                    part = part.strip()
                    if part and (compute_capability(part) is not None or _GPU_WORDS.search(part)):
                        names.append(part)
                break
        lowered = stripped.lower()
        # Only lines that report the machine; error messages state requirements ("8.0 or higher").
        if "capabilit" in lowered or "sm_" in stripped:
            reading = _CURRENT_CAPABILITY if _REQUIREMENT.search(lowered) else _CAPABILITY_TEXT
            for cap in reading.finditer(stripped):
                printed.append(float(f"{cap['major']}.{cap['minor']}"))
    known = [c for c in (compute_capability(n) for n in names) if c is not None]
    unmapped = tuple(n for n in names if compute_capability(n) is None)
    visible = _VISIBLE.findall(text)
    order = _ORDER.findall(text)
    # Substring checks first: these regexes would otherwise scan megabytes of training output.
    if (
        "struct c10::" in text
        or "Microsoft Windows" in text
        or (("\\" in text or "win" in text or "Windows" in text) and _WINDOWS.search(text))
    ):
        os_name: str | None = "windows"
    elif (
        "OS: Ubuntu" in text
        or "/home/" in text
        or "Linux" in text
        or "/usr/lib/python" in text
        or "/dist-packages/" in text
    ):
        os_name = "linux"
    elif ("macOS" in text or "/Users/" in text or "mps" in text or "MPS" in text or "darwin" in text) and _MACOS.search(
        text
    ):
        os_name = "macos"
    else:
        os_name = None
    mps = ("mps" in text or "MPS" in text) and bool(_MPS.search(text))
    return Hardware(
        memory_gib=_memory(text),
        gpu_names=tuple(names),
        unmapped=unmapped,
        capabilities=tuple(known + printed),
        stated=tuple(printed),
        cuda_visible_devices=visible[-1].strip() if visible else None,
        cuda_device_order=order[-1] if order else None,
        os=os_name,
        mps=mps,
    )
