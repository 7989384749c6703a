"""The vocabulary of conditions: every fact an entry may ask about, where it is read, and which input decides it.

An entry's ``configs`` conditions name a path ``<namespace>.<key>`` and its ``env`` conditions name a key; both are
checked against this registry when the entry is loaded, so a misspelt namespace (``precison.bf16``) or an unknown
key (``device.mpss``) is an error at lint time instead of a condition that silently never holds. Each namespace
says how to resolve a key against an :class:`~dtypefix.matcher.incident.Incident`, which input would decide it when
the incident does not know (the *decider*), and one line of documentation; ``docs/entry-format.md`` renders its
tables from here (``dtypefix docs --check`` fails when they are stale).

Adding a tool's config is one :class:`Namespace` in :data:`NAMESPACES`: how to recognise its files, where its
values come from, which input decides; the docs tables and the renderers' wording follow from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from .observation import Origin, Place
from .regex import lazy_regex

if TYPE_CHECKING:
    from .incident import Incident

__all__ = [
    "ENV_KEYS",
    "NAMESPACES",
    "EnvKey",
    "Fact",
    "Input",
    "Namespace",
    "ValueType",
    "config_fact",
    "env_fact",
    "lookup",
    "namespace_of",
]


class Input:
    """The inputs a user can add to settle unknown conditions (decider keys); the renderers word each one.

    A tool's config file is decided by ``<namespace>-config`` (:attr:`Namespace.decider`), worded from the
    namespace's title unless the renderers have a more specific hint for it.
    """

    LAUNCH = "launch"
    FREEZE = "freeze"
    GPU = "gpu"
    TRACEBACK = "traceback"
    LOG = "log"


class ValueType(str, Enum):
    """What kind of value a fact holds, so that lint can refuse a comparison that can never hold (``op: <``
    against ``value: sm89``, ``precision.fp16 == "yes"``, ``os == mac``)."""

    ANY = "any"
    """A tool's own config key: whatever the tool accepts."""
    BOOL = "bool"
    NUMBER = "number"
    TEXT = "text"
    WORD = "word"
    """One of a closed set of words (:attr:`EnvKey.words`)."""
    LIST = "list"
    """A list of texts; ``==`` holds when any item is equal."""


@dataclass(frozen=True)
class Fact:
    """The answer to one lookup."""

    known: bool
    """False when the input says nothing about it (no such config, no version)."""
    value: Any = None
    where: Place | None = None
    """Where the value (or the config that lacks it) was read."""
    kind_present: bool = False
    """For config paths: a config of that kind was given, but the key was absent."""
    auto: Place | None = None
    """For a DeepSpeed ``"auto"`` that was resolved: where its value came from."""
    unresolved: bool = False
    """For a DeepSpeed ``"auto"`` that nothing in the input resolves."""


@dataclass(frozen=True)
class Namespace:
    """One prefix of config paths."""

    name: str
    title: str
    """The tool's name as people write it (``DeepSpeed``); derived namespaces describe themselves."""
    doc: str
    """One line for the docs table: where the values come from."""
    resolve: Callable[[Incident, str], Fact]
    keys: tuple[str, ...] = ()
    """The closed set of keys of a derived namespace; empty for a config file, whose keys are the tool's own."""
    example: str = ""
    detect: Callable[[set[str], dict[str, Any]], bool] | None = None
    """For a config file: whether a parsed file is this tool's, from its top-level keys (first match wins)."""
    decided_by: str = ""
    """The input that settles an unknown key; a config file's own (``<name>-config``) when empty."""
    type: ValueType = ValueType.ANY
    """What every key of a derived namespace holds (``precision.bf16`` is true or false)."""

    @property
    def decider(self) -> str:
        return self.decided_by or f"{self.name}-config"


@dataclass(frozen=True)
class EnvKey:
    """One hardware / environment fact."""

    name: str
    doc: str
    type: ValueType
    resolve: Callable[[Incident], Any]
    """The value, or None when the input does not say."""
    words: tuple[str, ...] = ()
    """For :attr:`ValueType.WORD`: every value it can hold."""


def lookup(data: Any, path: str) -> tuple[bool, Any]:
    """Follow a dotted path through nested mappings: ``(True, value)`` when present, ``(False, None)`` when not."""
    current = data
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return False, None
    return True, current


def _from_configs(kind: str) -> Callable[[Incident, str], Fact]:
    def resolve(incident: Incident, key: str) -> Fact:
        present = False
        for config in incident.configs:
            if config.kind != kind:
                continue
            present = True
            found, value = lookup(config.data, key)
            if not found and kind == "deepspeed" and key.startswith("bf16."):
                found, value = lookup(config.data, "bfloat16." + key[5:])  # DeepSpeed's older alias, still read
            if found:
                if kind == "deepspeed" and value == "auto" and key in ("fp16.enabled", "bf16.enabled"):
                    return _resolve_auto(incident, key.split(".")[0], Place.of_config(config.origin))
                return Fact(True, value, Place.of_config(config.origin))
        return Fact(False, kind_present=present)

    return resolve


