"""dtypefix.matcher: raw output in, ranked and explained matches out. Never prints, never reads stdin.

The pipeline, one module per stage::

    source -> traceback / packages / configs / flags / hardware -> incident -> score -> result

Typical use::

    from dtypefix.matcher import explain
    report = explain(log_text, freeze=freeze_text, configs=[("ds.json", ds_json_text)])
    for match in report.matches:
        print(match.entry.id, match.confidence, match.entry.title.en)
"""

from __future__ import annotations

from .catalog import Catalog, load_catalog
from .configs import Config, ConfigError, parse_config
from .entry import EntryError, KBEntry, Text
from .explain import check, explain, explain_incident
from .incident import Incident, build_incident
from .result import Decider, Evidence, Match, Report

__all__ = [
    "Catalog",
    "Config",
    "ConfigError",
    "Decider",
    "EntryError",
    "Evidence",
    "Incident",
    "KBEntry",
    "Match",
    "Report",
    "Text",
    "build_incident",
    "check",
    "explain",
    "explain_incident",
    "load_catalog",
    "parse_config",
]
