"""``frames``: a traceback frame, by file path, function name and / or the source line printed under it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..evidence import Evidence, Outcome, Reason
from ..facts import Input
from ..observation import FrameSeen, Origin, Place
from ..regex import Pattern
from .base import EntryError, Kind, item_schema, parse_pattern, parse_required, parse_weight

if TYPE_CHECKING:
    from ..incident import Incident

__all__ = ["KIND", "FrameCondition"]


@dataclass(frozen=True)
class FrameCondition:
    """A traceback frame, by file path, function name and / or the source line printed under it.

    ``code`` tells apart two causes that end in the same library frame with the same message: which call the
    caller's frame made (``dispatch_model(...)`` inside ``from_pretrained``) survives a paste whose innermost
    frames were cut.
    """

    kind: ClassVar[str] = "frame"
    decider: ClassVar[str] = Input.TRACEBACK
    file: Pattern | None = field(compare=False)
    function: Pattern | None = field(compare=False)
    file_pattern: str = ""
    function_pattern: str = ""
    code: Pattern | None = field(default=None, compare=False)
    code_pattern: str = ""
    weight: float = 2.0
    required: bool = False

    @property
    def label(self) -> str:
        where = " in ".join(p for p in (self.file_pattern, self.function_pattern) if p)
        return f"{where}: {self.code_pattern}" if self.code_pattern else where

    @classmethod
    def parse(cls, item: Mapping[str, Any], where: Path, field: str) -> FrameCondition:
        if not item.get("file") and not item.get("function"):
            raise EntryError(where, field, "a frame needs a file or a function pattern")
        return cls(
            file=parse_pattern(item["file"], where, f"{field}.file") if item.get("file") else None,
            function=parse_pattern(item["function"], where, f"{field}.function") if item.get("function") else None,
            file_pattern=item.get("file") or "",
            function_pattern=item.get("function") or "",
            code=parse_pattern(item["code"], where, f"{field}.code") if item.get("code") else None,
            code_pattern=item.get("code") or "",
            weight=parse_weight(item, where, field),
            required=parse_required(item, where, field),
        )

    def evaluate(self, incident: Incident) -> Evidence:
        if not incident.has_frames:
            return Evidence(self, Outcome.UNKNOWN, Reason.NO_FRAMES)
        for frame in incident.frames:
            path = frame.file.replace("\\", "/")  # Windows paths match the same patterns
            if (
                (self.file is None or self.file.search(path))
                and (self.function is None or self.function.search(frame.function))
                and (self.code is None or self.code.search(frame.code))
            ):
                seen = FrameSeen(path, frame.line, frame.function, frame.code if self.code is not None else "")
                return Evidence(self, Outcome.HELD, Reason.MATCHED, seen, Place(Origin.TRACEBACK))
        if not incident.has_complete_traceback and not self.required:
            # A paste that starts mid-traceback lost its top frames; only a required frame (one that sits next to
            # the error, so it survives trimming) counts as absent.
            return Evidence(self, Outcome.UNKNOWN, Reason.PARTIAL_TRACEBACK)
        return Evidence(self, Outcome.FAILED, Reason.ABSENT)


_TEXT = {"type": "string", "minLength": 1}

KIND = Kind(
    key="frames",
    name="frame",
    condition=FrameCondition,
    parse=FrameCondition.parse,
    schema=item_schema(
        {"file": _TEXT, "function": _TEXT, "code": _TEXT}, anyOf=[{"required": ["file"]}, {"required": ["function"]}]
    ),
    fields=("file", "function", "code"),
    doc="A traceback frame: `file` and / or `function` regex, and optionally `code`, the source line printed under it.",
)
