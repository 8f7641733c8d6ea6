"""iteragpu.compare and iteragpu.read_measurement: the core's comparison from Python, equal to
the CLI's, on the real H200 files and on a float32/bfloat16 pair measured through the test
double; its HTML view; its refusals."""

import os
import pathlib

import pytest

import iteragpu

from conftest import SOURCE_DIR

RESULTS = os.path.join(SOURCE_DIR, "examples", "results")
LARGE = os.path.join(RESULTS, "mesures.json")  # width 1024, float32, H200
SMALL = os.path.join(RESULTS, "mesures-petit-essai.json")  # width 64, float32, H200


def test_read_measurement_gives_back_the_file():
    measurement = iteragpu.read_measurement(pathlib.Path(LARGE))
    with open(LARGE, encoding="utf-8") as file:
        assert measurement.to_json() == file.read()
    assert measurement.model.width == 1024
    assert measurement.phases[0].phase == "model_load"


def test_the_same_comparison_as_the_cli(cli, schema_validator):
    comparison = iteragpu.compare(LARGE, pathlib.Path(SMALL))
    assert comparison.sources == [LARGE, SMALL]
    text = cli("compare", LARGE, SMALL)
    assert text.returncode == 0, text.stderr
    assert str(comparison) == text.stdout
    as_json = cli("compare", LARGE, SMALL, "--format", "json")
    assert comparison.to_dict() == __import__("json").loads(as_json.stdout)
    schema_validator(comparison.to_dict(), "comparison")
    assert comparison.to_markdown() == cli("compare", LARGE, SMALL, "--format", "markdown").stdout
    assert comparison.to_csv() == cli("compare", LARGE, SMALL, "--format", "csv").stdout


def test_rows_hold_python_values_and_ratios():
    comparison = iteragpu.compare(LARGE, SMALL)
    parameter_bytes = comparison.section("model").row("parameter_bytes")
    assert parameter_bytes.values == [33574912, 132352]
    assert parameter_bytes.unit == "bytes"
    assert parameter_bytes.ratios == [1.0, 132352 / 33574912]
    dtype = comparison.section("configuration").row("dtype")
    assert dtype.same and dtype.values == ["float32", "float32"] and dtype.ratios is None
    median = comparison.section("times").row("host.median")
    assert median.values[0] == iteragpu.read_measurement(LARGE).timing.host_seconds.median
    assert comparison.section("peaks").row("nonexistent") is None
    assert comparison.findings[0].startswith("[2] against [1]: configuration differs in batch (2 → 1)")


def test_measurement_objects_and_paths_mix():
    first = iteragpu.read_measurement(LARGE)
    comparison = iteragpu.compare(first, SMALL, first)
    assert comparison.sources == ["measurement 1", SMALL, "measurement 3"]
    assert len(comparison.findings) == 2
    assert "run-to-run variation" in comparison.findings[1]


def test_float32_against_bfloat16_with_an_html_view(tmp_path, fake_backend):
    files = []
    for dtype in ("float32", "bfloat16"):
        output = tmp_path / f"{dtype}.json"
        iteragpu.measure(backend_path=fake_backend, progress=False, dtype=dtype, output=output)
        files.append(output)
    comparison = iteragpu.compare(*files)
    finding = comparison.findings[0]
    assert "configuration differs in dtype (float32 → bfloat16)" in finding
    assert "parameter bytes ×0.500" in finding
    assert comparison.section("model").row("parameter_bytes").ratios[1] == 0.5
    html = comparison._repr_html_()
    assert "Comparison of 2 measurements" in html
    assert "<strong>&ne; dtype</strong>" in html
    assert "bfloat16" in html and "&times;0.500" in html


def test_refusals():
    with pytest.raises(iteragpu.UsageError, match="at least two measurements, got 1"):
        iteragpu.compare(LARGE)
    with pytest.raises(ValueError):
        iteragpu.compare()
    missing = os.path.join(RESULTS, "missing.json")
    with pytest.raises(iteragpu.DataFileError, match="missing.json: "):
        iteragpu.compare(LARGE, missing)
    with pytest.raises(iteragpu.DataFileError, match="multi-device summary"):
        iteragpu.compare(LARGE, os.path.join(RESULTS, "mesures-tous.json"))
    with pytest.raises(TypeError, match="measurements"):
        iteragpu.compare(LARGE, 42)
    with pytest.raises(iteragpu.DataFileError, match="not an iteragpu measurement"):
        iteragpu.read_measurement(os.path.join(RESULTS, "environment.json"))
