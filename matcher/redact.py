"""Removing secrets and personal details from text that is about to be shared.

A bug report carries environment dumps, command lines and logs, and those carry tokens (Hugging Face, W&B,
OpenAI-style, AWS), bearer headers, e-mail addresses, the user's name in home paths, hostnames and IPs. Each rule
replaces what it finds with a labelled placeholder and counts it, so the report can say what was removed
without repeating it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["Redaction", "redact"]

# Public hosts that appear in tracebacks, pip output and references: never personal.
_PUBLIC_HOSTS = (
    "github.com",
    "githubusercontent.com",
    "huggingface.co",
    "hf.co",
    "pypi.org",
    "pythonhosted.org",
    "pytorch.org",
    "nvidia.com",
    "python.org",
    "anaconda.org",
    "anaconda.com",
    "conda.io",
    "readthedocs.io",
    "microsoft.com",
    "google.com",
    "googleapis.com",
    "amazonaws.com",
    "wandb.ai",
    "openai.com",
    "deepspeed.ai",
    "example.com",
)

# (kind, pattern, replacement); order matters: specific tokens before generic key=value rules.
_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "private key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
        "<private key>",
    ),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), "<hf token>"),
    ("OpenAI-style key", re.compile(r"\bsk-(?:proj-|ant-|live-)?[A-Za-z0-9_-]{20,}"), "<api key>"),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"), "<aws key id>"),
    (
        "AWS secret key",
        re.compile(r"(?i)(aws_secret_access_key\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{30,}"),
        r"\1<aws secret>",
    ),
    (
        "W&B API key",
        re.compile(r"(?i)((?:wandb_api_key|wandb login(?: --relogin)?)\s*[=:\s]\s*[\"']?)[0-9a-z_-]{32,}"),
        r"\1<wandb key>",
    ),
    ("bearer token", re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{12,}"), r"\1<token>"),
    ("GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b"), "<github token>"),
    (
        "secret setting",
        re.compile(
            r"(?i)(\b[\w.-]*(?:token|api[_-]?key|secret|passw(?:or)?d)[\w.-]*[\"']?\s*[=:]\s*[\"']?)(?!<)[^\s\"',;]{8,}"
        ),
        r"\1<secret>",
    ),
    ("e-mail address", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"), "<email>"),
    ("user name in a path", re.compile(r"(/home/|/Users/|/data/home/)(?!user/)[^/\s\"']+"), r"\1user"),
    ("user name in a path", re.compile(r"([A-Za-z]:\\+Users\\+)(?!user\\)[^\\\s\"']+"), r"\1user"),
    ("user@host", re.compile(r"\b[a-z_][a-z0-9_-]*@[A-Za-z0-9-]+(?=:)"), "user@host"),
    (
        "IP address",
        re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.])"),
        "<ip>",
    ),
)
_FQDN = re.compile(r"\b(?:[A-Za-z0-9-]+\.)+(?:com|net|org|io|ai|cn|edu|internal|local|lan|corp|cloud|dev)\b")


@dataclass(frozen=True)
class Redaction:
    """Text with secrets removed, and what kinds were removed how often."""

    text: str
    counts: dict[str, int]
    """``{"Hugging Face token": 1, "e-mail address": 2}``; values are never kept."""


def _host(match: re.Match[str], counts: Counter[str]) -> str:
    host = match.group(0)
    if any(host == public or host.endswith("." + public) for public in _PUBLIC_HOSTS):
        return host
    if host.count(".") < 2 and not host.endswith((".internal", ".local", ".lan", ".corp")):
        return host  # "model.py"-like words and short public domains stay; cluster hostnames have more labels
    counts["hostname"] += 1
    return "<host>"


def redact(text: str) -> Redaction:
    """Replace secrets and personal details in ``text``."""
    counts: Counter[str] = Counter()
    for kind, pattern, replacement in _RULES:
        text, n = pattern.subn(replacement, text)
        if n:
            counts[kind] += n
    text = _FQDN.sub(lambda m: _host(m, counts), text)
    return Redaction(text, dict(counts))
