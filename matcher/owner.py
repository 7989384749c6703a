"""Whose code a traceback frame is: an installed package, an application run from its git checkout (ComfyUI,
stable-diffusion-webui), a model repository's remote code, a notebook cell, or the user's own script.

The first fix a person should try depends on it: a cast at the line when the line is theirs, an upgrade or the
library's own setting when it is a library's, the model revision when it is ``trust_remote_code`` code.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from .packages import PackageVersion
from .regex import LazyRegex, lazy_regex

__all__ = ["Owner", "OwnerKind", "owner_of"]


class OwnerKind(str, Enum):
    """What kind of code a frame belongs to."""

    USER = "user"
    """A file outside any installed package: the user's script, or a project checkout they run."""
    PACKAGE = "package"
    """An installed package (``site-packages/<pkg>/``) or a package's source checkout (``src/<pkg>/``)."""
    APPLICATION = "application"
    """An application people run from its git checkout rather than install (``ComfyUI/comfy/utils.py``,
    ``stable-diffusion-webui/modules/devices.py``): not under ``site-packages``, yet not the user's code either."""
    REMOTE = "remote"
    """A model repository's own modeling code, loaded with ``trust_remote_code`` (``transformers_modules/<model>/``)."""
    NOTEBOOK = "notebook"
    """A Jupyter / IPython cell."""
    INTERNAL = "internal"
    """The interpreter's own frames (``<frozen runpy>``, ``<string>``) and its standard library
    (``lib/python3.9/threading.py``): nobody's code to fix."""


@dataclass(frozen=True)
class Owner:
    """Whose code one frame is."""

    kind: OwnerKind
    name: str = ""
    """The distribution name (``flash-attn``), the application (``ComfyUI``), the model (``Baichuan2-7B-base``), or
    empty."""
    version: str = ""
    """The installed version when the input gave one (freeze, ``--this-env``, ``collect_env``, a banner)."""
    path: str = ""
    """The file's path inside the package, application or model repository (``models/llama/modeling_llama.py``)."""


# Import names whose distribution is spelled differently (PEP 503 names, as :mod:`.packages` stores them).
_DISTRIBUTIONS = {
    "flash_attn": "flash-attn",
    "flash_attn_interface": "flash-attn",
    "liger_kernel": "liger-kernel",
    "transformer_engine": "transformer-engine",
    "unsloth_zoo": "unsloth-zoo",
    "pytorch_lightning": "pytorch-lightning",
    "lightning_fabric": "lightning-fabric",
    "llamafactory": "llamafactory",
    "sklearn": "scikit-learn",
    "cv2": "opencv-python",
    "PIL": "pillow",
    "yaml": "pyyaml",
}
_INSTALLED = lazy_regex(
    r"(?:^|[\\/])(?:site|dist)-packages[\\/](?P<pkg>[\w.-]+?)(?:-[\d.]+[^\\/]*\.egg)?[\\/](?P<rest>.*)$"
)
_SINGLE_MODULE = lazy_regex(r"(?:^|[\\/])(?:site|dist)-packages[\\/](?P<module>\w+)\.py$")
_REMOTE = lazy_regex(r"[\\/]transformers_modules[\\/](?P<rest>.+)$")
_NOTEBOOK = lazy_regex(r"^(?:<cell>|<ipython-input-[\w-]+>|/tmp/ipykernel_\d+/\d+\.py)$|[\\/]ipykernel_\d+[\\/]")
# A ComfyUI custom node (``ComfyUI/custom_nodes/ComfyUI-IPAdapter-Flux/attention_processor.py``): a third-party
# project cloned into ComfyUI, not the user's code; its fix is the node's update or its author's.
_CUSTOM_NODE = lazy_regex(r"[\\/]custom_nodes[\\/](?P<node>[^\\/]+)[\\/](?P<rest>.+)$")
# An extension cloned into stable-diffusion-webui (``stable-diffusion-webui/extensions/sd-webui-additional-networks/``):
# likewise its author's project; the webui's own ``extensions-builtin/`` are the webui's code.
_WEBUI_EXTENSION = lazy_regex(
    r"(?:^|/)stable-diffusion-webui[^/]*/extensions/(?P<node>[^/]+)/(?P<rest>.+)$", re.IGNORECASE
)


@dataclass(frozen=True)
class _Application:
    """An application run from its checkout, known by the checkout folder's name together with the layout inside it:
    neither a bare ``modules/`` nor a bare ``utils.py`` says whose code a file is."""

    name: str
    pattern: LazyRegex
    """The checkout folder and the path inside it (group ``rest``), on ``/``-separated paths."""


