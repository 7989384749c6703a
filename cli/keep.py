"""Keep what explaining needs from an output of any size, in bounded memory, in one pass.

A log can be gigabytes, and its error can be anywhere: a run that failed on one rank, then printed 20 MB of
other ranks' progress before the launcher gave up, has its traceback in the middle. :class:`Keeper` takes the
bytes as they come and keeps:

- the head (:data:`HEAD_BYTES`): pasted environments, versions, configs and the launch line come first;
- the tail (its ``tail`` bytes): the end of the run;
- around every error marker in between (a ``Traceback`` header, a ``Type: message`` line, a logger's
  ``ERROR``), a window of :data:`BEFORE` bytes before and :data:`AFTER` after, cut at whole lines, up to
  :data:`MIDDLE_BYTES` in all (the first errors win: the root cause comes before the errors it causes).

Each chunk is searched for a few markers that start with a fixed string (found at ``bytes.find`` speed), so the
pass runs near the speed of reading; memory is the head, the tail, the kept windows and one chunk, whatever the size of the input.
``dtypefix explain`` (:mod:`.inputs`) and ``dtypefix run`` (:mod:`.runner`) both keep their input this way.
"""

from __future__ import annotations

import re
from collections import deque

__all__ = ["AFTER", "BEFORE", "HEAD_BYTES", "MARKERS", "MIDDLE_BYTES", "Keeper"]

HEAD_BYTES = 1 << 20
MIDDLE_BYTES = 16 << 20
BEFORE = 16 << 10
AFTER = 96 << 10
MARKERS = (
    re.compile(rb"Traceback \(most recent call last\)"),
    re.compile(rb"rror(?::[ \n]|\(| during)"),
    re.compile(rb"ERROR"),
    re.compile(rb"xception(?::[ \n]|\()"),
)
"""What starts a window: a traceback, ``SomeError: ...`` / ``Error(...)`` / ``Error during ...``, a logger's
``ERROR``. Each has a literal prefix, which the regex engine looks for at ``find`` speed."""
_OVERLAP = 64  # a marker split between two chunks is still found


class Keeper:
    """Bytes in (:meth:`add`), the kept text out (:meth:`value`); not thread-safe (callers lock)."""

    def __init__(self, tail: int) -> None:
        self.tail_limit = tail
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.tail_start = 0
        """Offset in the stream of the first byte in :attr:`tail`."""
        self.windows: list[tuple[int, bytearray]] = []
        """(stream offset, bytes) of each kept region of the middle, in order, not overlapping."""
        self.kept = 0
        self.keep_until = 0
        """Bytes up to this offset belong to the current window."""
        self.seen = 0
        """Bytes added so far."""
        self.previous = b""
        """The chunk before the last one (the bytes a window reaches back into)."""

    def add(self, chunk: bytes) -> None:
        if not chunk:
            return
        start = self.seen
        if len(self.head) < HEAD_BYTES:
            take = HEAD_BYTES - len(self.head)
            self.head += chunk[:take]
            self.seen += min(take, len(chunk))
            chunk = chunk[take:]
            start = self.seen
            if not chunk:
                return
        self._scan(chunk, start)
        self.seen += len(chunk)
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail_size - len(self.tail[0]) >= self.tail_limit:
            dropped = self.tail.popleft()
            self.tail_size -= len(dropped)
            self.tail_start += len(dropped)
        self.previous = chunk

    def _scan(self, chunk: bytes, start: int) -> None:
        """Extend the open window into ``chunk``, then open one at each marker ``chunk`` holds."""
        if self.keep_until > start and self.windows:
            self._extend(chunk, start, min(self.keep_until, start + len(chunk)))
        if self.kept >= MIDDLE_BYTES:
            return
        context = self.previous[-_OVERLAP:] + chunk
        base = start - (len(context) - len(chunk))
        hits = []
        for marker in MARKERS:
            found = marker.search(context)
            while found is not None:
                hits.append(base + found.start())
                found = marker.search(context, found.end() + AFTER // 2)  # one per half window is enough
        for offset in sorted(hits):
            if offset < self.keep_until or self.kept >= MIDDLE_BYTES:
                continue
            self._open(chunk, start, offset)

    def _open(self, chunk: bytes, start: int, offset: int) -> None:
        begin = max(offset - BEFORE, self.keep_until, HEAD_BYTES if self.seen >= HEAD_BYTES else 0)
        before = b""
        if begin < start:
            # Reach back into the previous chunk (the window's context before the marker).
            before = self.previous[max(0, len(self.previous) - (start - begin)) :]
            begin = start - len(before)
        end = min(offset + AFTER, start + len(chunk))
        region = bytearray(before + chunk[max(0, begin - start) : end - start])
        if self.windows and self.windows[-1][0] + len(self.windows[-1][1]) == begin:
            self.windows[-1][1].extend(region)
        else:
            self.windows.append((begin, region))
        self.kept += len(region)
        self.keep_until = offset + AFTER

    def _extend(self, chunk: bytes, start: int, end: int) -> None:
        offset, region = self.windows[-1]
        have = offset + len(region)
        if have >= end:
            return
        piece = chunk[max(0, have - start) : end - start]
        region.extend(piece)
        self.kept += len(piece)

    def value(self) -> tuple[bytes, bool]:
        """The kept bytes, joined at line boundaries; the flag says whether anything was left out."""
        tail = b"".join(self.tail)
        tail_start = self.seen - len(tail)
        if tail_start > len(self.head):
            cut = tail.find(b"\n")
            tail = tail[cut + 1 :] if cut >= 0 else tail
        else:
            return bytes(self.head) + tail, False
        parts = [bytes(self.head)]
        for offset, region in self.windows:
            if offset >= tail_start:
                break
            piece = bytes(region[: tail_start - offset])
            parts.append(_whole_lines(piece))
        parts.append(tail)
        return b"\n".join(parts), True


def _whole_lines(piece: bytes) -> bytes:
    """``piece`` without its first and last partial lines."""
    first = piece.find(b"\n")
    last = piece.rfind(b"\n")
    return piece[first + 1 : last] if 0 <= first < last else piece
