"""``--format json``: the versioned contract (docs/json-output.md)."""

from __future__ import annotations

from typing import TextIO

from ..json_output import to_json
from .base import Document, Format

__all__ = ["FORMAT"]


def _write(document: Document, stream: TextIO) -> None:
    stream.write(to_json(document.data()))


FORMAT = Format("json", "JSON (docs/json-output.md)", _write)
