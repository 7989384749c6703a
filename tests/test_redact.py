"""Redaction: no secret of any kind survives, ordinary text is untouched, and the report lists what was removed."""

from __future__ import annotations

import json

import pytest

from dtypefix.matcher.redact import redact

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
