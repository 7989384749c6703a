"""dtypefix.matcher: raw output in, ranked and explained matches out. Never prints, never reads stdin.

The pipeline, one module per stage::

    source -> traceback / packages / configs / flags / hardware -> incident
    entry YAML -> conditions (checked against facts) -> evidence -> score -> result

Errors (the matcher never lets anything else escape for bad *input*; these are for bad *data*)::

    ValueError
    ├── ConfigError   a config that cannot be read (configs.py); explain() turns it into a note on the Incident
    ├── EntryError    a KB entry that cannot be used: path, field, problem (and line); raised where the YAML
    │                 becomes conditions (conditions/, entry.py, catalog.py); load_catalog() collects these as
    │                 Catalog.problems, lint reports them as file:line: field: problem
    └── PatternError  a KB regex that RE2 refuses (regex.py); surfaces as an EntryError

The CLI adds one more, ``dtypefix.cli.inputs.InputError`` (unreadable or unusable user input: exit code 2).

The API is ``__all__`` below (pinned by ``tests/test_public_api.py``); every module behind it is internal and may
change between releases. The KB-editing tools live apart in ``dtypefix.kbtools`` (``lint``, ``canonical``,
``ids``, ``census``, ``bounds``) and the report's redaction in ``dtypefix.cli.redact``: nothing on the path from text
to report imports them.

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
from .evidence import Evidence, Outcome, Reason
from .explain import check, explain, explain_incident
from .facts import Input
from .incident import Incident, build_incident
from .observation import FrameSeen, Note, Observation, Origin, Place, TextSeen, ValueSeen
from .result import Confidence, Decider, Match, Report

__all__ = [
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
