"""The ``dtypefix`` command line (typer). Commands read input and print; everything else is in the matcher.

Exit codes follow grep: 0 a cause (or known-bad setting) was found, 1 nothing was found, 2 usage or input
error, 130 interrupted.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any, Protocol

import click
import typer

from .failure import say
from .guard import guarded, prepare_streams
from .options import SETTINGS, app

__all__ = ["app", "main", "run"]


def _register() -> None:
    # Commands live in their own modules; importing them registers them on ``app`` (defined in .options, which
    # they import: nothing imports this module back).
    from . import commands, scan  # noqa: F401


def _show_version(value: bool) -> None:
    if value:
        import platform

        from . import __version__
        from .history_words import coverage_line

        typer.echo(
            f"dtypefix {__version__} (Python {platform.python_version()}, {platform.system()} {platform.machine()})"
        )
        typer.echo(coverage_line())
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", is_eager=True, callback=_show_version, help="Print the version and exit."),
    ] = False,
) -> None:
    """Explain dtype, mixed-precision and device-placement failures in PyTorch training runs, offline."""


class _Command(Protocol):
    """What :func:`main` needs of the command typer builds: click's ``Command``, which typer 0.24+ vendors under
    another module (so the annotation cannot name ``click.Command`` for every typer release)."""

    def main(self, *args: Any, **kwargs: Any) -> Any: ...


def _command_for(argv: list[str]) -> _Command:
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
    single = typer.Typer(**SETTINGS)
    single.registered_commands = chosen
    single.callback()(_root)
    return typer.main.get_command(single)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: run the app, map every failure to an exit code and one line."""
    try:
        _register()  # imports every command: a Ctrl-C can land here on a slow start
    except KeyboardInterrupt:
        say("dtypefix: interrupted")
        return 130
    argv = sys.argv[1:] if argv is None else argv
    refused = prepare_streams(argv)
    if refused is not None:
        return refused
    command = _command_for(argv)

    def invoke() -> int:
        try:
            result = command.main(args=argv, prog_name="dtypefix", standalone_mode=False)
        except (typer.Exit, click.exceptions.Exit) as exc:
            return exc.exit_code
        except (typer.Abort, click.exceptions.Abort) as exc:
            raise KeyboardInterrupt from exc
        except Exception as exc:
            # Usage errors (exit 2) and the like, shown as click shows them: click's ClickException, or the copy of it
            # that typer 0.24+ vendors (typer.Exit / typer.Abort above are click's own classes before 0.24).
            show, code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
            if not callable(show) or not isinstance(code, int):
                raise
            show()
            return code
        return result if isinstance(result, int) else 0

    return guarded(invoke)


def run() -> None:
    sys.exit(main())
