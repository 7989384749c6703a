"""Input cleaning: ANSI, carriage returns, timestamps, per-rank streams, odd bytes."""

from __future__ import annotations

import pytest

from dtypefix.matcher.source import decode, from_text, normalise, split_streams


def test_ansi_colour_and_cursor_codes_are_removed() -> None:
    assert normalise("\x1b[31mRuntimeError\x1b[0m: boom\x1b[2K") == "RuntimeError: boom"


def test_tqdm_carriage_returns_keep_the_last_state() -> None:
    line = " 10%|█         | 1/10\r 20%|██        | 2/10\r100%|██████████| 10/10"
    assert normalise(line) == "100%|██████████| 10/10"


def test_crlf_and_nul_bytes() -> None:
    assert normalise("a\r\nb\x00c\r\n") == "a\nbc\n"


def test_launcher_timestamps_are_dropped() -> None:
    text = "[2024-05-01 12:00:01,123] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 45098\n2024-05-01T12:00:01.5Z RuntimeError: x"
    assert normalise(text).splitlines() == [
        "[INFO] [launch.py:315:sigkill_handler] Killing subprocess 45098",
        "RuntimeError: x",
    ]


def test_torchrun_rank_prefixes_are_split_per_rank() -> None:
    text = "\n".join(
        [
            "[rank0]: Traceback (most recent call last):",
            "[rank1]: Traceback (most recent call last):",
            '[rank0]:   File "train.py", line 3, in <module>',
            '[rank1]:   File "train.py", line 3, in <module>',
            "[rank0]: RuntimeError: zero",
            "[rank1]: RuntimeError: one",
        ]
    )
    streams = {s.label: s.text for s in split_streams(text)}
    assert streams["rank0"].splitlines()[-1] == "RuntimeError: zero"
    assert streams["rank1"].splitlines()[0] == "Traceback (most recent call last):"


def test_default_and_pdsh_and_srun_labels() -> None:
    assert {s.label for s in split_streams("[default3]:x\n[default0]:y")} == {"default3", "default0"}
    assert {s.label for s in split_streams("worker-1: a\nworker-0: b")} == {"worker-1", "worker-0"}
    srun = "0: a\n1: b\n0: c\n1: d"
    assert {s.label for s in split_streams(srun)} == {"0", "1"}


def test_pdsh_host_labels_count_when_repeated() -> None:
    text = "server1: a\nserver2: b\nserver1: c"
    assert {s.label: s.text for s in split_streams(text)} == {"server1": "a\nc", "server2": "b"}
    assert [s.label for s in split_streams("epoch1: loss 0.5\nplain line")] == ["main"]


def test_a_single_numbered_line_is_not_a_rank_label() -> None:
    assert [s.label for s in split_streams("1: not a rank\nplain")] == ["main"]


def test_decode_is_lenient() -> None:
    assert decode(b"ok \xff\xfe bad") == "ok \ufffd\ufffd bad"
    assert decode("hé".encode("utf-16")) == "hé"
    assert decode(b"\xef\xbb\xbfRuntimeError") == "RuntimeError"


def test_from_text_keeps_whole_text_and_streams() -> None:
    source = from_text("[rank0]: a\n[rank1]: b")
    assert source.text == "[rank0]: a\n[rank1]: b"
    assert [s.label for s in source.streams] == ["rank0", "rank1"]


def test_carriage_return_only_line_endings_are_lines() -> None:
    """Issue 24 item 10: a log saved with "\\r" line endings is not folded into its last line."""
    log = 'Traceback (most recent call last):\r  File "t.py", line 3, in <module>\r    f()\rRuntimeError: boom\r'
    assert (
        normalise(log)
        == 'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    f()\nRuntimeError: boom\n'
    )


def test_c1_controls_and_bidi_overrides_are_removed() -> None:
    """Issue 24 item 10: U+009B (CSI), U+009D (OSC) and bidi overrides never reach any output."""
    text = "RuntimeError: a\u009b31mred\u009d8;;http://x\u009c b\u202etxt.exe\u2066c\u2069\n"
    clean = normalise(text)
    assert not any(ch in clean for ch in "\u009b\u009d\u009c\u202e\u2066\u2069"), ascii(clean)


@pytest.mark.parametrize("run", [" ", "\t", "\r", " \t"])
def test_a_long_whitespace_run_inside_a_line_is_linear(run: str) -> None:
    """Issue 24 item 2: 200,000 characters of blanks that do not end the line (quadratic: hours; linear: ms)."""
    text = "Traceback (most recent call last):\n" + run * 100_000 + "x\nRuntimeError: boom\n"
    clean = normalise(text)
    assert clean.endswith("x\nRuntimeError: boom\n")
