"""The fix-history index: built from a fixture git repository and fixture wheels made here, looked up on real
released code (diffusers 0.37.1, whose ``MotionConv2d.forward`` 0.38.0 changed in PR #13364)."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest
import yaml

from dtypefix.cli.history_words import coverage_line, history_json, history_lines
from dtypefix.kbtools.history import Library, build_from_archives, build_from_git, main, write_index
from dtypefix.matcher import explain
from dtypefix.matcher.explain import incident_from
from dtypefix.matcher.history import best_change, coverage, fix_history, shown
from dtypefix.matcher.packages import PackageVersion
from dtypefix.matcher.result import Report
from dtypefix.matcher.traceback import Frame, parse_stacks

DATA = Path(__file__).parent / "data" / "history"

_V1 = """import torch


def scale(x, w):
    y = x * 2
    return torch.matmul(y, w)


def name():
    return "fixlib"
"""
# 1.1.0: the fix casts w to the input's dtype (the change the index must name, with its PR).
_V11 = _V1.replace("return torch.matmul(y, w)", "return torch.matmul(y, w.to(y.dtype))")
# 1.2.0: an unrelated change: recorded as a body change, not as a dtype change.
_V12 = _V11.replace('return "fixlib"', 'return "fixlib!"')
_RELEASES = (
    ("1.0.0", _V1, "Initial release"),
    ("1.1.0", _V11, "Cast w to the input dtype (#42)"),
    ("1.2.0", _V12, "Rename"),
)
_LIB = Library("fixlib", "fixlib", "1.0.0", repo="fixture", src="src")
_FRAME = Frame("/venv/lib/python3.11/site-packages/fixlib/ops.py", 6, "scale", "return torch.matmul(y, w)")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def git_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("repo")
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.invalid")
    _git(repo, "config", "user.name", "t")
    (repo / "src" / "fixlib").mkdir(parents=True)
    for version, text, subject in _RELEASES:
        (repo / "src" / "fixlib" / "ops.py").write_text(text)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", subject)
        _git(repo, "tag", f"v{version}")
    out = tmp_path_factory.mktemp("index")
    write_index(out, build_from_git(_LIB, repo / ".git"), [])
    return out


@pytest.fixture(scope="module")
def wheel_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = tmp_path_factory.mktemp("wheels")
    archives = {}
    for version, text, _ in _RELEASES:
        path = wheels / f"fixlib-{version}-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("fixlib/ops.py", text)
            zf.writestr(f"fixlib-{version}.dist-info/METADATA", f"Name: fixlib\nVersion: {version}\n")
        archives[version] = path
    out = tmp_path_factory.mktemp("index")
    missing: list[str] = []
    write_index(out, build_from_archives(_LIB, archives, missing), missing)
    return out


def test_git_index_names_the_fixing_release_and_its_pr(git_index: Path) -> None:
    (found,) = fix_history([_FRAME], {}, folder=str(git_index))
    (change,) = found.changes
    assert (found.library, found.path, found.installed, found.installed_from) == (
        "fixlib",
        "fixlib/ops.py",
        "1.0.0",
        "lines",
    )
    assert found.matching == ("1.0.0",)
    assert (change.release, change.function, change.pr) == ("1.1.0", "scale", 42)
    assert change.subject == "Cast w to the input dtype (#42)"
    assert change.old == ("return torch.matmul(y, w)",)
    assert change.new == ("return torch.matmul(y, w.to(y.dtype))",)
    assert (change.closeness, change.confidence) == ("line", "high")


def test_wheel_index_has_the_change_without_a_pr(wheel_index: Path) -> None:
    (found,) = fix_history([_FRAME], {}, folder=str(wheel_index))
    assert [(c.release, c.pr, c.subject) for c in found.changes] == [("1.1.0", 0, "")]


def test_a_freeze_decides_the_installed_release(git_index: Path) -> None:
    old = {"fixlib": PackageVersion("fixlib", "1.0.0", "freeze")}
    (found,) = fix_history([_FRAME], old, folder=str(git_index))
    assert (found.installed, found.installed_from) == ("1.0.0", "versions")
    fixed = {"fixlib": PackageVersion("fixlib", "1.1.0", "freeze")}
    assert fix_history([_FRAME], fixed, folder=str(git_index)) == ()


def test_nothing_when_nothing_changed(git_index: Path) -> None:
    # Its line says 1.2.0, the newest release: no later release changed anything (a frame of 1.0.0 in ``name``
    # would get 1.1.0's change to ``scale`` beside it, with low confidence).
    unchanged = Frame("/venv/lib/python3.11/site-packages/fixlib/ops.py", 10, "name", 'return "fixlib!"')
    elsewhere = Frame("/home/me/train.py", 6, "scale", "return torch.matmul(y, w)")
    assert fix_history([unchanged, elsewhere], {}, folder=str(git_index)) == ()


def test_a_frame_in_a_function_that_never_changed_still_says_which_release_runs(git_index: Path) -> None:
    # Every line of a file with a dtype change is hashed, not only the changed functions' lines: ``name`` never
    # had a dtype change, yet its line text at line 10 says 1.0.0 or 1.1.0 (1.2.0 changed it).
    unchanged = Frame("/venv/lib/python3.11/site-packages/fixlib/ops.py", 10, "name", 'return "fixlib"')
    (found,) = fix_history([unchanged], {}, folder=str(git_index))
    assert (found.installed_from, found.matching) == ("lines", ("1.0.0", "1.1.0"))
    assert [(c.function, c.closeness, c.confidence) for c in found.changes] == [("scale", "file", "low")]


def test_a_line_that_matches_no_release_gives_no_answer(git_index: Path) -> None:
    edited = Frame(_FRAME.file, 6, "scale", "return my_own_matmul(y, w)")
    assert fix_history([edited], {}, folder=str(git_index)) == ()


def test_coverage_states_the_releases(git_index: Path) -> None:
    cover = coverage(str(git_index))
    assert cover.libraries == (("fixlib", "1.0.0", "1.2.0", 3),)
    assert cover.built


def test_build_command_refuses_an_unknown_library(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "no-such-library"]) == 2
    assert "no-such-library" in capsys.readouterr().err


# ----------------------------------------------------------------- the shipped index, on real released code

_REAL = (DATA / "wan-animate-0.37.1.log").read_text(encoding="utf-8")


def test_shipped_index_names_diffusers_0_38_0_for_a_0_37_1_traceback() -> None:
    report = explain(_REAL)
    (frame, *_) = report.history
    assert (frame.library, frame.installed, frame.installed_from) == ("diffusers", "0.37.1", "lines")
    assert frame.matching[-1] == "0.37.1"
    change = frame.changes[0]
    assert (change.release, change.pr, change.closeness) == ("0.38.0", 13364, "line")
    assert any("expanded_kernel.to(x.dtype)" in line for line in change.new)


def test_shipped_index_is_silent_when_the_fix_is_installed() -> None:
    report = explain(_REAL, freeze="diffusers==0.38.0")
    assert report.history == ()


def test_first_screen_and_json_word_the_change() -> None:
    report = explain(_REAL, freeze="diffusers==0.37.1")
    en = "\n".join(history_lines(report, "en"))
    zh = "\n".join(history_lines(report, "zh"))
    assert "diffusers 0.38.0 changed this line:" in en
    assert "(#13364)" in en
    assert "you have 0.37.1: upgrade" in en
    assert "diffusers 0.38.0 改了出错的这一行" in zh
    assert "你装的是 0.37.1" in zh
    (row,) = history_json(report)[:1]
    assert row["library"] == "diffusers"
    assert row["changes"][0]["pr"] == 13364
    json.dumps(row)


def test_version_line_states_what_the_index_covers() -> None:
    line = coverage_line()
    assert line.startswith("fix-history index: built ")
    assert "diffusers 0.24.0–" in line


# ------------------------------------------------------ nearness, neighbours, checkouts (a second fixture module)

_B1 = '''import torch


class Blur:
    def __init__(self, k):
        self.k = torch.tensor(k)

    def forward(self, x):
        return torch.conv2d(x, self.k)


def pad(x):
    """Pad.





    Widen.
    """
    y = x.float()
    return y * 2
'''
# 1.1.0: the kernel buffer gets the half dtype (Blur.forward itself never changes), and pad stops upcasting.
_B11 = _B1.replace("torch.tensor(k)", "torch.tensor(k, dtype=torch.float16)").replace("y = x.float()", "y = x")


def _line(text: str, code: str) -> int:
    return text.splitlines().index(next(x for x in text.splitlines() if x.strip() == code)) + 1


@pytest.fixture(scope="module")
def blur_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = tmp_path_factory.mktemp("blur")
    archives = {}
    for version, text in (("1.0.0", _B1), ("1.1.0", _B11)):
        path = wheels / f"fixlib-{version}-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("fixlib/blur.py", text)
        archives[version] = path
    out = tmp_path_factory.mktemp("index")
    write_index(out, build_from_archives(_LIB, archives, []), [])
    return out


def _blur(code: str, function: str, root: str = "/venv/lib/python3.11/site-packages") -> Frame:
    return Frame(f"{root}/fixlib/blur.py", _line(_B1, code), function, code)


def test_a_change_two_lines_up_is_near_even_after_a_docstring_with_blank_lines(blur_index: Path) -> None:
    (found,) = fix_history([_blur("return y * 2", "pad")], {}, folder=str(blur_index))
    (change,) = found.changes
    assert (change.function, change.closeness, change.old) == ("pad", "near", ("y = x.float()",))


def test_an_unchanged_function_gets_the_change_beside_it_with_low_confidence(blur_index: Path) -> None:
    frames = [_blur("return y * 2", "pad"), _blur("return torch.conv2d(x, self.k)", "forward")]
    found = fix_history(frames, {}, folder=str(blur_index))
    forward = next(f for f in found if f.function == "forward")
    nearest = forward.changes[0]  # nearest first: the constructor two lines up, then pad below
    assert (nearest.function, nearest.closeness, nearest.confidence) == ("Blur.__init__", "file", "low")
    assert [c.function for c in forward.changes] == ["Blur.__init__", "pad"]
    # the installed release comes from the frames' lines (every line of a file with a dtype change is hashed); they
    # are the same in both releases, so the answer states the range and names the change inside it
    assert (forward.installed_from, forward.matching) == ("lines", ("1.0.0", "1.1.0"))


def test_a_paste_with_its_frames_at_column_0_gets_its_source_lines_from_the_text(blur_index: Path) -> None:
    # The shape of a log whose frame lines lost their indentation: the source lines sit two spaces in, not four.
    text = (
        'File "/venv/lib/python3.11/site-packages/fixlib/blur.py", line {}, in pad\n'
        "  return y * 2\n"
        "ValueError: Expected a cuda device, but got: cpu\n"
    ).format(_line(_B1, "return y * 2"))
    bare = (Frame("/venv/lib/python3.11/site-packages/fixlib/blur.py", _line(_B1, "return y * 2"), "pad", ""),)
    assert fix_history(bare, {}, folder=str(blur_index)) == ()  # no source line: no release can be matched
    (found,) = fix_history(bare, {}, folder=str(blur_index), text=text)
    assert (found.code, found.installed_from, found.changes[0].closeness) == ("return y * 2", "lines", "near")


def test_a_source_checkout_is_answered_only_when_its_lines_match_a_release(blur_index: Path) -> None:
    checkout = _blur("return y * 2", "pad", root="/code/fixlib-src")
    assert fix_history([checkout], {}, folder=str(blur_index))
    edited = Frame(checkout.file, checkout.line, "pad", "return y * 3")
    old = {"fixlib": PackageVersion("fixlib", "1.0.0", "freeze")}
    assert fix_history([edited], old, folder=str(blur_index)) == ()


def test_a_development_build_falls_back_to_its_lines_when_its_version_finds_nothing(blur_index: Path) -> None:
    """``fixlib==1.0.1.dev0`` lies after 1.0.0: the 1.1.0 change is after it. ``fixlib==1.2.0.dev0`` (as a
    reporter's freeze can say while the frames run older code) finds nothing after it, so the frames' lines decide,
    as with no freeze."""
    frame = _blur("return y * 2", "pad")
    plain = fix_history([frame], {}, folder=str(blur_index))
    (between,) = fix_history(
        [frame], {"fixlib": PackageVersion("fixlib", "1.0.1.dev0", "freeze")}, folder=str(blur_index)
    )
    assert between.installed == "1.0.1.dev0" and [c.release for c in between.changes] == ["1.1.0"]
    ahead = {"fixlib": PackageVersion("fixlib", "1.2.0.dev0", "freeze")}
    assert plain and fix_history([frame], ahead, folder=str(blur_index)) == plain


def test_a_path_the_reporter_shortened_is_answered_like_a_checkout(blur_index: Path) -> None:
    """``fixlib/blur.py`` (the reporter cut the site-packages prefix): the package is the path's first folder."""
    short = Frame("fixlib/blur.py", _line(_B1, "return y * 2"), "pad", "return y * 2")
    (found,) = fix_history([short], {}, folder=str(blur_index))
    assert found.path == "fixlib/blur.py" and [c.release for c in found.changes] == ["1.1.0"]


def test_a_checkout_numbered_its_own_way_is_matched_by_the_failing_lines_text(blur_index: Path) -> None:
    # the repository folder has the package's name too (/code/fixlib/src/fixlib/...); two lines were added above
    moved = Frame("/code/fixlib/src/fixlib/blur.py", _line(_B1, "return y * 2") + 2, "pad", "return y * 2")
    (found,) = fix_history([moved], {}, folder=str(blur_index))
    assert (found.path, found.installed_from, found.matching) == ("fixlib/blur.py", "text", ("1.0.0", "1.1.0"))
    (change,) = found.changes
    assert (change.release, change.closeness) == ("1.1.0", "near")  # measured where the text is, not line 24
    report = Report(incident_from(""), (), history=(found,))
    assert "not their line numbers" in "\n".join(history_lines(report, "en"))
    assert "行号对不上" in "\n".join(history_lines(report, "zh"))


def test_an_install_whose_text_is_the_newest_releases_at_other_numbers_may_be_newer_than_the_index(
    blur_index: Path,
) -> None:
    # site-packages, so not an edited checkout: a release newer than the index (whose changes the text range all
    # holds) reads the same, and nothing may be claimed; deepspeed 0.19.8 against an index ending at 0.19.5 did.
    moved = Frame(
        "/venv/lib/python3.11/site-packages/fixlib/blur.py", _line(_B1, "return y * 2") + 2, "pad", "return y * 2"
    )
    assert fix_history([moved], {}, folder=str(blur_index)) == ()


def test_a_stated_version_numbered_otherwise_is_searched_by_the_failing_lines_text(blur_index: Path) -> None:
    # The freeze says 1.0.0 but the printed numbers are another copy's (five lines lower): the failing line is
    # found by its text in 1.0.0's pad, and the change two lines above it is near, not elsewhere in the function.
    shifted = Frame(_blur("return y * 2", "pad").file, _line(_B1, "return y * 2") + 5, "pad", "return y * 2")
    (found,) = fix_history([shifted], {"fixlib": PackageVersion("fixlib", "1.0.0", "freeze")}, folder=str(blur_index))
    assert [(c.release, c.closeness) for c in found.changes] == [("1.1.0", "near")]


def test_first_screen_names_the_frame_whose_line_changed_before_a_neighbour(blur_index: Path) -> None:
    frames = [_blur("return y * 2", "pad"), _blur("return torch.conv2d(x, self.k)", "forward")]
    found = fix_history(frames, {}, folder=str(blur_index))
    assert [f.function for f in found] == ["forward", "pad"]  # innermost first
    assert [f.function for f in shown(found, 1)] == ["pad"]
    en = "\n".join(history_lines(Report(incident_from(""), (), history=found), "en"))
    zh = "\n".join(history_lines(Report(incident_from(""), (), history=found), "zh"))
    assert "fixlib 1.1.0 changed the dtype handling next to this line in `pad`" in en
    assert "a weaker lead" in en and "线索较弱" in zh


def test_a_paste_cut_inside_its_first_frame_line_still_names_the_frame() -> None:
    text = (
        'site-packages\\diffusers\\models\\attention_processor.py", line 902, in apply_quadratic_attention\n'
        "    hidden_states = torch.matmul(value, scores)\n"
        "RuntimeError: expected scalar type Float but found Half\n"
    )
    (stack,) = parse_stacks(text)
    (frame,) = stack.frames
    assert (frame.line, frame.function, frame.code) == (
        902,
        "apply_quadratic_attention",
        "hidden_states = torch.matmul(value, scores)",
    )


# ------------------------------------------- development cases: real reports whose fix was a library release

DEV = Path(__file__).parent / "data" / "history_dev"


def _dev_cases() -> list[tuple[str, dict[str, object]]]:
    return [(p.stem, yaml.safe_load(p.read_text(encoding="utf-8"))) for p in sorted(DEV.glob("*.yaml"))]


# The answers the shipped index gives today; a case that regresses fails here. peft-1495 and diffusers-8391 come
# from checkouts between two releases: their line numbers match no release, their failing lines' text does.
_DEV_EXPECTED = {
    "ace-step-219": ("diffusers", "0.33.0", "line"),
    "deepspeed-7636": ("deepspeed", "0.18.1", "line"),
    "deepspeed-7653": ("deepspeed", "0.18.1", "line"),
    "diffusers-7854": ("diffusers", "0.28.0", "near"),
    "diffusers-10125": ("diffusers", "0.32.0", "near"),
    "liger-603": ("liger-kernel", "0.6.2", "function"),
    "peft-1495": ("peft", "0.9.0", "near"),
    "diffusers-8391": ("diffusers", "0.33.0", "line"),
    # 0.49.0 rewrote the line above the failing one; the fix (0.46.1, #1665) is further down: see the next test.
    "bitsandbytes-1664": ("bitsandbytes", "0.49.0", "near"),
    # the failing function never changed: a later change beside it in stage3.py, a weaker lead
    "deepspeed-axolotl-1698": ("deepspeed", "0.15.0", "file"),
}


@pytest.mark.parametrize(("name", "case"), _dev_cases(), ids=[n for n, _ in _dev_cases()])
def test_dev_case(name: str, case: dict[str, object]) -> None:
    for freeze in ("", str(case.get("freeze") or "")):
        report = explain(str(case["log"]), freeze=freeze)
        mine = [f for f in shown(report.history) if f.library == case["library"]]
        expected = _DEV_EXPECTED[name]
        if expected is None:
            assert not mine
            continue
        change = best_change(mine[0])
        assert (mine[0].library, change.release, change.closeness) == expected
        if case["fixed_in"] is None:  # no release fixed it: never a claim on the failing line or next to it
            assert change.closeness not in ("line", "near")


def test_the_fix_that_only_added_an_argument_to_a_move_is_listed() -> None:
    """bitsandbytes 0.46.1 (#1665) fixed Params4bit.to by passing one more keyword to the statement that moves the
    parameter (released code: the implementation after two ``@overload`` stubs)."""
    case = dict(_dev_cases())["bitsandbytes-1664"]
    report = explain(str(case["log"]), freeze=str(case["freeze"]))
    to = next(f for f in report.history if f.function == "to")
    fix = next(c for c in to.changes if c.release == "0.46.1")
    assert (fix.function, fix.pr, fix.new) == ("Params4bit.to", 1665, ("bnb_quantized=self.bnb_quantized,",))


# ------------------------------------------------------------------ a file that moved before the fix was made

_M1 = """import torch


def blend(x, w):
    y = x * w
    return torch.matmul(y, w)
"""
# 1.1.0 moves fixlib/old/mix.py to fixlib/new/mix.py unchanged; 1.2.0 casts w there. A second module keeps its own
# blend() in place the whole time: a same-named function that must never be taken for the moved one.
_M12 = _M1.replace("torch.matmul(y, w)", "torch.matmul(y, w.to(y.dtype))")
_OTHER = _M1.replace("y = x * w", "y = x + w")


@pytest.fixture(scope="module")
def moved_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = tmp_path_factory.mktemp("moved")
    layout = {
        "1.0.0": {"fixlib/old/mix.py": _M1, "fixlib/keep.py": _OTHER},
        "1.1.0": {"fixlib/new/mix.py": _M1, "fixlib/keep.py": _OTHER},
        "1.2.0": {"fixlib/new/mix.py": _M12, "fixlib/keep.py": _OTHER.replace("y = x + w", "y = (x + w).float()")},
    }
    archives = {}
    for version, files in layout.items():
        path = wheels / f"fixlib-{version}-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            for name, text in files.items():
                zf.writestr(name, text)
        archives[version] = path
    out = tmp_path_factory.mktemp("index")
    write_index(out, build_from_archives(_LIB, archives, []), [])
    return out


def test_a_fix_made_after_the_file_moved_is_found_in_its_new_file(moved_index: Path) -> None:
    frame = Frame("/venv/lib/python3.11/site-packages/fixlib/old/mix.py", 6, "blend", "return torch.matmul(y, w)")
    old = {"fixlib": PackageVersion("fixlib", "1.0.0", "freeze")}
    (found,) = fix_history([frame], old, folder=str(moved_index))
    (change,) = found.changes
    assert (change.release, change.closeness, change.moved_to) == ("1.2.0", "line", "fixlib/new/mix.py")
    report = Report(incident_from(""), (), history=(found,))
    assert "(the code has since moved to `fixlib/new/mix.py`)" in "\n".join(history_lines(report, "en"))
    assert "这段代码之后移到了 `fixlib/new/mix.py`" in "\n".join(history_lines(report, "zh"))
    assert history_json(report)[0]["changes"][0]["moved_to"] == "fixlib/new/mix.py"


def test_a_same_named_function_in_a_file_that_stayed_is_not_taken_for_a_moved_one(moved_index: Path) -> None:
    # keep.py's blend changed in 1.2.0 too, but keep.py never moved: a frame in a file the index does not know gets
    # no answer from keep.py (two candidates would be ambiguous; one that existed beside it is another function)
    frame = Frame("/venv/lib/python3.11/site-packages/fixlib/gone/keep.py", 6, "blend", "return torch.matmul(y, w)")
    old = {"fixlib": PackageVersion("fixlib", "1.0.0", "freeze")}
    assert fix_history([frame], old, folder=str(moved_index)) == ()


def test_a_change_to_the_failing_line_quotes_the_line_that_replaced_it() -> None:
    """The 0.33.0 change to PixArtSigmaPipeline.__call__ touched several places; the first screen quotes the one
    that replaced the line that failed, not the first added line of the function."""
    case = yaml.safe_load((DEV / "diffusers-8391.yaml").read_text(encoding="utf-8"))
    en = "\n".join(history_lines(explain(case["log"]), "en"))
    assert "changed this line: `image = self.vae.decode(latents.to(self.vae.dtype) /" in en


# ------------------------------------------- an @overload'ed method, a change inside a multi-line dtype statement

_P1 = """from typing import overload

import torch


class Param:
    @overload
    def to(self, device=..., dtype=...): ...

    @overload
    def to(self, tensor): ...

    def to(self, *args, **kwargs):
        device, dtype, _, _ = torch._C._nn._parse_to(*args, **kwargs)
        new = Param(
            super().to(device=device, dtype=dtype),
            requires_grad=self.requires_grad,
        )
        return new
"""
# 1.1.0, as bitsandbytes 0.46.1 did to Params4bit.to (#1665): the moved parameter keeps its state, through a
# keyword added to the statement that moves it, on a line that names no dtype or device itself.
_P11 = _P1.replace(
    "requires_grad=self.requires_grad,\n", "requires_grad=self.requires_grad,\n            quantized=self.quantized,\n"
)


@pytest.fixture(scope="module")
def param_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = tmp_path_factory.mktemp("param")
    archives = {}
    for version, text in (("1.0.0", _P1), ("1.1.0", _P11)):
        path = wheels / f"fixlib-{version}-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("fixlib/param.py", text)
        archives[version] = path
    out = tmp_path_factory.mktemp("index")
    write_index(out, build_from_archives(Library("fixlib", "fixlib", "1.0.0"), archives), [])
    return out


def test_a_change_inside_a_multi_line_dtype_statement_of_an_overloaded_method_is_indexed(param_index: Path) -> None:
    frame = Frame("/venv/site-packages/fixlib/param.py", _line(_P1, "new = Param("), "to", "new = Param(")
    (found,) = fix_history([frame], {}, folder=str(param_index))
    (change,) = found.changes
    assert (change.release, change.function, change.new) == ("1.1.0", "Param.to", ("quantized=self.quantized,",))
    assert (change.closeness, change.confidence) == ("near", "low")  # the line reads the same in 1.0.0 and 1.1.0
    old = {"fixlib": PackageVersion("fixlib", "1.0.0", "freeze")}
    (stated,) = fix_history([frame], old, folder=str(param_index))
    assert (stated.changes[0].closeness, stated.changes[0].confidence) == ("near", "medium")


def test_releases_newer_than_the_mirror_come_from_their_wheels(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "fixlib").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.invalid")
    _git(repo, "config", "user.name", "t")
    for version, text, subject in _RELEASES[:2]:
        (repo / "src" / "fixlib" / "ops.py").write_text(text)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", subject)
        _git(repo, "tag", f"v{version}")
    # 1.2.0 is on the package index only; it casts the result to float32 as well.
    newer = _V12.replace("w.to(y.dtype))", "w.to(y.dtype)).float()")
    wheel = tmp_path / "fixlib-1.2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("fixlib/ops.py", newer)
    older = tmp_path / "fixlib-1.0.0-py3-none-any.whl"  # already a tag: the mirror's copy is the one read
    index = build_from_git(_LIB, repo / ".git", {"1.0.0": older, "1.2.0": wheel})
    assert index["releases"] == ["1.0.0", "1.1.0", "1.2.0"]
    events = index["files"]["fixlib/ops.py"]["e"]
    assert [(e["r"], e.get("pr", 0)) for e in events] == [(1, 42), (2, 0)]


_H1 = """import torch


def helper(x):
    return x.float()


def step(x, w):
    y = helper(x)
    return torch.matmul(y, w)
"""
# 1.1.0 casts w in step; 1.2.0 stops helper upcasting (the later change is beside step, not in it).
_H11 = _H1.replace("torch.matmul(y, w)", "torch.matmul(y, w.to(y.dtype))")
_H12 = _H11.replace("return x.float()", "return x.to(torch.bfloat16)")


def _fixlib_index(folder: Path, member: str, releases: tuple[tuple[str, str], ...]) -> None:
    """An index in ``folder`` built from one wheel per ``(version, text of member)`` of a made-up library."""
    archives = {}
    for version, text in releases:
        path = folder / f"fixlib-{version}-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(member, text)
        archives[version] = path
    write_index(folder, build_from_archives(Library("fixlib", "fixlib", "1.0.0"), archives), [])


def test_a_function_whose_own_changes_are_all_installed_gets_a_later_change_beside_it(tmp_path: Path) -> None:
    _fixlib_index(tmp_path, "fixlib/step.py", (("1.0.0", _H1), ("1.1.0", _H11), ("1.2.0", _H12)))
    code = "return torch.matmul(y, w.to(y.dtype))"
    frame = Frame("/venv/site-packages/fixlib/step.py", _line(_H11, code), "step", code)
    have = {"fixlib": PackageVersion("fixlib", "1.1.0", "freeze")}
    (found,) = fix_history([frame], have, folder=str(tmp_path))
    (change,) = found.changes
    assert (change.release, change.function, change.closeness, change.confidence) == ("1.2.0", "helper", "file", "low")
    # a lead beside the failing function is never worded as the likely fix
    en = "\n".join(history_lines(Report(incident_from(""), (), history=(found,)), "en"))
    zh = "\n".join(history_lines(Report(incident_from(""), (), history=(found,)), "zh"))
    assert "not a likely fix" in en and "likely the fix" not in en
    assert "未必就是修复" in zh and "很可能就是修复" not in zh


_R1 = """def merge(x):
    if x.dtype == "fp16":
        raise ValueError("cannot merge fp16 weights")
    return x
"""
# 1.1.0 moves the check, unchanged, into a helper (a refactor: the failing line lives on); 1.2.0 fixes it there.
_R11 = """def merge(x):
    return _merge(x)


def _merge(x):
    if x.dtype == "fp16":
        raise ValueError("cannot merge fp16 weights")
    return x
"""
_R12 = _R11.replace('raise ValueError("cannot merge fp16 weights")', "x = x.to(torch.float32)")


def test_a_refactor_that_moved_the_failing_line_is_not_the_change_to_it(tmp_path: Path) -> None:
    _fixlib_index(tmp_path, "fixlib/merge.py", (("1.0.0", _R1), ("1.1.0", _R11), ("1.2.0", _R12)))
    code = 'raise ValueError("cannot merge fp16 weights")'
    frame = Frame("/venv/site-packages/fixlib/merge.py", _line(_R1, code), "merge", code)
    (found,) = fix_history([frame], {}, folder=str(tmp_path))
    assert [(c.release, c.function, c.closeness) for c in found.changes] == [
        ("1.1.0", "merge", "function"),
        ("1.2.0", "_merge", "line"),
    ]
    assert best_change(found).release == "1.2.0"


def test_a_change_in_the_indexed_patch_of_the_installed_minor_is_not_surely_later(tmp_path: Path) -> None:
    """An index that keeps the last patch of each minor (torch, vLLM): for 1.1.0, a change first seen in 1.1.2 may be
    in 1.1.0 already; for 1.0.5 it is surely later."""
    _fixlib_index(tmp_path, "fixlib/ops.py", (("1.0.3", _V1), ("1.1.2", _V11)))
    same_minor = {"fixlib": PackageVersion("fixlib", "1.1.0", "freeze")}
    (found,) = fix_history([_FRAME], same_minor, folder=str(tmp_path))
    (change,) = found.changes
    assert (change.release, change.sure, change.confidence) == ("1.1.2", False, "medium")  # its very line
    en = "\n".join(history_lines(Report(incident_from(""), (), history=(found,)), "en"))
    assert "1.1.0 may already have this change" in en
    older = {"fixlib": PackageVersion("fixlib", "1.0.5", "freeze")}
    (found,) = fix_history([_FRAME], older, folder=str(tmp_path))
    assert (found.changes[0].sure, found.changes[0].confidence) == (True, "high")


def test_real_recordings_lines_name_the_release_that_ran() -> None:
    """Real H100 output (tests/data/recorded/h100-*.log, the versions that ran in each .yaml) read without a freeze:
    the releases the library frames' lines match hold the installed one, and no change is called surely later that
    the installed release already has."""
    from packaging.version import Version

    checked = 0
    for log in sorted((Path(__file__).parent / "data" / "recorded").glob("h100-*.log")):
        meta = yaml.safe_load(log.with_suffix(".yaml").read_text(encoding="utf-8"))
        ran = {name: str(version).split("+", 1)[0] for name, version in meta["versions"].items()}
        for frame in explain(log.read_text(encoding="utf-8")).history:
            if frame.library not in ran or frame.installed_from != "lines":
                continue
            checked += 1
            assert ran[frame.library] in frame.matching, (log.name, frame.library, frame.matching)
            for change in frame.changes:
                assert not change.sure or Version(change.release) > Version(ran[frame.library]), (log.name, change)
    assert checked >= 10
