"""Redaction cost on hostile long lines (issue 12, item 3): it must grow linearly, never quadratically.

Run from the project root:  python bench/redact_bench.py
Prints seconds and MB/s for 4 MB single lines of shapes that made the old backtracking rules quadratic.
"""

from __future__ import annotations

import base64
import os
import time

from dtypefix.cli.redact import redact

SIZE = 4 << 20
CASES = {
    "a.a.a… (hostname rule)": "a." * (SIZE // 2),
    "base64url blob": base64.urlsafe_b64encode(os.urandom(SIZE * 3 // 4)).decode("ascii"),
    "token=… repeated": "token=" * (SIZE // 6),
    "digits and dots (IP rule)": "1.2." * (SIZE // 4),
    "ordinary log line x 100k": ("[rank0]: step 10 loss=1.234 lr=2e-5 grad_norm=0.5 /home/user/run\n" * 65536)[:SIZE],
}


def main() -> None:
    print("| input (4 MB) | seconds | MB/s |\n| --- | --- | --- |")
    for name, text in CASES.items():
        start = time.perf_counter()
        redact(text)
        took = time.perf_counter() - start
        print(f"| {name} | {took:.2f} | {len(text) / took / 1e6:.0f} |")


if __name__ == "__main__":
    main()
