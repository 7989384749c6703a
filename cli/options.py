"""The typer application and the options the commands share (``--format``, ``--lang``, ``--kb`` ...).

Commands import this module and register themselves on :data:`app`; :mod:`.app` runs it. Nothing here imports a
command, so the two never import each other.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .formats import FORMATS
from .settings import Lang, catalog_for, kb_dirs, lang_of

__all__ = [
    "SETTINGS",
    "ConfigOption",
    "FormatOption",
    "FreezeOption",
    "KbOption",
    "Lang",
    "LangOption",
    "ThisEnvOption",
    "app",
    "catalog_for",
    "kb_dirs",
    "lang_of",
]

SETTINGS: dict[str, Any] = {
    "name": "dtypefix",
    "help": (
        "Explain dtype, mixed-precision and device-placement failures in PyTorch training runs, offline.\n\n"
        "Example: torchrun train.py 2>&1 | dtypefix explain"
    ),
    "no_args_is_help": True,
    "add_completion": False,
    "rich_markup_mode": None,
    "context_settings": {"help_option_names": ["-h", "--help"]},
}
app = typer.Typer(**SETTINGS)


if TYPE_CHECKING:
    FormatChoice = str
else:
    # ``--format``'s choices, from the format registry. An Enum, not ``click_type=click.Choice(...)``: typer reads an
    # Enum's choices in every release (0.24 dropped ``click_type``), and a str Enum member is its name wherever the
    # commands use it (``FORMATS[fmt]``, ``fmt == "html"``).
    FormatChoice = enum.Enum("FormatChoice", {name: name for name in FORMATS}, type=str)

FormatOption = Annotated[
    FormatChoice | None,
    typer.Option(
        "--format",
        "-f",
        help="; ".join(f"{f.name}: {f.help}" for f in FORMATS.values()) + ".",
    ),
]
LangOption = Annotated[
    Lang | None, typer.Option("--lang", "-l", help="en, zh or both; default from the locale (LANG).")
]
KbOption = Annotated[
    list[Path] | None,
    typer.Option("--kb", help="An extra KB folder (repeatable); DTYPEFIX_KB adds more (os.pathsep-separated)."),
]
ConfigOption = Annotated[
    list[str] | None,
    typer.Option(
        "--config",
        "-c",
        help="A DeepSpeed JSON, Accelerate/Axolotl/LLaMA-Factory YAML or TrainingArguments JSON (repeatable).",
    ),
]
FreezeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--freeze", help="Package versions: pip freeze, pip list, conda list or collect_env output (repeatable)."
    ),
]
ThisEnvOption = Annotated[
    bool, typer.Option("--this-env", help="Read the packages installed in the running Python (never imports torch).")
]
