"""How `dtypefix search` does on the table of real queries (tests/data/search_queries.tsv).

For each query the rank of every entry it must return; then, for English and Chinese queries apart: how often
all of them are in the first three, how often the `!`-marked one is first, and the mean reciprocal rank of the
first expected entry; and how long building the index and one query take.

Run from a checkout with dtypefix installed:  python bench/search_eval.py [--rows]
It uses only ``dtypefix.matcher.search.search`` and ``load_catalog``, so it also runs against older checkouts.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from dtypefix.matcher.catalog import load_catalog
from dtypefix.matcher.search import search

TABLE = Path(__file__).resolve().parents[1] / "tests" / "data" / "search_queries.tsv"
_CHINESE = re.compile(r"[\u4e00-\u9fff]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print every query with the ranks found")
    args = parser.parse_args()
    entries = load_catalog(cache_dir=None).entries
    rows = [
        line.split("\t")
        for line in TABLE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    figures: dict[str, list[tuple[bool, bool, float]]] = {"en": [], "zh": []}
    started = time.perf_counter()
    for query, expected in rows:
        found = [hit.entry.id for hit in search(entries, query, limit=10)]
        wanted = [w.lstrip("!") for w in expected.split()]
        first = [w[1:] for w in expected.split() if w.startswith("!")]
        ranks = [found.index(w) + 1 if w in found else 0 for w in wanted]
        in_top3 = all(0 < r <= 3 for r in ranks)
        first_ok = not first or (found[:1] == first)
        reciprocal = 1 / ranks[0] if ranks[0] else 0.0
        figures["zh" if _CHINESE.search(query) else "en"].append((in_top3, first_ok, reciprocal))
        if args.rows:
            shown = " ".join(f"{w}@{r or '-'}" for w, r in zip(wanted, ranks, strict=True))
            print(f"{query:45} {shown}")
    per_query = (time.perf_counter() - started) / len(rows)
    for lang, results in figures.items():
        n = len(results)
        print(
            f"{lang}: {n} queries; all expected in the first 3: {sum(r[0] for r in results)}/{n}; "
            f"marked entry first: {sum(r[1] for r in results)}/{n}; "
            f"MRR {sum(r[2] for r in results) / n:.3f}"
        )
    print(f"time per query, index built each time as `dtypefix search` does: {per_query * 1000:.0f} ms")


if __name__ == "__main__":
    main()
