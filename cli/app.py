"""The ``dtypefix`` command line (typer). Commands read input and print; everything else is in the matcher.

Exit codes follow grep: 0 a cause (or known-bad setting) was found, 1 nothing was found, 2 usage or input
error, 130 interrupted.
"""

from __future__ import annotations

import contextlib
import enum
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import click
import typer

from dtypefix.matcher.catalog import Catalog, default_cache_dir, load_catalog

from .i18n import default_lang
from .inputs import InputError
from .render import OutputFormat

__all__ = ["app", "main"]

_SETTINGS: dict[str, Any] = {
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
app = typer.Typer(**_SETTINGS)


class Lang(str, enum.Enum):
    """``--lang`` choices."""

    en = "en"
    zh = "zh"
    both = "both"


FormatOption = Annotated[
    OutputFormat | None,
    typer.Option("--format", "-f", help="md, term (rich, the default on a terminal), json or html."),
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


def _lang(lang: Lang | None) -> str:
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


def _register() -> None:
    # Commands live in their own modules; importing them registers them on ``app``.
    from . import commands  # noqa: F401


def _show_version(value: bool) -> None:
    if value:
        import platform

        from . import __version__

        typer.echo(
            f"dtypefix {__version__} (Python {platform.python_version()}, {platform.system()} {platform.machine()})"
        )
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", is_eager=True, callback=_show_version, help="Print the version and exit."),
    ] = False,
) -> None:
    """Explain dtype, mixed-precision and device-placement failures in PyTorch training runs, offline."""


def _command_for(argv: list[str]) -> click.Command:
    """The click command to run. Typer inspects the signature of every registered command on each run (about
    3 ms each), so when the command is named on the command line, only that one is built."""
    wanted = argv[0] if argv else None
    chosen = [
        info for info in app.registered_commands if (info.name or getattr(info.callback, "__name__", "")) == wanted
    ]
    if not chosen:
        if not app.registered_callback:
            app.callback()(_root)
        return typer.main.get_command(app)
    single = typer.Typer(**_SETTINGS)
    single.registered_commands = chosen
    single.callback()(_root)
    return typer.main.get_command(single)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: run the app, map every failure to an exit code and one line."""
    try:
        _register()  # imports every command: a Ctrl-C can land here on a slow start
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, ValueError):
            typer.echo("dtypefix: interrupted", err=True)
        return 130
    argv = sys.argv[1:] if argv is None else argv
    for stream in (sys.stdout, sys.stderr):
        # A terminal or pipe that is not UTF-8 (PYTHONIOENCODING=ascii, a latin-1 locale) gets degraded characters
        # instead of nothing at all.
        if stream is not None and hasattr(stream, "reconfigure"):
            with contextlib.suppress(ValueError, OSError):
                stream.reconfigure(errors="replace")
    if sys.stdout is None and argv[:1] != ["run"]:  # `run` still runs its command (its output is dropped)
        _say(OSError("standard output is closed"))
        return 2
    command = _command_for(argv)
    try:
        result = command.main(args=argv, prog_name="dtypefix", standalone_mode=False)
    except InputError as exc:
        typer.echo(f"dtypefix: error: {exc}", err=True)
        return 2
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:  # usage errors (exit 2) and the like, shown as click shows them
        exc.show()
        return exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        typer.echo("dtypefix: interrupted", err=True)
        return 130
    except BrokenPipeError:
        # The reader (head, less) went away: stop quietly, as grep does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:  # writing the answer failed: a full disk, a closed descriptor
        _say(exc)
        return 2
    except Exception as exc:
        _say_failure(exc)
        return 2
    return result if isinstance(result, int) else 0


def _say(exc: OSError) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        typer.echo(f"dtypefix: error: cannot write the output: {exc.strerror or exc}", err=True)


def _say_failure(exc: BaseException) -> None:
    """One line on stderr for a failure of dtypefix itself (never a traceback, never exit 1, which means
    "no known cause"); ``DTYPEFIX_DEBUG=1`` shows the traceback for a bug report."""
    if os.environ.get("DTYPEFIX_DEBUG"):
        import traceback

        traceback.print_exc()
    with contextlib.suppress(OSError, ValueError):  # stderr itself is gone: the exit code still says it
        typer.echo(f"dtypefix: internal error ({type(exc).__name__}: {exc}); rerun with DTYPEFIX_DEBUG=1", err=True)


def run() -> None:
    sys.exit(main())
