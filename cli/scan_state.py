"""What a previous scan already explained, kept beside its output so that a re-scan reads only what is new.

``OUT.jsonl.state.json`` maps each job's path to its size, modification time, content hash and where its row sits
in ``OUT.jsonl``. A job whose size and time are unchanged keeps its row without being opened (as ``make`` and
``git`` trust a file's stat); one whose stat changed is read and hashed, and keeps its row when the hash is one the
state knows (a touched, copied or renamed log is not explained again). The state holds a fingerprint of dtypefix's
matcher and of the KB: when either changed, every row may be stale and the whole archive is scanned again.
It lives beside the output, not in the user's cache: a cron job's state belongs to its output.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from dtypefix.matcher.catalog import builtin_kb_dir, entry_files

__all__ = ["STATE_SUFFIX", "Known", "fingerprint", "load_state", "save_state", "state_path"]

STATE_SUFFIX = ".state.json"
_FORMAT = 1


@dataclass(frozen=True)
class Known:
    """One job as the last scan saw it."""

    size: int
    mtime_ns: int
    hash: str | None
    """Content hash; ``None`` for a job that could not be read (it is read again when its stat changes)."""
    offset: int
    """Where its row starts in the output file, in bytes."""
    length: int


def state_path(out: Path) -> Path:
    return out.with_name(out.name + STATE_SUFFIX)


def fingerprint(kb_dirs: list[Path]) -> str:
    """A hash of what decides a row: dtypefix's version, the matcher's code and every KB entry file in use."""
    from . import __version__

    digest = hashlib.sha256(f"{_FORMAT}\0{__version__}".encode())
    matcher = Path(__file__).parent.parent / "matcher"
    code = sorted(matcher.glob("*.py")) if matcher.is_dir() else []
    code += sorted(Path(__file__).parent.glob("scan_rows.py")) + sorted(Path(__file__).parent.glob("logfiles.py"))
    entries = [path for root in [builtin_kb_dir(), *kb_dirs] if root.exists() for path, _ in entry_files(root)]
    for path in [*code, *entries]:
        try:
            digest.update(f"\0{path.name}\0".encode() + path.read_bytes())
        except OSError:
            digest.update(f"\0{path}\0<unreadable>".encode())
    return digest.hexdigest()


def load_state(out: Path, wanted: str) -> dict[str, Known]:
    """The jobs a previous scan into ``out`` saw; empty when there is none, it is damaged, its output is gone, or
    it was made by another matcher or KB (``wanted`` is the current :func:`fingerprint`)."""
    path = state_path(out)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not out.is_file() or data.get("format") != _FORMAT or data.get("fingerprint") != wanted:
            return {}
        if data.get("output_size") != out.stat().st_size:
            return {}  # the output was edited or cut since: its offsets cannot be trusted
        return {job: Known(*fields) for job, fields in data["jobs"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def save_state(out: Path, wanted: str, jobs: dict[str, Known]) -> None:
    """Write the state for the output just written (atomically: a crash leaves the old state or the new one)."""
    data = {
        "format": _FORMAT,
        "fingerprint": wanted,
        "output_size": out.stat().st_size,
        "jobs": {job: [k.size, k.mtime_ns, k.hash, k.offset, k.length] for job, k in jobs.items()},
    }
    path = state_path(out)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    partial.replace(path)
