"""``dtypefix scan``: an archive of jobs explained as ``explain`` explains each, counted, re-scanned incrementally.

The archive is built in a temporary folder from recorded runs (tests/data/recorded/, tests/data/logdir/) plus the
kinds of bad input an archive always holds: an empty file, a binary file, a truncated gzip, a missing path.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dtypefix.cli.scan_jobs import LocalFileSystem, find_jobs
from dtypefix.cli.scan_local import scan_local
from dtypefix.cli.scan_rows import STATUSES
from dtypefix.cli.scan_state import fingerprint
from dtypefix.cli.scan_summary import format_summary, summarise

DATA = Path(__file__).parent / "data"
RECORDED = sorted((DATA / "recorded").glob("cpu-*.log"))
HEALTHY = "".join(f"epoch 1 step {i} loss 2.{i % 97:02d}\n" for i in range(400)) + "INFO training finished\n"


def _archive(root: Path) -> Path:
    """Six explainable runs (two gzip), a torchrun --log-dir folder, a healthy log and three bad files."""
    day = root / "2026-11-20"
    day.mkdir(parents=True)
    for i, log in enumerate(RECORDED[:6]):
        data = log.read_bytes()
        if i % 3 == 0:
            (day / f"job{i}.log.gz").write_bytes(gzip.compress(HEALTHY.encode() + data))
        else:
            (day / f"job{i}.log").write_bytes(HEALTHY.encode() + data)
    shutil.copytree(DATA / "logdir" / "torchrun-r3", root / "2026-11-21" / "ddp")
    (root / "2026-11-21" / "healthy.log").write_text(HEALTHY)
    (root / "bad").mkdir()
    (root / "bad" / "empty.log").write_bytes(b"")
    (root / "bad" / "model.bin").write_bytes(bytes(range(256)) * 64)
    whole = gzip.compress(RECORDED[0].read_bytes() * 50)
    (root / "bad" / "cut.log.gz").write_bytes(whole[: len(whole) // 2])
    return root


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _scan(root: Path, out: Path, workers: int = 1, full: bool = False):
    jobs = find_jobs([str(root)], LocalFileSystem(), exclude=[out])
    return scan_local(jobs, out, kb_dirs=[], workers=workers, fingerprint=fingerprint([]), full=full)


def test_every_job_is_a_row_with_explains_own_json(cli, tmp_path: Path) -> None:
    root = _archive(tmp_path / "archive")
    out = tmp_path / "scan.jsonl"
    result = cli("scan", str(root), str(tmp_path / "nowhere"), "--out", str(out), "--jobs", "1", "--format", "json")
    assert result.code == 0, result.err
    rows = {Path(r["path"]).name: r for r in _rows(out)}
    assert len(rows) == 12
    assert {r["status"] for r in rows.values()} <= set(STATUSES)
    assert rows["healthy.log"]["status"] == "no error"
    assert rows["nowhere"]["status"] == "unreadable" and "no such file" in rows["nowhere"]["reason"]
    assert "empty input" in rows["empty.log"]["reason"] and "binary" in rows["model.bin"]["reason"]
    assert "truncated gzip" in rows["cut.log.gz"]["reason"]
    ddp = rows["attempt_0"]
    assert ddp["kind"] == "torchrun" and ddp["status"] == "explained" and ddp["location"]["stream"] == "rank0"
    for name in ("job0.log.gz", "job1.log", "attempt_0"):
        row = rows[name]
        path = row["path"] if name != "attempt_0" else str(Path(row["path"]))
        explained = json.loads(cli("explain", path, "--format", "json").out)
        assert row["report"] == explained
        assert row["cause"] == (explained["matches"][0]["id"] if explained["matches"] else None)
        assert row["size"] > 0 and row["mtime"].endswith("Z") and len(row["hash"]) == 64
    summary = json.loads(result.out)
    assert summary["jobs"] == 12 and summary["statuses"]["unreadable"] == 4
    assert sum(c["jobs"] for c in summary["causes"]) == summary["statuses"]["explained"]


def test_exit_code_says_whether_anything_was_explained(cli, tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(HEALTHY)
    result = cli("scan", str(tmp_path / "a.log"), "--out", str(tmp_path / "s.jsonl"), "--format", "md")
    assert result.code == 1 and "| no error | 1 |" in result.out
    result = cli("scan", str(tmp_path / "*.log"), str(RECORDED[0]), "--out", str(tmp_path / "s.jsonl"))
    assert result.code == 0 and "| explained | 1 |" in result.out
    assert cli("scan", str(tmp_path), "--out", str(tmp_path)).code == 2


def test_rescan_reads_only_what_changed(tmp_path: Path) -> None:
    root = _archive(tmp_path / "archive")
    out = tmp_path / "scan.jsonl"
    first = _scan(root, out)
    assert (first.jobs, first.explained_now) == (11, 11)
    before = out.read_bytes()
    again = _scan(root, out)
    assert (again.explained_now, again.kept) == (0, 11) and out.read_bytes() == before
    touched = root / "2026-11-20" / "job1.log"
    os.utime(touched, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    shutil.copy(root / "2026-11-20" / "job2.log", root / "2026-11-20" / "copy-of-job2.log")
    (root / "2026-11-20" / "job4.log").write_text(HEALTHY + "INFO checkpoint saved\n")
    third = _scan(root, out)
    assert (third.jobs, third.explained_now) == (12, 1)  # only job4's new content is explained
    rows = {Path(r["path"]).name: r for r in _rows(out)}
    assert rows["job1.log"]["mtime"] == "2023-11-14T22:13:20Z" and rows["job1.log"]["status"] == "explained"
    assert rows["copy-of-job2.log"]["report"] == rows["job2.log"]["report"]
    assert rows["job4.log"]["status"] == "no error"
    assert _scan(root, out, full=True).explained_now == 12


def test_workers_write_the_same_rows_as_one_process(tmp_path: Path) -> None:
    root = _archive(tmp_path / "archive")
    _scan(root, tmp_path / "one.jsonl", workers=1)
    _scan(root, tmp_path / "two.jsonl", workers=2)
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()


def test_own_output_and_attempt_folders_are_found_right(tmp_path: Path) -> None:
    root = _archive(tmp_path / "archive")
    out = root / "scan.jsonl"
    _scan(root, out)
    assert not any(
        j.path.endswith(("scan.jsonl", ".state.json"))
        for j in find_jobs([str(root)], LocalFileSystem(), [out, Path(str(out) + ".state.json")])
    )
    (attempt,) = (root / "2026-11-21" / "ddp").glob("*/attempt_0")
    (job,) = find_jobs([str(attempt)], LocalFileSystem())
    assert job.kind == "torchrun" and len(job.files) == 6


def test_summary_counts_by_cause_and_family(tmp_path: Path) -> None:
    root = _archive(tmp_path / "archive")
    out = tmp_path / "scan.jsonl"
    _scan(root, out)
    summary = summarise(_rows(out))
    explained = summary.statuses["explained"]
    assert sum(c.jobs for c in summary.causes.values()) == explained == sum(f.jobs for f in summary.families.values())
    text = format_summary(summary)
    for cause in summary.causes.values():
        assert cause.first_seen <= cause.last_seen and cause.example
        assert f"| {cause.key} | {cause.jobs} |" in text
    assert "## Not read" in text and "truncated gzip" in text
    chinese = format_summary(summary, "zh")
    assert "## 按原因" in chinese and "| 已找到原因 |" in chinese
    for label in ("By cause", "status", "jobs", "share", "first seen", "example", "Not read", "explained"):
        assert label not in chinese
    top = summary.ranked(summary.causes)[0]
    assert top.title_zh and top.title_zh in chinese and top.title not in chinese


def test_without_ray_the_message_says_what_to_install(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    (tmp_path / "a.log").write_text("RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Half\n")
    result = cli("scan", str(tmp_path / "a.log"), "--engine", "ray", "--out", str(tmp_path / "o"))
    assert result.code == 2 and "pip install 'dtypefix[ray]'" in result.err


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
_MEASURE = """<script>
const bars = [...document.querySelectorAll('#by-cause rect.bar')].map(r => [r.dataset.cause, +r.dataset.jobs,
  r.getBBox().width]);
