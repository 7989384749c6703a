"""What every command settles before it runs: the language (``--lang``, else the locale) and the KB (the built-in
one, ``--kb`` folders and ``DTYPEFIX_KB``).

Kept apart from :mod:`.options` (the typer declarations of the same choices) so that the fast ``explain`` path
can settle them without importing typer.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path

from dtypefix.matcher.catalog import Catalog, default_cache_dir, load_catalog

from .failure import say
from .i18n import default_lang

__all__ = ["Lang", "catalog_for", "kb_dirs", "lang_of"]


class Lang(str, enum.Enum):
    """``--lang`` choices."""

    en = "en"
    zh = "zh"
    both = "both"


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
    """The KB a command reads; a private entry that does not load is skipped with one warning line."""
    catalog = load_catalog(kb_dirs(extra), cache_dir=default_cache_dir())
    for problem in catalog.problems:
        say(f"dtypefix: warning: skipped KB entry: {problem}")
    return catalog
