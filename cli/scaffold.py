"""``dtypefix new``: a schema-valid entry skeleton and its example folder, in the canonical form."""

from __future__ import annotations

import re
from pathlib import Path

from dtypefix.kbtools.canonical import canonical_text
from dtypefix.kbtools.ids import AREA_RANGES, next_id, read_ledger, record_id
from dtypefix.matcher.catalog import builtin_kb_dir, entry_files, read_entry_mapping
from dtypefix.matcher.entry import EntryError

from .inputs import InputError

__all__ = ["scaffold_entry"]

TODO = "TODO(dtypefix new)"


def _slugify(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words[:8]) or "new-entry"


def _message_pattern(message: str) -> tuple[str, str | None]:
    line = message.strip().splitlines()[0] if message.strip() else TODO
    exc_type = None
    head, sep, rest = line.partition(": ")
    if sep and re.fullmatch(r"[\w.]*(?:Error|Exception)", head):
        exc_type, line = head.rsplit(".", 1)[-1], rest
    return re.escape(line).replace("\\ ", " "), exc_type


def _taken(root: Path) -> set[str]:
    ids = set()
    for path, _ in entry_files(root):
        try:
            ids.add(read_entry_mapping(path)["id"])
        except EntryError:
            continue
    return ids


def scaffold_entry(root: Path, area: str, title: str, message: str, log_text: str | None, slug: str | None) -> Path:
    """Write ``<root>/<area>/<slug>.yaml`` and its example folder; return the YAML path."""
    if area not in AREA_RANGES:
        raise InputError(f"unknown area {area!r}; one of: {', '.join(AREA_RANGES)}")
    name = slug or _slugify(title)
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
        raise InputError(f"slug {name!r}: use lowercase letters, digits and dashes")
    path = root / area / f"{name}.yaml"
    if path.exists():
        raise InputError(f"{path} already exists")
    # Neither this KB nor the built-in one may already use (or ever have used) the id.
    builtin = builtin_kb_dir()
    taken = _taken(root) | _taken(builtin) | set(read_ledger(builtin))
    entry_id = next_id(root, area, taken)
    pattern, exc_type = _message_pattern(message)
    error: dict[str, object] = {"message": pattern, "weight": 2}
    if exc_type:
        error["type"] = exc_type
    todo_text = {"en": TODO, "zh": TODO}
    data = {
        "id": entry_id,
        "title": {"en": title.strip() or TODO, "zh": TODO},
        "kind": "cause",
        "family": "other",
        "tags": [area],
        "severity": "error",
        "status": "active",
        "match": {"errors": [error]},
        "explanation": {"cause": todo_text, "fix": [todo_text], "does_not_help": [todo_text]},
        "references": [{"url": "https://github.com/OWNER/REPO/issues/0", "title": TODO}],
        "examples": [
            {"input": "example-1.log", "source": "https://github.com/OWNER/REPO/issues/0"},
            {"input": "example-2.log", "source": "https://github.com/OWNER/REPO/issues/0"},
        ],
        "counter_examples": [{"input": "counter-1.log", "source": "https://github.com/OWNER/REPO/issues/0"}],
    }
    folder = path.with_suffix("")
    folder.mkdir(parents=True)
    (folder / "example-1.log").write_text(
        log_text if log_text else f"{TODO}: paste real output here\n", encoding="utf-8"
    )
    (folder / "example-2.log").write_text(f"{TODO}: a second real report of the same cause\n", encoding="utf-8")
    (folder / "counter-1.log").write_text(
        f"{TODO}: a real log of a sibling cause that must not match\n", encoding="utf-8"
    )
    path.write_text(canonical_text(data), encoding="utf-8")
    record_id(root, entry_id, f"{area}/{name}")
    return path
