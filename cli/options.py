"""The typer application and the options the commands share (``--format``, ``--lang``, ``--kb`` ...).

Commands import this module and register themselves on :data:`app`; :mod:`.app` runs it. Nothing here imports a
command, so the two never import each other.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path
from typing import Annotated, Any

import click
import typer

from dtypefix.matcher.catalog import Catalog, default_cache_dir, load_catalog

from .formats import FORMATS
from .i18n import default_lang

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


class Lang(str, enum.Enum):
    """``--lang`` choices."""

    en = "en"
    zh = "zh"
    both = "both"


FormatOption = Annotated[
    str | None,
    typer.Option(
        "--format",
        "-f",
        click_type=click.Choice(list(FORMATS)),
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


def lang_of(lang: Lang | None) -> str:
    """The language chosen with ``--lang``, or the locale's."""
    return lang.value if lang is not None else default_lang()


def kb_dirs(extra: list[Path] | None) -> list[Path]:
    """``--kb`` folders plus ``DTYPEFIX_KB``."""
    dirs = list(extra or [])
    env = os.environ.get("DTYPEFIX_KB", "")
    dirs += [Path(p) for p in env.split(os.pathsep) if p]
    return dirs


def catalog_for(extra: list[Path] | None) -> Catalog:
    catalog = load_catalog(kb_dirs(extra), cache_dir=default_cache_dir())
    for problem in catalog.problems:
        typer.echo(f"dtypefix: warning: skipped KB entry: {problem}", err=True)
    return catalog
