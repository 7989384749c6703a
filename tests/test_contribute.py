"""The contributor path, as CONTRIBUTING.md describes it: new -> write -> lint -> search -> docs."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from dtypefix.kbtools.canonical import canonical_text
from dtypefix.matcher.catalog import builtin_kb_dir, load_catalog

MESSAGE = "ValueError: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."


def test_new_writes_a_skeleton_that_lint_rejects_until_filled(cli, tmp_path: Path) -> None:
    root = tmp_path / "kb"
    root.mkdir()
    log = tmp_path / "my.log"
    log.write_text(MESSAGE + "\n", encoding="utf-8")
    result = cli(
        "new",
        "--kb-root",
        str(root),
        "--area",
        "deepspeed",
        "--title",
        "Loss scale collapse in my org",
        "--message",
        MESSAGE,
        "--example",
        str(log),
    )
    assert result.code == 0, result.err
    path = root / "deepspeed" / "loss-scale-collapse-in-my-org.yaml"
    assert path.is_file() and (path.with_suffix("") / "example-1.log").read_text() == MESSAGE + "\n"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    builtin_ids = {e.id for e in load_catalog(cache_dir=None).entries}
    assert data["id"].startswith("DTF2") and data["id"] not in builtin_ids  # never an id the built-in KB uses
    assert (root / "ids.txt").read_text() == f"{data['id']} deepspeed/loss-scale-collapse-in-my-org\n"
    lint = cli("lint", str(root))
    assert lint.code == 1 and "TODO(dtypefix new)" in lint.out

    # A second scaffold in the same area takes the next id.
    again = cli("new", "--kb-root", str(root), "--area", "deepspeed", "--title", "Another one", "--message", MESSAGE)
    assert again.code == 0
    second = yaml.safe_load((root / "deepspeed/another-one.yaml").read_text())["id"]
    assert second not in builtin_ids and int(second[3:]) > int(data["id"][3:])


def test_a_filled_private_entry_passes_lint_and_is_found(cli, tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "kb"
    source = builtin_kb_dir() / "family" / "device-mismatch.yaml"
    (root / "private").mkdir(parents=True)
    shutil.copytree(source.with_suffix(""), root / "private" / "our-cluster-device-mismatch")
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["id"] = "DTF900"
    data["kind"] = "cause"
    data["title"] = {
        "en": "Our cluster's launcher leaves inputs on the CPU",
        "zh": "我们集群的启动脚本把输入留在了 CPU 上",
    }
    for item in data["match"]["errors"]:
        item["weight"] = item["weight"] + 2
    (root / "private" / "our-cluster-device-mismatch.yaml").write_text(canonical_text(data), encoding="utf-8")
    assert cli("lint", str(root)).code == 0
    monkeypatch.setenv("DTYPEFIX_KB", str(root))
    found = cli("search", "集群的启动脚本", "--format", "md")
    assert found.code == 0 and "DTF900" in found.out.splitlines()[2]
    explained = cli(
        "explain",
        "--format",
        "md",
        stdin=b"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
    )
    assert explained.out.startswith("# DTF900: Our cluster")


def test_broken_private_entry_is_skipped_with_a_warning(cli, tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "kb"
    (root / "private").mkdir(parents=True)
    (root / "private" / "broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    monkeypatch.setenv("DTYPEFIX_KB", str(root))
    result = cli("explain", "--format", "md", stdin=b"RuntimeError: expected scalar type Float but found Half\n")
    assert result.code == 0
    assert "skipped KB entry" in result.err and "broken.yaml" in result.err


def test_search_examples_from_the_issue(cli) -> None:
    assert "DTF006" in cli("search", "unscale fp16", "--format", "md").out.splitlines()[2]
    zh = cli("search", "半精度", "--format", "json")
    assert zh.code == 0 and '"results"' in zh.out


def test_new_without_kb_root_never_writes_into_the_installed_package(cli, tmp_path: Path, monkeypatch) -> None:
    from dtypefix.matcher.catalog import builtin_kb_dir

    before = sorted(p.name for p in builtin_kb_dir().rglob("*.yaml"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DTYPEFIX_KB", raising=False)
    result = cli("new", "--area", "deepspeed", "--title", "Somewhere else", "--message", MESSAGE)
    assert result.code == 2 and "--kb-root" in result.err
    assert sorted(p.name for p in builtin_kb_dir().rglob("*.yaml")) == before
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "ids.txt").write_text("# ledger\n", encoding="utf-8")
    made = cli("new", "--area", "deepspeed", "--title", "Somewhere else", "--message", MESSAGE)
    assert made.code == 0 and list((tmp_path / "kb" / "deepspeed").glob("*.yaml"))
