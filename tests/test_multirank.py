"""Multi-rank logs: the headline is the first observed failure, and the evidence quotes that same rank.

The log follows torchrun's shape (``[rankN]:`` prefixes, the elastic agent's ChildFailedError summary with its
"Root Cause (first observed failure)" block). Rank 1 fails first with a dtype error; rank 0 then dies on the aborted
NCCL communicator, and its traceback is printed later — the last exception is not the one that matters.
"""

from __future__ import annotations

from pathlib import Path

from dtypefix.cli.markdown import format_report
from dtypefix.matcher import TextSeen, build_incident, explain

LOG = (Path(__file__).parent / "data" / "multirank" / "root-cause-rank1.log").read_text(encoding="utf-8")


def test_root_cause_rank_is_the_headline() -> None:
    incident = build_incident(LOG)
    assert incident.root_rank == "1"
    assert incident.primary is not None and incident.primary.stream == "rank1"
    assert "mat1 and mat2" in incident.primary.message


def test_evidence_quotes_the_root_cause_rank() -> None:
    report = explain(LOG)
    assert report.matches and report.matches[0].entry.id == "DTF001"
    anchor = report.matches[0].evidence[0]
    assert isinstance(anchor.observed, TextSeen) and "float != c10::BFloat16" in anchor.observed.text
    text = format_report(report, "en")
    assert "(rank1)" in text.split("\n\n")[2] and "NCCL" not in text


def test_without_a_root_cause_block_the_last_failure_is_the_headline() -> None:
    cut = LOG.split("Root Cause")[0]
    assert build_incident(cut).primary.stream == "rank0"
