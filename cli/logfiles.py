"""Reading logs from disk: one file (plain or gzip) or a folder of per-rank logs, in bounded memory.

``dtypefix explain`` reads one job this way and ``dtypefix scan`` reads thousands, so both give the matcher the
same text for the same job. A file is kept as :mod:`.keep` keeps it (head, tail, every error between); a folder's
ranks share one budget (:data:`FOLDER_BYTES`), so that 512 ranks of gigabyte logs cost no more than one log.
What the folder holds and which rank failed first is decided by :mod:`dtypefix.matcher.logdir`.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from dtypefix.matcher.logdir import LogDir, find_logdirs, is_attempt_folder, join_ranks
from dtypefix.matcher.source import decode

from .input_errors import BINARY, TAIL_BYTES, InputError, looks_binary, reading
from .keep import Keeper

if TYPE_CHECKING:
    from hashlib import _Hash as Digest

__all__ = ["FOLDER_BYTES", "Reader", "keep_stream", "list_files", "read_bytes", "read_log_dir", "read_logdir_text"]

FOLDER_BYTES = 32 << 20
"""What is kept of a whole rank folder; each rank gets its share, never less than :data:`_RANK_MIN`."""
_RANK_MIN = 256 << 10
_ERROR_FILE_BYTES = 1 << 20
"""An ``error.json`` holds one traceback; more than this is not one."""
_WALK_DEPTH = 4
"""``<log-dir>/<run>/attempt_<n>/<rank>/stderr.log``: the deepest layout a log folder has."""
_WALK_FILES = 100_000
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


class _Hashing:
    """A binary stream that feeds every byte it gives into ``digest`` (``dtypefix scan`` hashes what it reads,
    so that a new job costs one pass)."""

    def __init__(self, raw: BinaryIO, digest: Digest) -> None:
        self.raw = raw
        self.digest = digest

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.digest.update(data)
        return data


def keep_stream(raw: BinaryIO, label: str, tail: int = TAIL_BYTES, digest: Digest | None = None) -> bytes:
    """What explaining needs of the stream ``raw`` (:class:`~.keep.Keeper`), gzip or not, read to its end;
    ``digest`` gets every byte read. Raises :class:`~.inputs.InputError` for a truncated or corrupt gzip stream."""
    stream: BinaryIO | _Hashing = _Hashing(raw, digest) if digest is not None else raw
    first = stream.read(_CHUNK)
    keeper = Keeper(tail)
    if not first.startswith(_GZIP_MAGIC):
        if looks_binary(first):  # refused on its first chunk: `explain /dev/urandom` must end
            raise InputError(BINARY.format(name=label))
        keeper.add(first)
        while chunk := stream.read(_CHUNK):
            keeper.add(chunk)
        return keeper.value()[0]
    import gzip  # here: most logs are plain text, and a start-up should not pay for the module

    try:
        with gzip.GzipFile(fileobj=_Replay(first, stream)) as unzipped:
            while chunk := unzipped.read(_CHUNK):
                keeper.add(chunk)
    except EOFError:
        raise InputError(f"{label}: truncated gzip file") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(f"{label}: corrupt gzip file ({exc})") from None
    return keeper.value()[0]


class _Replay:
    """``first`` then the rest of ``stream``: the bytes read to recognise gzip are given again to the decoder
    (object-store streams cannot seek back)."""

    def __init__(self, first: bytes, stream: BinaryIO | _Hashing) -> None:
        self.first = first
        self.stream = stream

    def read(self, size: int = -1) -> bytes:
        if not self.first:
            return self.stream.read(size)
        if size < 0 or size >= len(self.first):
            data, self.first = self.first, b""
            return data if size < 0 else data + self.stream.read(size - len(data))
        data, self.first = self.first[:size], self.first[size:]
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        raise OSError("a log stream is read once, from its start")  # gzip only seeks to rewind, which we never do


def read_bytes(path: Path, tail: int = TAIL_BYTES) -> bytes:
    """What explaining needs of the file at ``path`` (:func:`keep_stream`); raises :class:`~.inputs.InputError`
    with the reason (missing, unreadable, a truncated or corrupt gzip stream)."""
    with reading(str(path)), path.open("rb") as raw:
        return keep_stream(raw, str(path), tail)


def list_files(root: Path, depth: int = _WALK_DEPTH) -> list[str]:
    """Files under ``root`` down to ``depth`` folders, as sorted POSIX paths relative to it (no symlinked
    folders followed; hidden entries skipped); raises :class:`InputError` past :data:`_WALK_FILES` files."""
    found: list[str] = []
    base = str(root)
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, base)
        level = 0 if rel == "." else rel.count(os.sep) + 1
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if level < depth else []
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        found.extend(prefix + name for name in files if not name.startswith("."))
        if len(found) > _WALK_FILES:
            raise InputError(f"{root}: more than {_WALK_FILES} files; give the run's own folder")
    return sorted(found)


def _capped(data: bytes, budget: int) -> bytes:
    """``data`` within ``budget``: a quarter from its start, the rest from its end (where a rank's error is)."""
    if len(data) <= budget:
        return data
    head = data[: budget // 4]
    tail = data[len(data) - (budget - len(head)) :]
    head = head[: head.rfind(b"\n") + 1] or head
    tail = tail[tail.find(b"\n") + 1 :] or tail
    return head + tail


Reader = Callable[[str, int], bytes]
"""``(name, tail) -> kept bytes`` of a file named relative to a folder: local files, or an object store's."""


def read_logdir_text(base: Path | str, logdir: LogDir, read: Reader | None = None) -> str:
    """The text of one multi-rank incident under ``base``, ready for the matcher; raises :class:`InputError`
    when no rank left readable text. A binary rank file is left out; a file that cannot be read is an error."""
    get: Reader = read or (lambda name, tail: read_bytes(Path(base, name), tail))
    share = max(_RANK_MIN, FOLDER_BYTES // max(1, len(logdir.ranks)))
    ranks: list[tuple[str, str]] = []
    errors: dict[str, str] = {}
    for rank in logdir.ranks:
        pieces = []
        for name in rank.logs:
            data = _capped(get(name, share), share // len(rank.logs))
            if data.strip() and not looks_binary(data):
                pieces.append(data)
        if pieces:
            ranks.append((rank.rank, decode(b"\n".join(pieces))))
        if rank.error_file:
            data = get(rank.error_file, _ERROR_FILE_BYTES)
            if len(data) <= _ERROR_FILE_BYTES and not looks_binary(data):
                errors[rank.rank] = decode(data)
    if not ranks and not errors:
        raise InputError(f"{logdir.label} in {base}: empty input: no rank wrote any text")
    text: str = join_ranks(ranks, errors)
    return text


def read_log_dir(folder: str) -> str:
    """``dtypefix explain FOLDER``: the one multi-rank incident the folder holds; raises :class:`InputError`
    when it holds none (an ordinary folder) or several (say which, so the user can pick)."""
    root = Path(folder)
    if is_attempt_folder(root.name):  # one attempt of a torchrun run: its name is part of the layout
        logdirs, _ = find_logdirs(f"{root.name}/{name}" for name in list_files(root))
        root = root.parent
    else:
        logdirs, _ = find_logdirs(list_files(root))
    if not logdirs:
        raise InputError(
            f"{folder}: is a directory, not a log; a folder is read when it holds per-rank logs "
            "(torchrun --log-dir, or files named *rank<N>*)"
        )
    if len(logdirs) > 1:
        names = ", ".join(d.label for d in logdirs[:5]) + (", ..." if len(logdirs) > 5 else "")
        raise InputError(f"{folder}: holds {len(logdirs)} runs ({names}); give one of them")
    return read_logdir_text(root, logdirs[0])
