"""IPython / Jupyter extension: ``%load_ext dtypefix.cli.ipython``.

After the usual traceback, a cell that raises gets dtypefix's explanation (when a known cause matches).
``%unload_ext dtypefix.cli.ipython`` turns it off.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from .hook import explain_exception

__all__ = ["load_ipython_extension", "unload_ipython_extension"]


def _handler(
    shell: Any, etype: type[BaseException], value: BaseException, tb: TracebackType | None, tb_offset: Any = None
) -> None:
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    import sys

    explain_exception(etype, value, tb, stream=sys.stdout)


def load_ipython_extension(ipython: Any) -> None:
    ipython.set_custom_exc((Exception,), _handler)


def unload_ipython_extension(ipython: Any) -> None:
    ipython.set_custom_exc((), None)
