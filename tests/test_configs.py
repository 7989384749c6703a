"""Configs: kinds detected, lenient JSON, embedded blocks, and hostile YAML refused with one line."""

from __future__ import annotations

import pytest

from dtypefix.matcher.configs import ConfigError, find_embedded, parse_config
from dtypefix.matcher.facts import lookup

DS_AUTO = """{
  "train_micro_batch_size_per_gpu": "auto",
  "fp16": {"enabled": "auto", "loss_scale": 0},
  "bf16": {"enabled": "auto"},
  "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": true},
    "zero_quantized_weights": true}
}"""

DS_FRAGMENT = """  "bf16": {
    "enabled": True   // we train in bf16
  },
  "zero_optimization": {
    "stage": 3,
    "zero_hpz_partition_size": 16,
"""

ACCELERATE = """compute_environment: LOCAL_MACHINE
distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: ds_z3.json
  zero3_init_flag: true
mixed_precision: fp8
num_processes: 8
"""

AXOLOTL = """base_model: meta-llama/Meta-Llama-3-8B
load_in_8bit: true
adapter: lora
datasets:
  - path: mhenrichsen/alpaca_2k_test
    type: alpaca
bf16: auto
optimizer: paged_adamw_8bit
deepspeed: deepspeed_configs/zero3_bf16_cpuoffload_all.json
"""

LLAMAFACTORY = """model_name_or_path: Qwen/Qwen2.5-7B
stage: sft
finetuning_type: lora
template: qwen
bf16: true
enable_liger_kernel: true
deepspeed: examples/deepspeed/ds_z3_config.json
"""

TRAINING_ARGS = (
    '{"output_dir": "out", "per_device_train_batch_size": 4, "bf16": true, "fp16": false, "optim": "adamw_torch"}'
)


@pytest.mark.parametrize(
    ("text", "kind", "path", "value"),
    [
        (DS_AUTO, "deepspeed", "zero_optimization.offload_optimizer.device", "cpu"),
        (DS_AUTO, "deepspeed", "bf16.enabled", "auto"),
        (DS_FRAGMENT, "deepspeed", "bf16.enabled", True),
        (DS_FRAGMENT, "deepspeed", "zero_optimization.zero_hpz_partition_size", 16),
        (ACCELERATE, "accelerate", "deepspeed_config.deepspeed_config_file", "ds_z3.json"),
        (AXOLOTL, "axolotl", "optimizer", "paged_adamw_8bit"),
        (LLAMAFACTORY, "llamafactory", "enable_liger_kernel", True),
        (TRAINING_ARGS, "trainer", "bf16", True),
    ],
)
def test_kinds_and_values(text: str, kind: str, path: str, value: object) -> None:
    config = parse_config(text, "x")
    assert config.kind == kind
    assert lookup(config.data, path) == (True, value)


def test_configs_embedded_in_a_bug_report() -> None:
    report = f"""### System Info
deepspeed==0.14.2

### Reproduction
My ds config:
```json
{DS_AUTO}
```
and accelerate config:
{ACCELERATE}
- `Accelerate` configs:
\t- compute_environment: LOCAL_MACHINE
\t- distributed_type: MULTI_GPU
\t- mixed_precision: bf16
"""
    kinds = sorted(c.kind for c in find_embedded(report))
    assert kinds == ["accelerate", "accelerate", "deepspeed"]


def test_training_arguments_printed_by_the_trainer() -> None:
    log = "TrainingArguments(\n_n_gpu=1,\nbf16=True,\nfp16=False,\noptim=paged_adamw_8bit,\n)"
    (config,) = find_embedded(log)
    assert config.kind == "trainer" and config.data["bf16"] is True and config.data["optim"] == "paged_adamw_8bit"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("just some words\n", "not a mapping"),
        ("key: [unclosed\n", "line"),
        ("a: &a [1,2]\n" + "".join(f"b{i}: [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n" for i in range(20)), "aliases"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested"),
        ("{" + '"a": {' * 200 + "}" * 201, "nested"),
        ("\x00\x01\x02binary", "binary"),
        ("name: x\nvalue: 3\n", "not recognised"),
    ],
    ids=["empty", "prose", "bad-yaml", "alias-bomb", "deep-yaml", "deep-json", "binary", "unknown-kind"],
)
def test_bad_configs_raise_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "x")
    assert message in str(info.value) and "\n" not in str(info.value)
