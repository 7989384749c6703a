"""The public API is pinned: what scripts, editors and notebooks may import. Everything else is internal.

Changing this list is a decision (and a CHANGELOG line), never a side effect of a refactor.
"""

from __future__ import annotations

import importlib

import dtypefix.matcher

MATCHER_API = [
    "Catalog",
    "Confidence",
    "Config",
    "ConfigError",
    "Decider",
    "EntryError",
    "Evidence",
    "FrameSeen",
    "Incident",
    "Input",
    "KBEntry",
    "Match",
    "Note",
    "Observation",
    "Origin",
    "Outcome",
    "Place",
    "Reason",
    "Report",
    "Text",
    "TextSeen",
    "ValueSeen",
    "build_incident",
    "check",
    "explain",
    "explain_incident",
    "load_catalog",
    "parse_config",
]
CLI_API = {
    "dtypefix.cli.app": ["main", "run"],
    "dtypefix.cli.hook": ["install", "uninstall", "explain_exception"],
    "dtypefix.cli.ipython": ["load_ipython_extension", "unload_ipython_extension"],
}


def test_matcher_exports_exactly_the_pinned_api() -> None:
    assert sorted(dtypefix.matcher.__all__) == sorted(MATCHER_API)
    for name in MATCHER_API:
        assert getattr(dtypefix.matcher, name) is not None, name


def test_cli_entry_points_exist() -> None:
    for module, names in CLI_API.items():
        loaded = importlib.import_module(module)
        for name in names:
            assert callable(getattr(loaded, name)), f"{module}.{name}"


def test_the_pipeline_never_imports_the_kb_tools_or_redaction() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from dtypefix.matcher import explain; explain('RuntimeError: expected mat1 and mat2')\n"
        "print(sorted(m for m in sys.modules if m.startswith('dtypefix.kbtools') or m == 'dtypefix.cli.redact'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