def _resolve_auto(incident: Incident, precision: str, origin: Place) -> Fact:
    # The HF Trainer fills DeepSpeed "auto" from its own --bf16/--fp16; without them "auto" is unknown.
    for path in (f"trainer.{precision}", f"flags.{precision}", f"axolotl.{precision}", f"llamafactory.{precision}"):
        fact = config_fact(incident, path)
        if fact.known and isinstance(fact.value, bool):
            return Fact(True, fact.value, origin, auto=fact.where)
    return Fact(False, where=origin, kind_present=True, unresolved=True)


def _flags(incident: Incident, key: str) -> Fact:
    if key in incident.launch.flags:
        return Fact(True, incident.launch.flags[key], Place(Origin.LAUNCH))
    return Fact(False, kind_present=bool(incident.launch.flags))


def _precision(incident: Incident, name: str) -> Fact:
    says_true: list[Place | None] = []
    says_other: list[Place | None] = []
    for source in ("deepspeed", "trainer", "flags", "axolotl", "llamafactory"):
        fact = config_fact(incident, f"{source}.{name}.enabled" if source == "deepspeed" else f"{source}.{name}")
        if fact.known and fact.value is True:
            says_true.append(fact.where)
        elif fact.known and fact.value is False:
            says_other.append(fact.where)
    for source in (
        "accelerate.mixed_precision",
        "flags.mixed_precision",
        "accelerate.deepspeed_config.mixed_precision",
        "torchtune.dtype",
    ):
        fact = config_fact(incident, source)
        if fact.known and isinstance(fact.value, str) and fact.value.lower() != "auto":
            (says_true if fact.value.lower() == name else says_other).append(fact.where)
    if says_true:
        return Fact(True, True, says_true[0])
    if says_other:
        return Fact(True, False, says_other[0])
    return Fact(False)


_MODEL_HINTS = {
    "load_in_8bit": lazy_regex(r"load_in_8bit\s*[=:]\s*True|load_in_8bit:\s*true"),
    "load_in_4bit": lazy_regex(r"load_in_4bit\s*[=:]\s*True|load_in_4bit:\s*true"),
    "device_map_auto": lazy_regex(r"device_map\s*=\s*[\"']auto[\"']|device_map:\s*auto"),
}


def _model(incident: Incident, name: str) -> Fact:
    for source in (f"axolotl.{name}", f"llamafactory.{name}", f"flags.{name}", f"trainer.{name}"):
        fact = config_fact(incident, source)
        if fact.known and isinstance(fact.value, bool):
            return Fact(True, fact.value, fact.where)
    pattern = _MODEL_HINTS.get(name)
    if pattern is not None and pattern.search(incident.text):
        return Fact(True, True, Place(Origin.LOG))
    return Fact(False)


_TRAINER_KEYS = {
    "output_dir",
    "per_device_train_batch_size",
    "learning_rate",
    "num_train_epochs",
    "gradient_accumulation_steps",
    "bf16",
    "fp16",
    "optim",
    "deepspeed",
    "fsdp",
}


def _is_deepspeed(keys: set[str], data: dict[str, Any]) -> bool:
    return bool(keys & {"zero_optimization", "train_micro_batch_size_per_gpu", "zero_allow_untested_optimizer"}) or any(
        isinstance(data.get(k), dict) and "enabled" in data[k] for k in ("fp16", "bf16", "amp")
    )


