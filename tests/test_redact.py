"""Redaction: no secret of any kind survives, ordinary text is untouched, and the report lists what was removed."""

from __future__ import annotations

import json

import pytest

from dtypefix.cli.redact import redact

SECRETS = {
    "Hugging Face token": "export HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "W&B API key": "WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567",
    "OpenAI-style key": "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
    "AWS access key id": "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "AWS secret key": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "bearer token": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig",
    "GitHub token": "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
    "e-mail address": "contact: jane.doe@corp-mail.example.org",
    "user name in a path": '  File "/home/jdoe/projects/train.py", line 3, in <module>',
    "user@host": "jdoe@gpu-node-07:~/run$ torchrun train.py",
    "IP address": "torchrun --master_addr 10.12.3.4 --master_port 29500 train.py",
    "hostname": "[W socket.cpp:663] connect to node01.cluster.mycorp.internal:29500 failed",
}
VALUES = [
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "0123456789abcdef0123456789abcdef01234567",
    "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "eyJhbGciOiJIUzI1NiJ9",
    "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
    "jane.doe",
    "jdoe",
    "10.12.3.4",
    "node01.cluster.mycorp.internal",
]


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_kind_is_removed_and_counted(kind: str) -> None:
    result = redact(SECRETS[kind])
    assert result.counts.get(kind, 0) >= 1, result
    for value in VALUES:
        assert value not in result.text


def test_nothing_survives_in_a_whole_report() -> None:
    text = "\n".join(SECRETS.values())
    result = redact(text)
    for value in VALUES:
        assert value not in result.text


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16",
        "torch==2.1.0+cu121\ndeepspeed==0.14.2\ntransformers 4.41.2",
        '  File "/home/user/.venv/lib/python3.10/site-packages/deepspeed/runtime/zero/stage3.py", line 2117',
        "see https://github.com/deepspeedai/DeepSpeed/issues/7775 and https://huggingface.co/docs/accelerate",
        "git commit 6098f799ee77fe87d64f6934242b4bfa96b984a5",
        '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}',
        "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 train.py --bf16 True",
    ],
)
def test_ordinary_text_is_untouched(text: str) -> None:
    result = redact(text)
    assert result.text == text and result.counts == {}


def test_report_command_redacts_and_lists(cli, tmp_path) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        "\n".join(SECRETS.values())
        + '\nTraceback (most recent call last):\n  File "/home/jdoe/train.py", line 9, in <module>\n'
        "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half != c10::BFloat16\n",
        encoding="utf-8",
    )
    result = cli("report", str(log), "--format", "md")
    assert result.code == 0
    assert "## Redacted" in result.out and "DTF001" in result.out
    for value in VALUES:
        assert value not in result.out
    data = json.loads(cli("report", str(log), "--format", "json").out)
    assert data["redacted"]["user name in a path"] >= 1


# Issue 12, item 2: each leak that a careless or hostile input showed, one case each.
LEAKS = {
    "hub token flag": (
        "torchrun train.py --hub_token hf_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1 --bf16 True",
        "hf_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1",
    ),
    "push_to_hub token flag": ("python train.py --push_to_hub_token=abc123xyz --fp16", "abc123xyz"),
    "wandb key flag": ("python train.py --wandb_key 9f8e7d6c5b4a --bf16", "9f8e7d6c5b4a"),
    "basic auth": ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    "postgres URL": ("DATABASE_URL=postgres://admin:pw@10.1.2.3:5432/db", "admin:pw"),
    "https URL credentials": ("git clone https://u:s3cr3t@gitlab.example.net/team/repo.git", "u:s3cr3t"),
    "netrc": ("machine huggingface.co login jdoe password n3tRcPw", "n3tRcPw"),
    "DB_PASSWORD": ("DB_PASSWORD=Tr0ub4dor", "Tr0ub4dor"),
    "quoted password with spaces": ('password="correct horse battery"', "correct horse battery"),
    "value with semicolon": ("SECRET_KEY=ab;cd;ef", "ab;cd;ef"),
    "short value": ("API_KEY=x1y2", "x1y2"),
    "private key without END": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0t\nTraceback follows",
        "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0t",
    ),
    "slack bot token": ("SLACK=xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
    "slack webhook": ("https://hooks.slack.com/services/T000/B000/XXXXYYYYZZZZ", "T000/B000/XXXXYYYYZZZZ"),
    "google key": ("key=AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    "azure account key": (
        "DefaultEndpointsProtocol=https;AccountName=acc;AccountKey=c2VjcmV0a2V5;EndpointSuffix=x",
        "c2VjcmV0a2V5",
    ),
    "ipv6 private": ("connect to [fd12:3456:789a:1::7]:29500 failed", "fd12:3456:789a:1::7"),
    "ipv6 link-local": ("bind fe80::1ff:fe23:4567:890a%eth0", "fe80::1ff:fe23:4567:890a"),
    "lowercase windows home": (r"  File c:\users\jdoe\train.py, line 3", "jdoe"),
    "UNC path": (r"\\fileserver01\share\ckpt\model.bin", "fileserver01"),
    "hub model id": ('hub_model_id: "jdoe/my-private-model"', "jdoe/"),
}


@pytest.mark.parametrize("case", sorted(LEAKS))
def test_every_known_leak_is_closed(case: str) -> None:
    text, secret = LEAKS[case]
    result = redact(text)
    assert secret not in result.text, result.text
    assert result.counts


def test_a_private_key_without_end_does_not_swallow_the_log_after_it() -> None:
    text = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nRuntimeError: expected mat1 and mat2\nmore log\n-----END PRIVATE KEY-----"
    result = redact(text)
    assert "RuntimeError: expected mat1 and mat2" in result.text and "more log" in result.text
    assert "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in result.text


@pytest.mark.parametrize(
    "text", ["pad_token: <pad>", "bos_token_id=1", "max_new_tokens=512", "tokenizer: meta-llama/Llama-3"]
)
def test_tokenizer_settings_are_not_secrets(text: str) -> None:
    assert redact(text).text == text


def test_report_flags_are_redacted_by_name(cli, tmp_path) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        "$ torchrun train.py --hub_token abcdef123456 --bf16 True\nRuntimeError: expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16\n",
        encoding="utf-8",
    )
    out = cli("report", str(log), "--format", "md").out
    assert "abcdef123456" not in out and "hub_token" in out