const segs = [...document.querySelectorAll('#over-time rect.seg')].map(r => [+r.dataset.jobs, r.getBBox().height]);
document.body.setAttribute('data-measured', JSON.stringify({bars, segs}));
</script></body>"""


@pytest.mark.skipif(
    CHROMIUM is None, reason="no headless browser: install Debian's chromium (apt-get install chromium)"
)
def test_html_report_draws_its_charts_in_a_browser(cli, tmp_path: Path) -> None:
    root = _archive(tmp_path / "archive")
    page_path = tmp_path / "report.html"
    cli("scan", str(root), "--out", str(tmp_path / "s.jsonl"), "--html", str(page_path), "--jobs", "1")
    page = page_path.read_text(encoding="utf-8")
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    measured_page = tmp_path / "measured.html"
    measured_page.write_text(page.replace("</body>", _MEASURE), encoding="utf-8")
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", measured_page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    attr = done.stdout.split('data-measured="', 1)[1].split('"', 1)[0]
    measured = json.loads(attr.replace("&quot;", '"'))
    summary = summarise(_rows(tmp_path / "s.jsonl"))
    assert [b[0] for b in measured["bars"]] == [c.key for c in summary.ranked(summary.causes)]
    widest = max(b[2] for b in measured["bars"])
    for _, jobs, width in measured["bars"]:  # lengths proportional to the counts
        assert width == pytest.approx(widest * jobs / max(b[1] for b in measured["bars"]), abs=1.0)
    assert sum(s[0] for s in measured["segs"]) == summary.statuses["explained"]
    assert all(height > 0 for _, height in measured["segs"])


def test_progress_bar_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from dtypefix.cli.scan_local import Progress, default_progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    advance, close = default_progress(3)
    assert advance is None
    close()
    assert sys.stderr.getvalue() == ""
    screen = Terminal()
    bar = Progress(4, screen)
    for _ in range(4):
        bar.advance()
    bar.close()
    last = screen.getvalue().rstrip("\n").split("\r")[-1]
    assert last.startswith("[" + "#" * 30 + "] 4/4 jobs") and "0:00 left" in last


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_kb_that_cannot_load_is_one_line_and_exit_2(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    from dtypefix.cli import scan_local

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("injected fault")

    monkeypatch.setattr(scan_local, "load_catalog", broken)
    result = cli("scan", str(RECORDED[0]), str(RECORDED[1]), "--out", str(tmp_path / "s.jsonl"), "--jobs", workers)
    assert result.code == 2 and "internal error" in result.err and "Traceback" not in result.err


def test_a_job_that_breaks_the_matcher_is_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dtypefix.cli import scan_rows

    real = scan_rows.explain_incident

    def fragile(incident, catalog):  # type: ignore[no-untyped-def]
        if "Half" in incident.text:
            raise ValueError("injected")
        return real(incident, catalog)

    monkeypatch.setattr(scan_rows, "explain_incident", fragile)
    root = _archive(tmp_path / "archive")
    _scan(root, tmp_path / "s.jsonl")
    rows = _rows(tmp_path / "s.jsonl")
    broken = [r for r in rows if r["reason"] and "dtypefix failed on this job (ValueError: injected)" in r["reason"]]
    assert broken and all(r["status"] == "unreadable" for r in broken) and len(rows) == 11