NAMESPACES: dict[str, Namespace] = {
    ns.name: ns
    for ns in (
        Namespace(
            "deepspeed",
            "DeepSpeed",
            'DeepSpeed JSON. `"auto"` in `fp16.enabled` / `bf16.enabled` is resolved from the Trainer flags when they '
            "are known; otherwise the condition is unknown.",
            _from_configs("deepspeed"),
            example="deepspeed.zero_optimization.offload_optimizer.device",
            detect=_is_deepspeed,
        ),
        Namespace(
            "accelerate",
            "Accelerate",
            "`accelerate config` YAML.",
            _from_configs("accelerate"),
            example="accelerate.fsdp_config.fsdp_offload_params",
            detect=lambda keys, _: bool(
                keys & {"compute_environment", "distributed_type", "deepspeed_config", "fsdp_config", "machine_rank"}
            ),
        ),
        Namespace(
            "axolotl",
            "Axolotl",
            "Axolotl YAML.",
            _from_configs("axolotl"),
            example="axolotl.bf16",
            detect=lambda keys, _: (
                "base_model" in keys
                or ("datasets" in keys and bool(keys & {"micro_batch_size", "sequence_len", "adapter"}))
            ),
        ),
        Namespace(
            "llamafactory",
            "LLaMA-Factory",
            "LLaMA-Factory YAML.",
            _from_configs("llamafactory"),
            example="llamafactory.enable_liger_kernel",
            detect=lambda keys, _: (
                bool(keys & {"finetuning_type", "template", "stage"}) and bool(keys & {"model_name_or_path", "dataset"})
            ),
        ),
        Namespace(
            "torchtune",
            "torchtune",
            "torchtune recipe YAML (`tune run <recipe> --config <file>`): `dtype` (`bf16`, `fp32`, `fp16`), `device`, "
            "and the `_component_` of the model, optimizer and loss.",
            _from_configs("torchtune"),
            example="torchtune.dtype",
            detect=lambda keys, data: (
                any(isinstance(data.get(k), dict) and "_component_" in data[k] for k in keys)
                and bool(keys & {"model", "tokenizer", "optimizer"})
            ),
        ),
        Namespace(
            "trainer",
            "TrainingArguments",
            "TrainingArguments JSON, or the `TrainingArguments(...)` the Trainer prints.",
            _from_configs("trainer"),
            example="trainer.optim",
            detect=lambda keys, _: len(keys & _TRAINER_KEYS) >= 2,
            decided_by=Input.LAUNCH,
        ),
        Namespace(
            "flags",
            "launch flags",
            "`--name value` flags on launch command lines in the log; `--bf16` alone is `true`, `True`/`False` are "
            "booleans.",
            _flags,
            example="flags.mixed_precision",
            decided_by=Input.LAUNCH,
        ),
        Namespace(
            "precision",
            "precision",
            "Derived: `true` when any config or flag enables it, `false` when one settles it otherwise, unknown when "
            "nothing says.",
            _precision,
            keys=("bf16", "fp16", "fp8"),
            decided_by=Input.LAUNCH,
            type=ValueType.BOOL,
        ),
        Namespace(
            "model",
            "model loading",
            "Derived loading hints, from configs and flags, or from code lines in the log (`load_in_8bit=True`, "
            '`device_map="auto"`).',
            _model,
            keys=tuple(_MODEL_HINTS),
            decided_by=Input.LAUNCH,
            type=ValueType.BOOL,
        ),
    )
}


def _capabilities(incident: Incident) -> tuple[float, ...]:
    hw = incident.hardware
    return () if hw.unmapped else hw.capabilities  # a card the table does not know could be the extreme


ENV_KEYS: dict[str, EnvKey] = {
    key.name: key
    for key in (
        EnvKey(
            "gpu.names", "GPU names seen in the input", ValueType.LIST, lambda i: list(i.hardware.gpu_names) or None
        ),
        EnvKey("gpu.count", "how many GPUs were listed", ValueType.NUMBER, lambda i: len(i.hardware.gpu_names) or None),
        EnvKey(
            "gpu.min_compute_capability",
            "lowest compute capability among the GPUs (7.5, 8.0 ...)",
            ValueType.NUMBER,
            lambda i: min(_capabilities(i), default=None),
        ),
        EnvKey(
            "gpu.max_compute_capability",
            "highest compute capability among the GPUs",
            ValueType.NUMBER,
            lambda i: max(_capabilities(i), default=None),
        ),
        EnvKey(
            "gpu.mixed_models",
            "`true` when more than one GPU model is listed",
            ValueType.BOOL,
            lambda i: (len(set(i.hardware.gpu_names)) > 1) if len(i.hardware.gpu_names) > 1 else None,
        ),
        EnvKey(
            "cuda_visible_devices",
            "`CUDA_VISIBLE_DEVICES`, from the log or the launch line",
            ValueType.TEXT,
            lambda i: i.hardware.cuda_visible_devices or i.launch.env.get("CUDA_VISIBLE_DEVICES"),
        ),
        EnvKey(
            "cuda_device_order",
            "`CUDA_DEVICE_ORDER`, from the log or the launch line",
            ValueType.TEXT,
            lambda i: i.hardware.cuda_device_order or i.launch.env.get("CUDA_DEVICE_ORDER"),
        ),
        EnvKey(
            "os",
            "operating system (`linux`, `windows`, `macos`)",
            ValueType.WORD,
            lambda i: i.hardware.os,
            ("linux", "windows", "macos"),
        ),
        EnvKey(
            "device.mps",
            "`true` when the input shows an Apple MPS device",
            ValueType.BOOL,
            lambda i: True if i.hardware.mps else None,
        ),
    )
}


def namespace_of(path: str) -> Namespace | None:
    """The namespace a config path belongs to, or None for an unknown prefix."""
    return NAMESPACES.get(path.partition(".")[0])


def config_fact(incident: Incident, path: str) -> Fact:
    """Look up ``<namespace>.<key>``; an unknown namespace is never known (lint refuses it before this)."""
    namespace = namespace_of(path)
    if namespace is None:
        return Fact(False)
    return namespace.resolve(incident, path.partition(".")[2])


def env_fact(incident: Incident, key: str) -> Fact:
    """Look up a hardware / environment key."""
    spec = ENV_KEYS.get(key)
    value = spec.resolve(incident) if spec is not None else None
    return Fact(value is not None, value, Place(Origin.LOG) if value is not None else None)
