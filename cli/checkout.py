"""Where the commands that edit the KB or its docs work: the ``kb/`` folder of a dtypefix checkout.

``lint``, ``fmt``, ``docs`` and ``new`` change or check files that live in a clone of the project. With a
non-editable install the installed KB (in site-packages) is a copy: regenerating ``docs/kb`` from it, or checking
the clone's entries against it, mixes two KBs. So these commands find the checkout at or above the current folder
(or above the paths they are given), or take ``--kb-root``, and refuse with one clear line otherwise.
"""

from __future__ import annotations

from pathlib import Path

from dtypefix.matcher.catalog import builtin_kb_dir

from .inputs import InputError

__all__ = ["checkout_kb", "find_checkout_kb", "is_checkout_kb", "refuse_installed"]


def is_checkout_kb(folder: Path) -> bool:
    """A checkout's ``kb/``: the id ledger and the schema, and the project beside it (``pyproject.toml``). The
    installed copy in site-packages has no project beside it."""
    return (
        (folder / "ids.txt").is_file()
        and (folder / "schema.json").is_file()
        and (folder.parent / "pyproject.toml").is_file()
    )


def find_checkout_kb(start: Path) -> Path | None:
    """The checkout ``kb/`` folder at or above ``start`` (a folder or a file in it), or None."""
    here = start.resolve()
    for folder in (here, *here.parents):
        for candidate in (folder / "kb", folder):
            if is_checkout_kb(candidate):
                return candidate
    return None


def checkout_kb(kb_root: Path | None, command: str) -> Path:
    """``--kb-root`` (a checkout or its ``kb/``), else the checkout found at or above the current folder; an
    :class:`InputError` that says what to do when there is none."""
    if kb_root is not None:
        for candidate in (kb_root / "kb", kb_root):
            if is_checkout_kb(candidate):
                return candidate.resolve()
        raise InputError(
            f"--kb-root {kb_root}: not a dtypefix checkout (no kb/ids.txt, kb/schema.json, pyproject.toml)"
        )
    found = find_checkout_kb(Path.cwd())
    if found is not None:
        return found
    raise InputError(
        f"`dtypefix {command}` works on a dtypefix checkout and found none here or above: "
        "run it inside a clone, or pass --kb-root DIR"
    )


def refuse_installed(paths: list[Path], command: str) -> None:
    """Refuse to rewrite entries of the installed KB when it is not a checkout (site-packages)."""
    installed = builtin_kb_dir().resolve()
    if is_checkout_kb(installed):
        return
    for path in paths:
        if path.resolve().is_relative_to(installed):
            raise InputError(
                f"{path}: that is the installed KB, not a checkout; run `dtypefix {command}` on a clone's kb/"
            )