def _application(name: str, folder: str, layout: str) -> _Application:
    return _Application(name, lazy_regex(rf"(?:^|/)(?:{folder})/(?P<rest>(?:{layout}))$", re.IGNORECASE))


_APPLICATIONS = (
    # ComfyUI's checkout (also inside ComfyUI_windows_portable, StabilityMatrix's Packages, the desktop app's
    # resources), and the ComfyUI-aki bundle whose folder keeps its own name.
    _application(
        "ComfyUI",
        r"comfyui|comfyui-aki[\w.-]*",
        r"(?:comfy|comfy_extras|comfy_execution|comfy_api|comfy_api_nodes)/.+"
        r"|(?:execution|nodes|main|server|folder_paths|latent_preview|node_helpers)\.py",
    ),
    # Forge and reForge keep the webui's layout and add their own folders; the one-click package names the checkout
    # ``webui`` inside ``webui_forge_cu121_torch231``.
    _application(
        "stable-diffusion-webui-forge",
        r"stable-diffusion-webui-(?:re)?forge[\w.-]*|webui_forge[\w.-]*/webui",
        r"(?:modules|modules_forge|extensions-builtin|ldm_patched|backend)/.+|(?:webui|launch)\.py",
    ),
    _application(
        "stable-diffusion-webui",
        r"stable-diffusion-webui[\w.-]*",
        r"(?:modules|extensions-builtin)/.+|(?:webui|launch)\.py",
    ),
    _application(
        "text-generation-webui",
        r"text-generation-webui[\w.-]*",
        r"(?:modules|extensions)/.+|(?:server|one_click)\.py",
    ),
    # kohya-ss/sd-scripts: its training scripts at the top, ``library/`` and ``networks/`` beside them; kohya_ss (the
    # GUI) held them at its own top before it took sd-scripts in as a submodule.
    _application(
        "sd-scripts",
        r"sd[-_]scripts[\w.-]*",
        r"(?:library|networks)/.+|\w*train\w*\.py|fine_tune\.py",
    ),
    _application("kohya_ss", r"kohya_ss", r"(?:library|kohya_gui)/.+|\w*train\w*\.py"),
    _application("OneTrainer", r"onetrainer", r"(?:modules|scripts)/.+"),
)
_INTERNAL = lazy_regex(r"^<(?:frozen [\w.]+|string|stdin|module)>$")
# The launcher pip writes for a package's console script: ``Scripts\whisperx.exe\__main__.py`` on Windows,
# ``<env>/bin/accelerate`` (no suffix) elsewhere. Its one line is ``sys.exit(main())``: nobody's code to fix, and not
# the user's call either.
_LAUNCHER = lazy_regex(r"[\\/]Scripts[\\/][\w.-]+\.exe[\\/]__main__\.py$|[\\/]bin[\\/][\w-]+$")
# The standard library of a Python install (``/usr/lib/python3.11/``, a conda env's ``lib/python3.10/``, Windows'
# ``\Lib\``), checked after ``site-packages``, which lies inside it.
_STDLIB = lazy_regex(r"[\\/](?:lib[\\/]python\d\.\d+|Lib)[\\/][\w./\\-]+\.py$")
# Packages of the training stack, recognised by their import name as a folder of the path even outside
# ``site-packages`` (``pip install --target``, a source checkout): ``/tmp/site/liger_kernel/ops/...``. A folder of
# any other name outside ``site-packages`` is the user's own project layout.
_STACK = frozenset(
    {
        "transformers", "diffusers", "accelerate", "peft", "trl", "deepspeed", "vllm", "torchao", "liger_kernel",
        "flash_attn", "bitsandbytes", "transformer_engine", "xformers", "unsloth", "unsloth_zoo", "triton", "apex",
        "axolotl", "llamafactory", "pytorch_lightning", "lightning",
    }
)  # fmt: skip


# Folders of a package's source checkout that are no part of the package: a script run from ``lightning/examples/``
# is the user's own copy of an example, not the library.
_NOT_PACKAGE_CODE = frozenset({"examples", "example", "scripts", "tests", "test", "benchmarks", "docs", "tools"})


def _distribution(import_name: str) -> str:
    return _DISTRIBUTIONS.get(import_name, import_name.replace("_", "-").lower())


