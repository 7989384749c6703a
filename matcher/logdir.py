"""A folder of per-rank logs as one multi-rank incident.

A distributed run does not always leave one merged log. ``torchrun --log-dir D -r 3`` (or ``--tee 3``) writes each
local rank's output to its own files (layout from ``DefaultLogsSpecs.reify`` in
``torch/distributed/elastic/multiprocessing/api.py``, torch 2.13.0)::

    D/<run_id>_<random>/attempt_<restart>/<local_rank>/stdout.log
    D/<run_id>_<random>/attempt_<restart>/<local_rank>/stderr.log
    D/<run_id>_<random>/attempt_<restart>/<local_rank>/error.json     (written by @record on an exception)
    D/<run_id>_<random>/attempt_<restart>/filtered_stdout.log         (copies of --local-ranks-filter ranks)

and cluster schedulers or hand-written launchers leave ``rank0.log``, ``train_rank1.err``... side by side. This
module turns such a set of files into the text the multi-rank pipeline (:mod:`.source`, :mod:`.incident`) already
reads: every line behind the ``[rankN]:`` prefix torchrun itself prints, and, when the ranks' ``error.json`` files
say which failed first, the "Root Cause (first observed failure)" block torchrun's summary would have printed, so
that the headline is chosen exactly as for a console log. The choice is torchrun's own: the failure with the
smallest ``timestamp`` (``ChildFailedError.get_first_failure``). Without ``error.json`` files the ranks follow
in rank order, and the last exception is the headline, as for a merged log without a summary.

It works on names and texts only; reading the files (bounded, gzip-aware) is the CLI's job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from .source import normalise

__all__ = ["LogDir", "RankFiles", "error_traceback", "find_logdirs", "first_failure", "is_attempt_folder", "join_ranks"]

_GZ = r"(?:\.gz)?"
_TORCHRUN_FILE = re.compile(
    rf"^(?:(?P<run>.*)/)?attempt_(?P<attempt>\d+)/(?P<rank>\d+)/(?P<name>stdout\.log|stderr\.log|error\.json){_GZ}$"
)
_ATTEMPT = re.compile(r"attempt_\d+")
_FILTERED = re.compile(rf"^(?:.*/)?attempt_\d+/filtered_(?:stdout|stderr)\.log{_GZ}$")
_RANK_NAME = re.compile(r"(?<![a-z])rank[-_]?(?P<rank>\d{1,5})(?!\d)", re.IGNORECASE)
_UNPREFIXED = re.compile(r"^(?!\[(?:rank|default)\d+\]:)", re.MULTILINE)
"""A line without the prefix: torch >= 2.2 already writes ``[rankN]:`` before a child's traceback, even into
its ``stderr.log``."""
_EXTENSIONS = re.compile(r"(?:\.(?:log|txt|out|err|stdout|stderr|gz))+$", re.IGNORECASE)


@dataclass(frozen=True)
class RankFiles:
    """The files one rank wrote."""

    rank: str
    """The number in the folder or file name (``"3"``): torchrun's local rank, a scheduler's global rank."""
    logs: tuple[str, ...]
    """Its output files, in reading order (``stdout`` before ``stderr``, otherwise by name)."""
    error_file: str | None = None
    """torchrun's ``error.json`` for this rank, when there is one."""


@dataclass(frozen=True)
class LogDir:
    """One multi-rank incident found among file names (paths relative to the folder that was listed)."""

    root: str
    """The folder that stands for the incident: a torchrun run folder, or the folder holding the rank files."""
    kind: str
    """``torchrun`` (``--log-dir`` layout) or ``rank-files`` (``*rank<N>*`` names side by side)."""
    ranks: tuple[RankFiles, ...]
    """In rank order."""
    attempt: int | None = None
    """The torchrun restart whose files are read: the last one, the attempt that ended the run."""

    @property
    def label(self) -> str:
        """What a user calls it: the folder, and for rank files the name pattern."""
        if self.kind == "torchrun":
            return f"{self.root or '.'}/attempt_{self.attempt}"
        name = PurePosixPath(self.ranks[0].logs[0]).name
        pattern = _RANK_NAME.sub(lambda found: found[0][: found.start("rank") - found.start()] + "*", name)
        return str(PurePosixPath(self.root or ".") / _EXTENSIONS.sub("", pattern))

    @property
    def files(self) -> tuple[str, ...]:
        """Every file it reads, logs and error files."""
        found: list[str] = []
        for rank in self.ranks:
            found.extend(rank.logs)
            if rank.error_file:
                found.append(rank.error_file)
        return tuple(found)


def is_attempt_folder(name: str) -> bool:
    """``attempt_0``: one restart of a torchrun run, whose name is part of the layout (give it to
    :func:`find_logdirs` as the first part of each path)."""
    return _ATTEMPT.fullmatch(name) is not None


def _stream_order(path: str) -> tuple[int, str]:
    name = PurePosixPath(path).name.lower()
    return (0 if "out" in name else 1 if "err" in name else 2, name)


def _rank_key(rank: str) -> int:
    return int(rank)


