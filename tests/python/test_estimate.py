"""iteragpu.estimate / MemoryEstimator: exact values, the CLI's JSON, errors on bad input."""

import json
from decimal import Decimal

import pytest

import iteragpu


def test_seed_example_exact_values():
    estimate = iteragpu.estimate(7000000000, 16, reserve_gib=4)
    assert estimate.parameters == 7000000000 and type(estimate.parameters) is int
    assert estimate.bits == 16 and type(estimate.bits) is int
    assert estimate.total_bits == 112000000000
    assert estimate.weights.bytes == 14000000000 and type(estimate.weights.bytes) is int
    assert estimate.weights.gib == Decimal("13.03851604461669921875")
    assert type(estimate.weights.gib) is Decimal
    assert estimate.weights.gb == Decimal("14")
    assert estimate.reserve.bytes == 4 * 2**30
    assert estimate.reserve.gib == Decimal(4)
    assert estimate.total.bytes == 14000000000 + 4 * 2**30
    assert estimate.total.gib == Decimal("17.03851604461669921875")
    assert estimate.total.gb == Decimal("18.294967296")
    # Exact: the GiB figure times 2^30 gives back the bytes, digit for digit.
    assert estimate.weights.gib * 2**30 == estimate.weights.bytes


def test_class_and_function_agree_and_accept_every_numeric_form():
    expected = iteragpu.MemoryEstimator().estimate("7000000000", "16", "4").to_json()
    for parameters, bits, reserve in [
        ("7B", 16, 4),
        (7_000_000_000, "16", Decimal("4")),
        (7e9, 16.0, 4.0),
        (7_000_000_000, 16, Decimal("4.000")),
    ]:
        assert iteragpu.estimate(parameters, bits, reserve_gib=reserve).to_json() == expected


def test_bits_are_rounded_up_to_whole_bytes_once():
    estimate = iteragpu.estimate(3, 4)  # 12 bits -> 2 bytes, not 3 half-bytes rounded each
    assert estimate.weights.bytes == 2


def test_fractional_reserve_is_exact():
    estimate = iteragpu.estimate(1, 8, reserve_gib="0.1")
    assert estimate.reserve.bytes == Decimal("107374182.4")
    assert type(estimate.reserve.bytes) is Decimal
    assert estimate.reserve.gib == Decimal("0.1")
    # A float is read through its shortest repr: 0.1, not 0.1000000000000000055511151231257827.
    assert iteragpu.estimate(1, 8, reserve_gib=0.1).reserve.gib == Decimal("0.1")


@pytest.mark.parametrize(
    "reserve_gib, cli_value", [(4, "4"), ("0.5", "0.5"), (0, "0")]
)
def test_to_dict_equals_the_cli_json(cli, reserve_gib, cli_value):
    completed = cli("estimate", "--parameters", "7000000000", "--bits", "16",
                    "--reserve-gib", cli_value, "--format", "json")
    assert completed.returncode == 0, completed.stderr
    estimate = iteragpu.estimate(7000000000, 16, reserve_gib=reserve_gib)
    assert estimate.to_dict() == json.loads(completed.stdout)
    assert estimate.to_json() == completed.stdout


def test_text_is_the_cli_text(cli):
    completed = cli("estimate", "--parameters", "7B", "--bits", "4")
    assert completed.returncode == 0, completed.stderr
    assert str(iteragpu.estimate("7B", 4)) == completed.stdout


def test_json_matches_the_schema(schema_validator):
    schema_validator(iteragpu.estimate("70B", 4, reserve_gib="2.5").to_dict(), "estimate")


def test_not_included_is_stated():
    estimate = iteragpu.estimate(1, 16)
    assert "KV cache" in estimate.not_included
    assert "activations" in iteragpu.MemoryEstimate.not_included


@pytest.mark.parametrize(
    "arguments, keyword, fragment",
    [
        (("abc", 16), "parameters", "'abc'"),
        ((0, 16), "parameters", "0"),
        (("1.5", 16), "parameters", "1.5"),
        ((7, 0), "bits", "'0'"),
        ((7, "-4"), "bits", "'-4'"),
        ((7, 16, "-1"), "reserve_gib", "'-1'"),
        ((7, 16, "1e3"), "reserve_gib", "1e3"),
        ((7, 16, float("nan")), "reserve_gib", "nan"),
    ],
)
def test_bad_values_raise_value_error_naming_the_keyword(arguments, keyword, fragment):
    options = {"reserve_gib": arguments[2]} if len(arguments) == 3 else {}
    with pytest.raises(ValueError) as raised:
        iteragpu.estimate(arguments[0], arguments[1], **options)
    error = raised.value
    assert isinstance(error, iteragpu.UsageError)
    assert error.field == keyword
    message = str(error)
    assert message.startswith(keyword + ": "), message
    assert fragment in message
    assert "\n" not in message
    assert "--" not in message.split(":")[0]  # the Python keyword, not the CLI option


@pytest.mark.parametrize("value", [[7], None, True, b"7"])
def test_wrong_types_raise_type_error(value):
    with pytest.raises(TypeError, match="parameters"):
        iteragpu.estimate(value, 16)


def test_repr_names_the_total():
    assert repr(iteragpu.estimate(7000000000, 16, reserve_gib=4)) == (
        "MemoryEstimate(parameters=7000000000, bits=16, total_gib=Decimal('17.03851604461669921875'))"
    )
