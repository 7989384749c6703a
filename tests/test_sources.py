"""Inputs behind one interface (cli/sources.py): each argument names one kind of source."""

from __future__ import annotations

from pathlib import Path

import pytest

from dtypefix.cli.inputs import InputError
from dtypefix.cli.sources import DirectorySource, FileSource, StreamSource, source_for


def test_an_argument_names_its_source(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("RuntimeError: boom\n", encoding="utf-8")
    assert source_for(None) == StreamSource() == source_for("-")
    assert source_for(str(log)) == FileSource(str(log))
    assert source_for(str(tmp_path)) == DirectorySource(str(tmp_path))
    assert source_for(str(log)).read() == "RuntimeError: boom\n"


def test_a_folder_without_rank_logs_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        source_for(str(tmp_path)).read()
