"""A folder of per-rank logs read as one incident (``dtypefix explain LOGDIR``), headline chosen as torchrun does.

The torchrun folder under tests/data/logdir/ is real (see its README): rank 0 fails first with a dtype error, rank 1
then dies on gloo's "Connection closed by peer", both write ``error.json`` in the same second.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from dtypefix.cli import logfiles
from dtypefix.cli.inputs import InputError
from dtypefix.cli.logfiles import read_bytes, read_log_dir
from dtypefix.matcher import explain
from dtypefix.matcher.logdir import find_logdirs, first_failure, join_ranks

DATA = Path(__file__).parent / "data" / "logdir"
TORCHRUN = DATA / "torchrun-r3"


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    """A writable copy of the torchrun folder and its attempt folder."""
    root = tmp_path / "logs"
    shutil.copytree(TORCHRUN, root)
    (attempt,) = root.glob("*/attempt_0")
    return root, attempt


def test_torchrun_folder_reads_as_the_console_does() -> None:
    from_folder = explain(read_log_dir(str(TORCHRUN)))
    from_console = explain((DATA / "torchrun-r3.console.log").read_text(encoding="utf-8"))
    assert from_folder.incident.root_rank == "0" == from_console.incident.root_rank
    assert from_folder.incident.primary is not None and from_folder.incident.primary.stream == "rank0"
    assert "mat1 and mat2" in from_folder.incident.primary.message
    assert set(from_folder.incident.streams) >= {"rank0", "rank1"}
    assert [m.entry.id for m in from_folder.matches][:1] == [m.entry.id for m in from_console.matches][:1]


def test_a_run_folder_and_an_attempt_folder_read_the_same(tmp_path: Path) -> None:
    root, attempt = _copy(tmp_path)
    assert read_log_dir(str(attempt)) == read_log_dir(str(root)) == read_log_dir(str(attempt.parent))


def test_without_error_files_the_last_exception_is_the_headline(tmp_path: Path) -> None:
    root, attempt = _copy(tmp_path)
    for error in attempt.glob("*/error.json"):
        error.unlink()
    incident = explain(read_log_dir(str(root))).incident
    assert incident.root_rank == ""
    assert incident.primary is not None and incident.primary.stream == "rank1"
    assert "Connection closed by peer" in incident.primary.message


def test_error_file_gives_the_traceback_when_stderr_was_not_redirected(tmp_path: Path) -> None:
    # ``-r 1`` (stdout only): the ranks' tracebacks went to the console; error.json still has rank 0's.
    root, attempt = _copy(tmp_path)
    for stderr in attempt.glob("*/stderr.log"):
        stderr.unlink()
    report = explain(read_log_dir(str(root)))
    assert report.incident.primary is not None and report.incident.primary.stream == "rank0"
    assert report.matches and report.matches[0].entry.id == explain(read_log_dir(str(TORCHRUN))).matches[0].entry.id


def test_the_last_attempt_is_read_and_filtered_copies_are_not() -> None:
    names = [
        "run_x/attempt_0/0/stderr.log",
        "run_x/attempt_1/0/stderr.log",
        "run_x/attempt_1/1/stdout.log",
        "run_x/attempt_1/1/stderr.log.gz",
        "run_x/attempt_1/1/error.json",
        "run_x/attempt_1/filtered_stderr.log",
        "notes.txt",
    ]
    (logdir,), rest = find_logdirs(names)
    assert (logdir.kind, logdir.root, logdir.attempt) == ("torchrun", "run_x", 1)
    assert [(r.rank, r.logs, r.error_file) for r in logdir.ranks] == [
        ("0", ("run_x/attempt_1/0/stderr.log",), None),
        ("1", ("run_x/attempt_1/1/stdout.log", "run_x/attempt_1/1/stderr.log.gz"), "run_x/attempt_1/1/error.json"),
    ]
    assert rest == ("notes.txt",)


def test_rank_named_files_group_by_their_name_pattern() -> None:
    names = [
        "a/job7_rank0.out",
        "a/job7_rank0.err",
        "a/job7_rank1.log.gz",
        "a/job8_RANK_0.log",
        "a/job8_RANK_1.log",
        "a/job9_rank0.log",  # one rank alone is an ordinary log
        "a/frank1.log",  # "rank" inside a word is not a rank
        "a/rank10.log",
    ]
    logdirs, rest = find_logdirs(names)
    assert [(d.label, [(r.rank, r.logs) for r in d.ranks]) for d in logdirs] == [
        ("a/job7_rank*", [("0", ("a/job7_rank0.out", "a/job7_rank0.err")), ("1", ("a/job7_rank1.log.gz",))]),
        ("a/job8_RANK_*", [("0", ("a/job8_RANK_0.log",)), ("1", ("a/job8_RANK_1.log",))]),
    ]
    assert sorted(rest) == ["a/frank1.log", "a/job9_rank0.log", "a/rank10.log"]


@pytest.mark.parametrize(
    ("stamps", "first"),
    [({"0": 20, "1": 10}, "1"), ({"3": 10, "1": 10}, "1"), ({"0": None, "1": 5}, "1"), ({"0": None}, None)],
    ids=["earliest", "tie-lowest-rank", "unreadable-ignored", "none"],
)
def test_first_failure_is_torchruns_choice(stamps: dict[str, int | None], first: str | None) -> None:
    files = {
        rank: "not json"
        if stamp is None
        else json.dumps({"message": {"message": "x", "extraInfo": {"timestamp": str(stamp)}}})
        for rank, stamp in stamps.items()
    }
    assert first_failure(files) == first
    assert first_failure({"2": json.dumps({"message": "RuntimeError: x", "timestamp": 7})}) == "2"


def test_existing_rank_prefixes_are_not_doubled() -> None:
    text = join_ranks([("0", "step 0\r\rstep 1\n[rank0]: RuntimeError: boom\n")])
    assert text == "[rank0]: step 1\n[rank0]: RuntimeError: boom\n"


def test_explain_a_rank_folder_from_the_command_line(cli, tmp_path: Path) -> None:
    folder = tmp_path / "job"
    folder.mkdir()
    (attempt,) = TORCHRUN.glob("*/attempt_0")
    for rank in ("0", "1"):
        data = (attempt / rank / "stderr.log").read_bytes()
        if rank == "1":
            (folder / "train_rank1.log.gz").write_bytes(gzip.compress(data))
        else:
            (folder / "train_rank0.log").write_bytes(data)
    result = cli("explain", str(folder), "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["error"]["stream"] == "rank1"  # no error.json: the last exception
    assert data["matches"][0]["id"] == explain(read_log_dir(str(TORCHRUN))).matches[0].entry.id
    assert cli("explain", str(TORCHRUN), "--format", "json").code == 0


def test_a_folder_with_several_runs_or_none_is_refused(cli, tmp_path: Path) -> None:
    _copy(tmp_path)
    shutil.copytree(tmp_path / "logs", tmp_path / "logs" / "again")
    result = cli("explain", str(tmp_path / "logs"))
    assert result.code == 2 and "holds 2 runs" in result.err and "give one of them" in result.err
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("hello\n")
    result = cli("explain", str(tmp_path / "plain"))
    assert result.code == 2 and "is a directory, not a log" in result.err


def test_gzip_damage_is_a_one_line_reason(tmp_path: Path) -> None:
    whole = gzip.compress(b"RuntimeError: boom\n" * 1000)
    (tmp_path / "cut.log.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError, match="truncated gzip"):
        read_bytes(tmp_path / "cut.log.gz")
    (tmp_path / "bad.log.gz").write_bytes(whole[:10] + b"\x00" * 50 + whole[60:])
    with pytest.raises(InputError, match=r"(corrupt|truncated) gzip"):
        read_bytes(tmp_path / "bad.log.gz")


def test_many_big_ranks_stay_within_the_folder_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logfiles, "FOLDER_BYTES", 1 << 20)
    (attempt,) = TORCHRUN.glob("*/attempt_0")
    traceback = (attempt / "0" / "stderr.log").read_bytes().replace(b"[rank0]:", b"[rank3]:")
    progress = b"".join(
        b"step %d loss 1.234 lr 2e-5 | 10%%|#         | 1/10 [00:01<00:09]\n" % i for i in range(60_000)
    )
    for rank in range(8):
        (tmp_path / f"rank{rank}.log").write_bytes(progress + (traceback if rank == 3 else b"INFO done\n"))
    text = read_log_dir(str(tmp_path))
    assert len(text.encode()) < 8 * (320 << 10)  # each rank its share (256 KiB at least), plus its prefixes
    incident = explain(text).incident
    assert incident.primary is not None and incident.primary.stream == "rank3"
