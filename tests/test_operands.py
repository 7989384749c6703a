"""Operand roles (census/operands.yaml) against every census row with an example: each rule reads some row, and what
it reads are values the example really prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from dtypefix.kbtools.census import census_dir, load_census
from dtypefix.matcher.location import load_rules, read_operands

ROWS = load_census(census_dir(Path(__file__).resolve().parent.parent / "kb"))
READ = [(row, *read_operands(row.example)) for row in ROWS]
FIXED = {spec["value"] for rule in load_rules().rules for spec in rule.operands if "value" in spec}


def test_every_rule_reads_a_census_row() -> None:
    used = {rule.id for rule in load_rules().rules for row in ROWS if rule.pattern.search(row.example)}
    assert [rule.id for rule in load_rules().rules if rule.id not in used] == []


@pytest.mark.parametrize(("row", "op", "operands"), [r for r in READ if r[2]], ids=lambda v: getattr(v, "where", ""))
def test_operands_read_from_a_row_are_in_its_example(row, op, operands) -> None:
    assert len(operands) >= 2, row.where
    for operand in operands:
        assert operand.argument and operand.role and operand.kind in ("dtype", "device"), row.where
        # A value is part of the example as printed (c10:: prefixes removed), what the rule says the op requires
        # (the `expected` side of GradScaler or nll_loss), or, for legacy tensor types, the device they imply.
        assert (
            not operand.value or operand.value in row.example or operand.value in FIXED or operand.kind == "device"
        ), (row.where, operand)


def test_two_sided_dtype_rows_are_read() -> None:
    """Rows whose template names two dtypes or two devices of the families issue 20 lists have roles."""
    families = ("mat1 and mat2", "m1 and m2", "mat1 and mat2", "query, key", "Input type (", "Index put", "for `end`",
                "for `weight`", "masked_scatter", "Expected all tensors", "expected scalar type", "attn_mask dtype")  # fmt: skip
    unread = [row.where for row, _, operands in READ if any(f in row.template for f in families) and not operands]
    assert unread == []


def test_linear_sides() -> None:
    op, (mat1, mat2) = read_operands("mat1 and mat2 must have the same dtype, but got Float and BFloat16")
    assert op == "linear"
    assert (mat1.role, mat1.value, mat2.role, mat2.value) == ("input", "Float", "weight", "BFloat16")


def test_device_argument_and_method() -> None:
    op, operands = read_operands(
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
        "(when checking argument for argument index in method wrapper_CUDA__index_select)"
    )
    assert op == "embedding"
    assert [(o.argument, o.role, o.value) for o in operands] == [
        ("other tensors", "others", "cuda:0"),
        ("index", "input", "cpu"),
    ]


def test_expected_side_of_check_type() -> None:
    _, (expected, found) = read_operands("expected scalar type Half but found Float")
    assert (expected.role, expected.value, found.role, found.value) == ("expected", "Half", "found", "Float")


def test_legacy_types_on_two_devices_are_devices() -> None:
    _, operands = read_operands(
        "Input type (torch.cuda.HalfTensor) and weight type (torch.HalfTensor) should be the same"
    )
    assert [(o.kind, o.value) for o in operands] == [("device", "cuda"), ("device", "cpu")]


def test_message_without_operands() -> None:
    assert read_operands("CUDA out of memory. Tried to allocate 2.00 GiB") == ("", ())
