"""Hostile values from Python: text that is not valid Unicode and integers Python itself will
not print are bad values (UsageError, a ValueError, naming the keyword); a value of the wrong
type is a TypeError naming the keyword. Never RuntimeError, never Python's own conversion
error."""

import os

import pytest

import iteragpu
from conftest import SOURCE_DIR

SURROGATE = "\ud800"


@pytest.mark.parametrize("call, keyword", [
    (lambda: iteragpu.estimate(parameters=SURROGATE, bits=16), "parameters"),
    (lambda: iteragpu.estimate(parameters="7B", bits="1" + SURROGATE), "bits"),
    (lambda: iteragpu.quote("b200" + SURROGATE, days=7), "gpu"),
    (lambda: iteragpu.quote("b200", days=7, catalog="x" + SURROGATE), "catalog"),
    (lambda: iteragpu.predict(compute_capability="9.0", dtype=SURROGATE), "dtype"),
    (lambda: iteragpu.predict(compute_capability=SURROGATE), "compute_capability"),
    (lambda: iteragpu.environment(device=SURROGATE), "device"),
    (lambda: iteragpu.results_check("t" + SURROGATE + ".csv"), "path"),
])
def test_text_that_is_not_unicode_is_a_usage_error(call, keyword):
    with pytest.raises(iteragpu.UsageError) as raised:
        call()
    assert isinstance(raised.value, ValueError)
    assert raised.value.field == keyword
    assert "lone surrogate" in str(raised.value)


@pytest.mark.parametrize("call, keyword", [
    (lambda: iteragpu.estimate(parameters=10**5000, bits=16), "parameters"),
    (lambda: iteragpu.estimate(parameters=7, bits=10**4400), "bits"),
    (lambda: iteragpu.quote("b200", days=7, lots=10**4400), "lots"),
])
def test_integers_of_thousands_of_digits_are_usage_errors(call, keyword):
    with pytest.raises(iteragpu.UsageError) as raised:
        call()
    assert raised.value.field == keyword


def test_a_thousand_digits_is_still_exact():
    estimate = iteragpu.estimate(parameters=10**999, bits=8)
    assert estimate.weights.bytes == 10**999


@pytest.mark.parametrize("call", [
    lambda: iteragpu.estimate(parameters=[7], bits=16),
    lambda: iteragpu.quote(7, days=7),
    lambda: iteragpu.predict(compute_capability="9.0", dtype=16),
    lambda: iteragpu.environment(device=0),
])
def test_wrong_types_are_type_errors(call):
    with pytest.raises(TypeError):
        call()


# A path holding a NUL byte would be cut short at the NUL by every C file function and open
# another, shorter file: refused before any file is opened, as Python's open() refuses it.
H200_MEASUREMENT = os.path.join(SOURCE_DIR, "examples", "results", "mesures-float32.json")


@pytest.mark.parametrize("call, keyword", [
    (lambda: iteragpu.read_measurement(H200_MEASUREMENT + "\x00junk"), "path"),
    (lambda: iteragpu.Measurement.read(H200_MEASUREMENT + "\x00"), "path"),
    (lambda: iteragpu.compare(H200_MEASUREMENT + "\x00junk", H200_MEASUREMENT), "measurements"),
    (lambda: iteragpu.estimate(checkpoint=H200_MEASUREMENT + "\x00junk"), "checkpoint"),
    (lambda: iteragpu.quote("b200", days=7, catalog=os.path.join(SOURCE_DIR, "data", "tarifs-forfaits.csv") + "\x00x"),
     "catalog"),
    (lambda: iteragpu.results_check(os.path.join(SOURCE_DIR, "data", "resultats-bruts.csv") + "\x00x"), "path"),
])
def test_paths_with_a_nul_byte_are_refused_naming_the_keyword(call, keyword):
    assert os.path.exists(H200_MEASUREMENT)  # the shorter path is a real file: it must not be read
    with pytest.raises(iteragpu.UsageError) as raised:
        call()
    assert isinstance(raised.value, ValueError)
    assert raised.value.field == keyword
    assert "NUL" in str(raised.value)


@pytest.mark.parametrize("call, message", [
    (lambda: iteragpu.read_measurement(None), "path: expected a str or os.PathLike path, got None"),
    (lambda: iteragpu.Measurement.read(None), "path: expected a str or os.PathLike path, got None"),
    (lambda: iteragpu.predict(device=False), "device: expected a str, got bool"),
    (lambda: iteragpu.predict(device=0), "device: expected a str, got int"),
    (lambda: iteragpu.predict(device=[]), "device: expected a str, got list"),
    (lambda: iteragpu.estimate(checkpoint=H200_MEASUREMENT, by_tensor="yes"),
     "by_tensor: expected True or False, got str"),
    (lambda: iteragpu.Catalog.load(os.path.join(SOURCE_DIR, "data", "tarifs-forfaits.csv"), require_full_grid="yes"),
     "require_full_grid: expected True or False, got str"),
])
def test_wrong_types_are_one_line_type_errors_naming_the_keyword(call, message):
    with pytest.raises(TypeError) as raised:
        call()
    assert str(raised.value) == message