def owner_of(path: str, packages: Mapping[str, PackageVersion] | None = None) -> Owner:
    """The owner of the frame whose file is ``path``; ``packages`` (the incident's) gives installed versions."""
    packages = packages or {}
    normalized = path.replace("\\", "/")
    if _INTERNAL.match(path):
        return Owner(OwnerKind.INTERNAL)
    if _LAUNCHER.search(path):
        return Owner(OwnerKind.INTERNAL, "", "", normalized.rsplit("/", 1)[-1])
    if _NOTEBOOK.search(normalized):
        return Owner(OwnerKind.NOTEBOOK)
    remote = _REMOTE.search(normalized)
    if remote:
        parts = remote["rest"].split("/")
        model = "/".join(parts[:-1]) or parts[0]
        return Owner(OwnerKind.REMOTE, model, "", parts[-1])
    installed = _INSTALLED.search(normalized)
    if installed:
        name = _distribution(installed["pkg"])
        return Owner(OwnerKind.PACKAGE, name, _version(name, packages), installed["rest"])
    single = _SINGLE_MODULE.search(normalized)
    if single:
        name = _distribution(single["module"])
        return Owner(OwnerKind.PACKAGE, name, _version(name, packages), f"{single['module']}.py")
    node = _CUSTOM_NODE.search(normalized)
    if node:
        return Owner(OwnerKind.PACKAGE, node["node"], _version(node["node"].lower(), packages), node["rest"])
    extension = _WEBUI_EXTENSION.search(normalized)
    if extension:
        name = extension["node"]
        return Owner(OwnerKind.PACKAGE, name, _version(name.lower(), packages), extension["rest"])
    for app in _APPLICATIONS:
        found = app.pattern.search(normalized)
        if found:
            return Owner(OwnerKind.APPLICATION, app.name, _version(app.name.lower(), packages), found["rest"])
    if _STDLIB.search(path) or _stdlib_module(normalized):
        return Owner(OwnerKind.INTERNAL, "", "", normalized.rsplit("/", 1)[-1])
    for match in _folders(normalized):
        if match[0] in _STACK and match[1].split("/", 1)[0] not in _NOT_PACKAGE_CODE:
            name = _distribution(match[0])
            return Owner(OwnerKind.PACKAGE, name, _version(name, packages), match[1])
    checkout = _checkout(normalized)
    if checkout is not None:
        name = checkout[0].lower()
        return Owner(OwnerKind.PACKAGE, name, _version(name, packages), checkout[1])
    return Owner(OwnerKind.USER, "", "", normalized.rsplit("/", 1)[-1])


def _stdlib_module(path: str) -> bool:
    """A standard-library module right under an install's ``lib`` folder, as Windows conda envs lay it out
    (``G:\\envs\\x\\lib\\runpy.py``, no ``python3.x`` folder)."""
    parts = path.rsplit("/", 2)
    return len(parts) == 3 and parts[1].lower() == "lib" and parts[2].removesuffix(".py") in sys.stdlib_module_names


def _folders(path: str) -> list[tuple[str, str]]:
    """``(folder, rest of the path)`` for every folder of ``path``, innermost first (a checkout's ``src/diffusers``
    rather than the checkout folder also called ``diffusers``)."""
    parts = path.split("/")
    return [(parts[i], "/".join(parts[i + 1 :])) for i in reversed(range(len(parts) - 1))]


# Checkouts whose folder is the repository's name, not the distribution's: ``repos/pytorch/torch/nn/modules/conv.py``.
_REPOSITORY_PACKAGES = {"pytorch": "torch"}


def _checkout(path: str) -> tuple[str, str] | None:
    """``(distribution, rest of the path)`` for a file of a project's checkout whose folder is spelled as its
    distribution (with a hyphen) and holds the import package: ``faster-whisper/faster_whisper/transcribe.py`` (or
    ``…/src/faster_whisper/…``) is faster-whisper's code, not the script run beside it; likewise PyTorch's own
    checkout (``pytorch/torch/…``), where its developers reproduce a report."""
    parts = path.split("/")
    for i in reversed(range(1, len(parts) - 1)):
        dist = parts[i - 2] if parts[i - 1] == "src" and i >= 2 else parts[i - 1]
        if "-" in dist and dist.replace("-", "_") == parts[i]:
            return dist, "/".join(parts[i + 1 :])
        if _REPOSITORY_PACKAGES.get(dist) == parts[i] and parts[i + 1].split("/", 1)[0] not in _NOT_PACKAGE_CODE:
            return parts[i], "/".join(parts[i + 1 :])
    return None


def _version(name: str, packages: Mapping[str, PackageVersion]) -> str:
    found = packages.get(name)
    return found.version if found is not None else ""
