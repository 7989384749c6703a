"""Removing secrets and personal details from text that is about to be shared.

A bug report carries environment dumps, command lines and logs, and those carry tokens (Hugging Face, W&B,
OpenAI-style, AWS, GitHub, GitLab, PyPI, Stripe, Replicate, Slack, Google, Azure, JWTs), credentials in URLs,
signed URLs, headers, cookies, netrc lines and (dotted) flags, private keys whole or in part, user names,
e-mail addresses, the user's name in home paths and hub ids, hostnames and IPs. The token shapes follow the rule
sets of gitleaks and detect-secrets (their provider prefixes and lengths), plus the ML-specific places secrets
hide (``--hub_token``, ``--push_to_hub_token``, ``--wandb_key``, ``hub_model_id``). Each rule replaces what it finds
with a labelled placeholder and counts it, so the report can say what was removed without repeating it. Every
rule runs on RE2, so redaction is linear in the input, whatever a line holds.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dtypefix.matcher.regex import compile_pattern

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

_SECRET_WORD = (
    r"(?:token|secret(?:[_-]?key)?|passw(?:or)?d|passwd|credentials?|apikey"
    r"|(?:api|access|auth|private|wandb|hf|hub|openai|anthropic|account)[_-]?key)"
)
# Tokenizer settings are not secrets, whatever their names say.
_NOT_SECRET_KEYS = re.compile(
    r"(?i)(?:^|[_.-])(?:bos|eos|pad|unk|sep|cls|mask|image|audio|video|special|start|end|chat|default|additional)"
    r"[_-]?tokens?$|(?:^|[_.-])(?:max|min|num)[_-]"
)

Rule = tuple[str, Any, "str | Callable[[Any], str]"]


def _rule(kind: str, pattern: str, replacement: str | Callable[[Any], str]) -> Rule:
    """Every rule runs on RE2: linear time on any line, however long (a 4 MB base64 blob, 50 KB of ``a.a.a``)."""
    return kind, compile_pattern(pattern), replacement


def _secret_setting(match: Any) -> str:
    key, value = match.group(1), match.group(3)
    if _NOT_SECRET_KEYS.search(key.strip("\"' -")) or value.startswith("<"):
        return str(match.group(0))
    return f"{match.group(1)}{match.group(2)}<secret>"


def _ip(match: Any) -> str:
    before, address, after = match.group(1), match.group(2), match.group(3)
    if any(int(part) > 255 for part in address.split(".")) or before == "." or after == ".":
        return str(match.group(0))
    return f"{before}<ip>{after}"


def _home(match: Any) -> str:
    return str(match.group(0)) if match.group(2).lower() == "user" else f"{match.group(1)}user"


def _ipv6(match: Any) -> str:
    """A candidate is an address only if it parses with two or more groups (``c10::Half`` and ``12:30:45`` stay)."""
    before, address = match.group(1), match.group(2)
    groups = [g for g in address.split(":") if g]
    try:
        parsed = ipaddress.IPv6Address(address)
    except ValueError:
        return str(match.group(0))
    if len(groups) < 2 or parsed.is_loopback or parsed.is_unspecified:
        return str(match.group(0))
    return f"{before}<ip>{match.group(3)}"


# Hub owners whose ids are public and say nothing about the user (and the hub's own top-level pages).
_PUBLIC_HUB_OWNERS = frozenset(
    name.lower()
    for name in [
        "docs",
        "api",
        "blog",
        "models",
        "datasets",
        "spaces",
        "papers",
        "learn",
        "tasks",
        "settings",
        "join",
        "pricing",
        "collections",
        "organizations",
        "meta-llama",
        "facebook",
        "google",
        "microsoft",
        "openai",
        "mistralai",
        "Qwen",
        "deepseek-ai",
        "EleutherAI",
        "bigscience",
        "tiiuae",
        "stabilityai",
        "HuggingFaceH4",
        "HuggingFaceTB",
        "huggingface",
        "nvidia",
        "allenai",
        "bigcode",
        "THUDM",
        "01-ai",
        "google-bert",
        "openai-community",
        "distilbert",
        "FacebookAI",
        "sentence-transformers",
        "intfloat",
        "BAAI",
    ]
)


def _hub_owner(match: Any) -> str:
    prefix, owner = match.group(1), match.group(2)
    return str(match.group(0)) if owner.lower() in _PUBLIC_HUB_OWNERS | {"user", "<user>"} else f"{prefix}<user>/"


def _account(match: Any) -> str:
    """``USER=alice`` and ``~alice``: the name goes, the setting stays."""
    return str(match.group(0)) if match.group(2) in ("user", "$USER") else f"{match.group(1)}user"


def _entropy(match: Any) -> str:
    """detect-secrets' high-entropy test: a long base64 run above 4.5 bits a character is key material.

    Hex (commit hashes, at most 4 bits) and words stay; a lone line of a PEM key, cut from its END line by a
    traceback, does not.
    """
    run = str(match.group(0))
    body = run.rstrip("=")
    if not (any(c.isdigit() for c in body) and any(c.isupper() for c in body) and any(c.islower() for c in body)):
        return run
    bits = -sum(n / len(body) * math.log2(n / len(body)) for n in Counter(body).values())
    return "<secret>" if bits > 4.5 else run


def _tilde_home(match: Any) -> str:
    return str(match.group(0)) if match.group(2) == "user" else f"{match.group(1)}~user"


def _single_host(match: Any) -> str:
    """A bare host name in a place only hosts go; ``localhost`` and placeholders stay."""
    name = match.group(2)
    if name.lower() in ("localhost", "host", "none", "null", "true", "false") or name.startswith("<"):
        return str(match.group(0))
    return str(match.group(0)).replace(
        match.group(1) + name + match.group(3), f"{match.group(1)}<host>{match.group(3)}", 1
    )


# (kind, pattern, replacement); order matters: specific tokens before generic key=value rules.
_RULES: tuple[Rule, ...] = (
    # A key block: its BEGIN line, then only key material (base64 and header lines), then END if present. A key
    # without END stops at the first line that is not key material, so a later END cannot swallow the log between.
    _rule(
        "private key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[A-Za-z0-9+/=\\ \t]*(?:-----END [A-Z ]*PRIVATE KEY-----)?(?:\r?\n(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment): [^\n]*|))*"
        r"(?:\r?\n-----END [A-Z ]*PRIVATE KEY-----)?",
        "<private key>",
    ),
    # A log that shows only the tail of a key (``tail -3 key.pem``): the key lines before its END line.
    _rule(
        "private key",
        r"(?:[A-Za-z0-9+/]{16,}={0,2}\r?\n)*[A-Za-z0-9+/]{16,}={0,2}\r?\n-----END [A-Z ]*PRIVATE KEY-----",
        "<private key>",
    ),
    _rule("Hugging Face token", r"\bhf_[A-Za-z0-9]{20,}\b", "<hf token>"),
    _rule("OpenAI-style key", r"\bsk-(?:proj-|ant-|live-)?[A-Za-z0-9_-]{20,}", "<api key>"),
    _rule("AWS access key id", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b", "<aws key id>"),
    _rule("AWS secret key", r"(?i)(aws_secret_access_key\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{30,}", r"\1<aws secret>"),
    _rule(
        "W&B API key",
        r"(?i)((?:wandb_api_key|wandb login(?: --relogin)?)\s*[=:\s]\s*[\"']?)[0-9a-z_-]{32,}",
        r"\1<wandb key>",
    ),
    _rule("GitLab token", r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt)-[A-Za-z0-9_-]{20,}", "<gitlab token>"),
    _rule("PyPI token", r"\bpypi-[A-Za-z0-9_-]{50,}", "<pypi token>"),
    _rule("Google OAuth token", r"\bya29\.[A-Za-z0-9_-]{20,}", "<google token>"),
    _rule("Stripe key", r"\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}", "<stripe key>"),
    _rule("Replicate token", r"\br8_[A-Za-z0-9]{30,}", "<replicate token>"),
    _rule("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "<slack token>"),
    _rule("Slack webhook", r"hooks\.slack\.com/services/[A-Za-z0-9/_-]+", "hooks.slack.com/services/<webhook>"),
    _rule("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b", "<google key>"),
    _rule("Azure account key", r"(?i)(AccountKey=)[^;\s\"']+", r"\1<secret>"),
    _rule("bearer token", r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{12,}", r"\1<token>"),
    _rule("JWT", r"\bey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*", "<jwt>"),
    # Authorization: Basic X, {"Authorization": "Basic X"}, headers={'Authorization': 'X'}.
    _rule(
        "authorization header",
        r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:basic|digest|token|bearer)\s+)?)"
        r"[^\s\"',}<][^\s\"',}]*",
        r"\1<secret>",
    ),
    _rule("cookie", r"(?i)(\b(?:set-)?cookie[\"']?\s*[:=]\s*[\"']?)[^\s\"'<][^\n\"']*", r"\1<secret>"),
    # Signed URLs: S3 presigned (X-Amz-Signature, X-Amz-Credential), Azure SAS (sig=), tokens in query strings.
    _rule(
        "URL signature",
        r"(?i)([?&](?:x-amz-(?:signature|credential|security-token)|sig|signature|token|access_token|api_key|key)=)"
        r"[^&\s\"'#<]+",
        r"\1<secret>",
    ),
    _rule("Kaggle key", r"(?i)([\"']key[\"']\s*:\s*[\"'])[0-9a-f]{32}([\"'])", r"\1<secret>\2"),
    _rule("curl credentials", r"(?i)(\bcurl\b[^\n]*?\s(?:-u|--user)(?:=|\s+)[\"']?)[^\s\"']+", r"\1<credentials>"),
    _rule("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b", "<github token>"),
    _rule("URL credentials", r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@\"']+:[^/\s@\"']+@", r"\1<credentials>@"),
    _rule("netrc password", r"(?im)^(\s*(?:machine\s+\S+\s+)?(?:login\s+\S+\s+)?password\s+)\S+", r"\1<secret>"),
    _rule(
        "netrc password",
        r"(?i)(\b(?:machine\s+\S+|default)\s+(?:login\s+\S+\s+)?(?:account\s+\S+\s+)?password\s+)[^\s<]\S*",
        r"\1<secret>",
    ),
    # --hub_token X, --push_to_hub_token=X, --wandb_key X on command lines.
    _rule(
        "secret flag",
        r"(?i)(--[\w.-]*" + _SECRET_WORD + r")(=|\s+)([^\s\"']+|\"[^\"]*\"|'[^']*')",
        _secret_setting,
    ),
    # KEY=value, key: "value with spaces", DB_PASSWORD=p;w — any length.
    _rule(
        "secret setting",
        r"(?i)(\b[\w.-]*" + _SECRET_WORD + r"[\"']?)(\s*[=:]\s*)(\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',]+)",
        _secret_setting,
    ),
    _rule("Hugging Face user", r"(?i)(hub_model_id\"?\s*(?:[=:]|\s)\s*[\"']?)[A-Za-z0-9_.-]+/", r"\1<user>/"),
    _rule(
        "Hugging Face user",
        r"(?i)(\b(?:huggingface\.co|hf\.co)/(?:datasets/|spaces/)?)([A-Za-z0-9<][\w.<>-]*)/",
        _hub_owner,
    ),
    # git@github.com:alice-private/repo: the owner of a private remote (before the e-mail rule sees user@host).
    _rule("git remote owner", r"(?i)\b([a-z_][\w-]*@[a-z0-9.-]+:)([A-Za-z0-9_.-]+)/", r"\1<user>/"),
    _rule("e-mail address", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b", "<email>"),
    _rule("user name in a path", r"(/home/|/Users/|/data/home/)([^/\s\"']+)", _home),
    _rule("user name in a path", r"(?i)([a-z]:\\+users\\+)([^\\\s\"']+)", _home),
    _rule("UNC path", r"(\\\\)[A-Za-z0-9_.$-]+(\\[^\s\\\"']+)", r"\1<host>\2"),
    _rule("user@host", r"\b[a-z_][a-z0-9_-]*@[A-Za-z0-9-]+(:)", r"user@host\1"),
    _rule("IP address", r"(^|[^\d.])((?:\d{1,3}\.){3}\d{1,3})($|[^\d.])", _ip),
    _rule("user name", r"\b((?:[A-Z][A-Z0-9]*_)*(?:USER|USERNAME|LOGNAME)=)([^\s\"';,]+)", _account),
    _rule("user name in a path", r"(^|[\s\"'=:(\[])~([A-Za-z_][\w.-]*)", _tilde_home),
    _rule(
        "private IPv6 address",
        r"(?i)\b(?:f[cd][0-9a-f]{0,2}|fe[89ab][0-9a-f]):[0-9a-f:]*[0-9a-f](?:%\w+)?\b",
        "<ip>",
    ),
    _rule("high-entropy string", r"[A-Za-z0-9+/]{40,}={0,2}", _entropy),
    _rule("IPv6 address", r"(^|[^\w:.%<])((?:[0-9A-Fa-f]{1,4})?(?::[0-9A-Fa-f]{0,4}){2,7})($|[^\w:])", _ipv6),
    # Single-label host names: [gpu-node-17]:29500, node017:29500, MASTER_ADDR=gpu17, --master_addr gpu17.
    _rule("hostname", r"(\[)([A-Za-z][A-Za-z0-9-]*)(\]:\d{2,5})", _single_host),
    _rule("hostname", r"(\b)([A-Za-z][A-Za-z0-9-]*[0-9][A-Za-z0-9-]*)(:\d{4,5}\b)", _single_host),
    _rule(
        "hostname",
        r"(?i)(\b(?:master_addr|master_address|hostname|host|slurmd_nodename|slurm_(?:job_)?nodelist|node_?name)"
        r"(?:=|\s+|:\s*)|--master[_-]addr(?:ess)?(?:=|\s+))([A-Za-z][A-Za-z0-9\[\],-]*)()(?:[^\w.:-]|$)",
        _single_host,
    ),
)
_FQDN = compile_pattern(r"\b(?:[A-Za-z0-9-]+\.)+(?:com|net|org|io|ai|cn|edu|internal|local|lan|corp|cloud|dev)\b")


@dataclass(frozen=True)
class Redaction:
    """Text with secrets removed, and what kinds were removed how often."""

    text: str
    counts: dict[str, int]
    """``{"Hugging Face token": 1, "e-mail address": 2}``; values are never kept."""


def _host(match: Any, counts: Counter[str]) -> str:
    host = str(match.group(0))
    if any(host == public or host.endswith("." + public) for public in _PUBLIC_HOSTS):
        return host
    if host.count(".") < 2 and not host.endswith((".internal", ".local", ".lan", ".corp")):
        return host  # "model.py"-like words and short public domains stay; cluster hostnames have more labels
    counts["hostname"] += 1
    return "<host>"


def redact(text: str) -> Redaction:
    """Replace secrets and personal details in ``text`` (one pass per rule)."""
    counts: Counter[str] = Counter()
    for kind, pattern, replacement in _RULES:
        if callable(replacement):
            text = pattern.sub(_counting(replacement, counts, kind), text)
        else:
            text, n = pattern.subn(replacement, text)
            counts[kind] += n
    text = _FQDN.sub(lambda m: _host(m, counts), text)
    return Redaction(text, {kind: n for kind, n in counts.items() if n})


def _counting(replacement: Callable[[Any], str], counts: Counter[str], kind: str) -> Callable[[Any], str]:
    """The rule's replacement, counting only the matches it changed (a tokenizer setting is left as it was)."""

    def replace(match: Any) -> str:
        out = replacement(match)
        if out != match.group(0):
            counts[kind] += 1
        return out

    return replace
