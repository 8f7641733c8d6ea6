"""iteragpu.estimate / MemoryEstimator: exact values, the CLI's JSON, errors on bad input."""

import json
import os
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
        ("7B", 16, 4.0),
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


# --- estimate(checkpoint=...): safetensors headers -------------------------------------------

_DTYPE_BITS = {"BF16": 16, "F16": 16, "F32": 32, "I8": 8, "U8": 8, "F4": 4}


def _write_safetensors(path, tensors, data_extra=0):
    """A safetensors file: 8-byte little-endian length, the JSON header, zero bytes of data."""
    import struct

    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape in tensors:
        elements = 1
        for dimension in shape:
            elements *= dimension
        size = elements * _DTYPE_BITS[dtype] // 8
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(text)) + text + bytes(offset + data_extra))
    return str(path)


@pytest.fixture
def sharded(tmp_path):
    _write_safetensors(tmp_path / "model-00001-of-00002.safetensors",
                       [("embed.weight", "BF16", [1000, 64]), ("norm.weight", "F32", [64])])
    _write_safetensors(tmp_path / "model-00002-of-00002.safetensors", [("lm_head.weight", "BF16", [1000, 64])])
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 256256}, "weight_map": {
        "embed.weight": "model-00001-of-00002.safetensors",
        "norm.weight": "model-00001-of-00002.safetensors",
        "lm_head.weight": "model-00002-of-00002.safetensors"}}))
    return tmp_path


def test_checkpoint_exact_values_per_dtype(tmp_path):
    path = _write_safetensors(tmp_path / "q.safetensors", [
        ("w1.qweight", "I8", [128, 64]), ("w1.scales", "F16", [128]),
        ("w2.qweight", "U8", [64, 32]), ("w2.scales", "F16", [64]),
    ])
    estimate = iteragpu.estimate(checkpoint=path, reserve_gib="0.5")
    assert isinstance(estimate, iteragpu.CheckpointEstimate)
    assert [(d.dtype, d.tensors, d.parameters, d.memory.bytes) for d in estimate.dtypes] == [
        ("I8", 1, 8192, 8192), ("U8", 1, 2048, 2048), ("F16", 2, 192, 384)]
    assert estimate.weights.bytes == 10624 and type(estimate.weights.bytes) is int
    assert estimate.weights.gib * 2**30 == estimate.weights.bytes  # exact
    assert estimate.parameters == 10432
    assert estimate.reserve.gib == Decimal("0.5")
    assert estimate.total.bytes == 10624 + 2**29
    assert estimate.tensors == [] and not estimate.sharded
    assert "KV cache" in estimate.not_included


def test_checkpoint_sharded_by_tensor(sharded):
    estimate = iteragpu.estimate(checkpoint=sharded / "model.safetensors.index.json", by_tensor=True)
    assert estimate.sharded and estimate.index_total_size == 256256
    assert [s.name for s in estimate.shards] == ["model-00001-of-00002.safetensors",
                                                 "model-00002-of-00002.safetensors"]
    assert estimate.weights.bytes == 256256
    tensors = {t.name: t for t in estimate.tensors}
    assert tensors["lm_head.weight"].shape == (1000, 64)
    assert tensors["lm_head.weight"].bytes == 128000
    assert tensors["lm_head.weight"].shard == "model-00002-of-00002.safetensors"
    assert tensors["norm.weight"].dtype == "F32"


@pytest.mark.parametrize("options, cli_options", [({}, []), ({"by_tensor": True, "reserve_gib": 4},
                                                             ["--by-tensor", "--reserve-gib", "4"])])
def test_checkpoint_to_dict_and_text_equal_the_cli(cli, sharded, options, cli_options):
    completed = cli("estimate", "--checkpoint", str(sharded), *cli_options, "--format", "json")
    assert completed.returncode == 0, completed.stderr
    estimate = iteragpu.estimate(checkpoint=str(sharded), **options)
    assert estimate.to_json() == completed.stdout
    assert estimate.to_dict() == json.loads(completed.stdout)
    text = cli("estimate", "--checkpoint", str(sharded), *cli_options)
    assert str(estimate) == text.stdout


def test_checkpoint_json_matches_the_schema(schema_validator, sharded):
    for by_tensor in (False, True):
        schema_validator(iteragpu.estimate(checkpoint=sharded, by_tensor=by_tensor).to_dict(),
                         "checkpoint-estimate")


@pytest.mark.parametrize("arguments", [(7_000_000_000, None), (None, 16), ("7B", 16)])
def test_checkpoint_with_parameters_or_bits_is_a_usage_error(sharded, arguments):
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.estimate(*arguments, checkpoint=sharded)
    assert raised.value.field == "checkpoint"
    assert str(raised.value).startswith("checkpoint: cannot be combined with parameters or bits")


def test_by_tensor_without_checkpoint_is_a_usage_error():
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.estimate(7, 16, by_tensor=True)
    assert raised.value.field == "by_tensor"
    with pytest.raises(TypeError):
        iteragpu.estimate()


def test_checkpoint_errors_are_data_file_errors_naming_the_file(tmp_path, sharded):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes((16).to_bytes(8, "little") + b'{"w": {"dtype":')
    with pytest.raises(iteragpu.DataFileError) as raised:
        iteragpu.estimate(checkpoint=bad)
    assert isinstance(raised.value, ValueError)
    assert str(raised.value).startswith(f"{bad}: header length 16 reaches past the end of the file")
    (sharded / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(iteragpu.DataFileError, match="model-00002-of-00002.safetensors: does not exist"):
        iteragpu.estimate(checkpoint=sharded)
    trailing = _write_safetensors(tmp_path / "trailing.safetensors", [("w", "F32", [4])], data_extra=3)
    with pytest.raises(iteragpu.DataFileError, match="3 bytes of data are not covered by any tensor"):
        iteragpu.estimate(checkpoint=trailing)
    with pytest.raises(iteragpu.UsageError):
        iteragpu.estimate(checkpoint="")
    with pytest.raises(TypeError, match="checkpoint"):
        iteragpu.estimate(checkpoint=3)


def test_checkpoint_fifo_is_refused_without_hanging(tmp_path, run_python):
    fifo = tmp_path / "model.safetensors"
    os.mkfifo(fifo)
    code = ("import iteragpu\n"
            "try:\n"
            f"    iteragpu.estimate(checkpoint={str(tmp_path)!r})\n"
            "except iteragpu.DataFileError as error:\n"
            "    print(error)\n")
    completed = run_python(code, timeout=30)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"{fifo}: is a FIFO (named pipe), not a regular file; expected the safetensors checkpoint"


def test_checkpoint_html_view(sharded):
    html = iteragpu.estimate(checkpoint=sharded, by_tensor=True)._repr_html_()
    assert "Weight memory of a safetensors checkpoint" in html
    assert "BF16" in html and "lm_head.weight" in html and "256,256" in html
    assert "Not included: activations, KV cache" in html
