"""Every leak found in issue 12 (item 2) is redacted, and redaction is linear (item 3)."""

from __future__ import annotations

import pytest

from dtypefix.cli.redact import redact

# (input, the value that must not survive)
LEAKS = [
    ("--hub_token hfsecretvalue123 --bf16", "hfsecretvalue123"),
    ("--push_to_hub_token=abcXYZ987", "abcXYZ987"),
    ("--wandb_key 0badc0ffee", "0badc0ffee"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("DATABASE_URL=postgres://admin:pw@10.1.2.3/db", "admin:pw"),
    ("git clone https://u:pw1@gitlab.internal/x.git", "u:pw1"),
    ("machine api.example.org login jdoe password hunter2", "hunter2"),
    ("DB_PASSWORD=s3cr;et", "s3cr;et"),
    ('password="with spaces here"', "with spaces here"),
    ("api_key=abc", "=abc"),
    ("token: short", "short"),
    ("xoxb-123456789012-abcdefghijkl", "xoxb-123456789012"),
    ("https://hooks.slack.com/services/T000/B000/XXXXYYYY", "T000/B000"),
    ("key=AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    ("DefaultEndpointsProtocol=https;AccountName=x;AccountKey=abcdEFGH1234abcdEFGH1234==;", "abcdEFGH1234"),
    ("[W socket.cpp] connect to [fd12:3456:789a::1]:29500 failed", "fd12:3456:789a::1"),
    ("bind to fe80::1ff:fe23:4567:890a%eth0", "fe80::1ff:fe23:4567:890a"),
    ("c:\\users\\jdoe\\train.py", "jdoe"),
    ("\\\\fileserver\\share\\data", "fileserver"),
    ('hub_model_id: "jdoe/my-model"', "jdoe"),
    ("--hub_model_id jdoe/my-model", "jdoe"),
]


@pytest.mark.parametrize(("text", "secret"), LEAKS)
def test_leak_is_redacted(text: str, secret: str) -> None:
    result = redact(text)
    assert secret not in result.text, result.text
    assert result.counts


def test_private_key_without_end_stops_at_the_next_ordinary_line() -> None:
    text = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAsecretsecret\nAbCdEf0123456789==\n"
        "RuntimeError: expected mat1 and mat2 to have the same dtype\n"
    )
    result = redact(text)
    assert "secretsecret" not in result.text and "AbCdEf0123456789" not in result.text
    assert "RuntimeError: expected mat1 and mat2 to have the same dtype" in result.text


def test_a_later_end_line_does_not_swallow_the_log() -> None:
    text = (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n"
        "Traceback (most recent call last):\nRuntimeError: boom\n-----END PRIVATE KEY-----\n"
    )
    result = redact(text)
    assert "MIIEvQIBADANBgkq" not in result.text
    assert "RuntimeError: boom" in result.text


@pytest.mark.parametrize(
    "text",
    [
        "--bf16 True --learning_rate 2e-5 --max_grad_norm 1.0",
        "token_type_ids = None",
        "version 1.2.3.4.5",
        "pad_token: null",
    ],
)
def test_ordinary_settings_stay(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("line", ["a." * 100_000, "A" * 400_000, "x@" * 100_000, "1.2" * 100_000])
def test_long_lines_are_redacted(line: str) -> None:
    # The figures are in bench/redact_bench.py (no timing assertions here); before RE2 these took minutes.
    assert len(redact(line).text) > 0


def test_report_hides_secret_launch_flags(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "train.log"
    log.write_text(
        "torchrun train.py --hub_token abcSECRET1 --push_to_hub_token=defSECRET2 --wandb_key ghiSECRET3 --bf16 True\n"
        "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16\n",
        encoding="utf-8",
    )
    result = cli("report", str(log), "--format", "md")
    assert result.code == 0
    for secret in ("abcSECRET1", "defSECRET2", "ghiSECRET3"):
        assert secret not in result.out