def find_logdirs(paths: Iterable[str]) -> tuple[tuple[LogDir, ...], tuple[str, ...]]:
    """Group relative POSIX paths into multi-rank incidents; return them and the paths that belong to none.

    A torchrun run folder is one incident (its last attempt; earlier attempts' files are absorbed, not left
    over). Files named ``...rank<N>...`` in one folder form one incident per name pattern (``job7_rank0.log`` and
    ``job7_rank1.err`` go together, ``job8_rank0.log`` is another), when at least two ranks are present.
    """
    runs: dict[str, dict[int, dict[str, dict[str, str]]]] = {}
    named: dict[tuple[str, str], dict[str, list[str]]] = {}
    rest: list[str] = []
    for path in paths:
        found = _TORCHRUN_FILE.match(path)
        if found:
            attempt = runs.setdefault(found["run"] or "", {}).setdefault(int(found["attempt"]), {})
            attempt.setdefault(found["rank"], {})[found["name"]] = path
            continue
        if _FILTERED.match(path):
            continue  # copies of ranks' lines, already read from the ranks' own files
        pure = PurePosixPath(path)
        rank = _RANK_NAME.search(pure.name)
        if rank is None:
            rest.append(path)
            continue
        pattern = _EXTENSIONS.sub("", pure.name[: rank.start()] + "rank*" + pure.name[rank.end() :])
        key = (str(pure.parent) if str(pure.parent) != "." else "", pattern.lower())
        named.setdefault(key, {}).setdefault(str(int(rank["rank"])), []).append(path)
    found_dirs: list[LogDir] = []
    for run, attempts in runs.items():
        last = max(attempts)
        ranks = tuple(
            RankFiles(
                rank,
                tuple(files[n] for n in ("stdout.log", "stderr.log") if n in files),
                files.get("error.json"),
            )
            for rank, files in sorted(attempts[last].items(), key=lambda item: _rank_key(item[0]))
        )
        found_dirs.append(LogDir(run, "torchrun", ranks, last))
    for (folder, _), by_rank in named.items():
        if len(by_rank) < 2:
            rest.extend(path for paths_ in by_rank.values() for path in paths_)
            continue
        ranks = tuple(
            RankFiles(rank, tuple(sorted(files, key=_stream_order)))
            for rank, files in sorted(by_rank.items(), key=lambda item: _rank_key(item[0]))
        )
        found_dirs.append(LogDir(folder, "rank-files", ranks))
    found_dirs.sort(key=lambda d: (d.root, d.label))
    return tuple(found_dirs), tuple(rest)


def first_failure(error_files: Mapping[str, str]) -> str | None:
    """The rank whose ``error.json`` has the smallest timestamp, as torchrun chooses its root cause.

    ``error_files`` maps a rank to its file's text. The two shapes torch reads are accepted
    (``{"message": {"message": ..., "extraInfo": {"timestamp": "..."}}}`` and ``{"message": "...",
    "timestamp": N}``); a file that is neither is ignored. Timestamps are whole seconds, so ranks often tie:
    torchrun then names the lowest rank (``min`` over failures kept in local-rank order), and so does this.
    """
    stamps = {rank: _timestamp(text) for rank, text in error_files.items()}
    known = sorted((stamp, int(rank), rank) for rank, stamp in stamps.items() if stamp is not None)
    return known[0][2] if known else None


def _error_data(text: str) -> dict[str, object] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _timestamp(text: str) -> int | None:
    data = _error_data(text)
    if data is None:
        return None
    message = data.get("message")
    raw = message.get("extraInfo", {}).get("timestamp") if isinstance(message, dict) else data.get("timestamp")
    try:
        return int(str(raw))
    except ValueError:
        return None


def error_traceback(text: str) -> str:
    """The traceback an ``error.json`` holds (``extraInfo.py_callstack``), or its message; empty when neither."""
    data = _error_data(text)
    message = data.get("message") if data else None
    if isinstance(message, dict):
        stack = message.get("extraInfo", {}).get("py_callstack") if isinstance(message.get("extraInfo"), dict) else None
        if isinstance(stack, str) and stack.strip():
            return stack
        message = message.get("message")
    return message if isinstance(message, str) else ""


def join_ranks(ranks: Sequence[tuple[str, str]], error_files: Mapping[str, str] | None = None) -> str:
    """One log in torchrun's console shape from ``(rank, text)`` pairs, in the order given.

    Lines get the ``[rankN]:`` prefix unless they carry one. Each rank's text is cleaned first (a tqdm bar's carriage returns would otherwise take the prefix with
    them). A rank whose own output shows no traceback gets the one its ``error.json`` holds (a run launched
    without ``-r 2`` still writes it). The root-cause block comes last, where torchrun prints its summary.
    """
    errors = dict(error_files or {})
    parts: list[str] = []
    for rank, text in ranks:
        clean = normalise(text).strip("\n")
        if "Traceback (most recent call last)" not in clean and rank in errors:
            extra = normalise(error_traceback(errors[rank])).strip("\n")
            clean = f"{clean}\n{extra}" if clean else extra
        if clean:
            parts.append(_UNPREFIXED.sub(f"[rank{rank}]: ", clean))
    first = first_failure(errors)
    if first is not None:
        parts.append(f"Root Cause (first observed failure):\n[0]:\n  rank      : {first} (local_rank: {first})")
    return "\n".join(parts) + "\n"
