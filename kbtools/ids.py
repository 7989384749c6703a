"""Entry ids: the ranges per area and the ledger of every id ever given (``kb/ids.txt``).

Ids are never reused (rustc error codes, advisory ids): an entry that stops being right is retired, and its id
stays in the ledger pointing at its slug. ``dtypefix new`` takes the next free id of the area's range.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["AREA_RANGES", "LEDGER", "next_id", "read_ledger", "record_id"]

LEDGER = "ids.txt"
AREA_RANGES: dict[str, tuple[int, int]] = {
    "family": (1, 99),
    "torch": (100, 149),
    "hardware": (150, 199),
    "deepspeed": (200, 249),
    "accelerate": (250, 299),
    "peft": (300, 349),
    "fsdp": (350, 399),
    "kernels": (400, 449),
    "devices": (450, 499),
    "frameworks": (500, 549),
    "compile": (550, 579),
    "quantization": (580, 599),
    "other": (600, 999),
}
_LINE = re.compile(r"^(?P<id>DTF\d{3,4})\s+(?P<slug>[\w-]+/[\w-]+)\s*$")


def read_ledger(kb_root: Path) -> dict[str, str]:
    """``{id: slug}`` for every id ever given out."""
    path = kb_root / LEDGER
    ledger: dict[str, str] = {}
    if path.exists():
        for raw in path.read_text(encoding="utf-8").splitlines():
            match = _LINE.match(raw.strip())
            if match:
                ledger[match["id"]] = match["slug"]
    return ledger


def next_id(kb_root: Path, area: str, taken: set[str]) -> str:
    """The lowest id of ``area``'s range that neither the ledger nor ``taken`` holds."""
    low, high = AREA_RANGES.get(area, AREA_RANGES["other"])
    used = set(read_ledger(kb_root)) | taken
    for number in range(low, high + 1):
        candidate = f"DTF{number:03d}"
        if candidate not in used:
            return candidate
    raise ValueError(f"no free id left in the {area} range {low}-{high}")


def record_id(kb_root: Path, entry_id: str, slug: str) -> None:
    """Append ``entry_id slug`` to the ledger."""
    path = kb_root / LEDGER
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    if existing and not existing.endswith("\n"):
        existing += "\n"
    path.write_text(existing + f"{entry_id} {slug}\n", encoding="utf-8")
