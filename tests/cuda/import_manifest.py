"""Copy a recordings folder (logs/ + MANIFEST.yaml, e.g. ../shared/recordings/h100-2026-11) into tests/data/recorded/.

    python tests/cuda/import_manifest.py RECORDINGS_DIR PREFIX EXPECTED_YAML

Each log is copied unchanged as ``<PREFIX>-<name>.log`` beside a metadata file that keeps the manifest's facts
(how it was launched, exit code, final error, true cause) and adds what the replay checks: ``expected`` (the entry
id or family that must rank first, or ``none``) and ``wording`` (a regex the log must contain), both taken from
EXPECTED_YAML (``name: {expected: ..., wording: ..., xfail: reason}``), which a person writes after reading the
true cause. A manifest entry missing from EXPECTED_YAML is refused: every recording is judged, none is skipped.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import yaml

RECORDED = Path(__file__).parent.parent / "data" / "recorded"
_ABOUT = re.compile(r"(torch|transformers|accelerate|peft|triton|deepspeed|liger-kernel) (\d[\w.+]*)")


def main(folder: Path, prefix: str, judged_path: Path) -> int:
    manifest = yaml.safe_load((folder / "MANIFEST.yaml").read_text(encoding="utf-8"))
    judged = yaml.safe_load(judged_path.read_text(encoding="utf-8"))
    versions = dict(_ABOUT.findall(manifest["about"]))
    for item in manifest["logs"]:
        stem = Path(item["log"]).stem
        if stem not in judged:
            print(f"{stem}: not judged in {judged_path}", file=sys.stderr)
            return 2
        name = f"{prefix}-{stem.replace('_', '-')}"
        verdict = judged[stem]
        expected = "none" if item["expected"] == "abstain" else verdict["expected"]
        meta: dict[str, object] = {
            "name": name,
            "expected": expected,
            "wording": verdict["wording"],
            "device": "cuda",
            "gpu": "NVIDIA H100 80GB",
            "cuda": "13.0",
            "versions": versions,
            "command": item["launched_as"],
            "exit_code": item["exit_code"],
            "final_error": item["final_error"],
            "category": item["category"],
            "true_cause": item["true_cause"],
            "source": f"{folder.name}/{item['log']}",
        }
        if "xfail" in verdict:
            meta["xfail"] = verdict["xfail"]
        shutil.copyfile(folder / item["log"], RECORDED / f"{name}.log")
        (RECORDED / f"{name}.yaml").write_text(
            yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
