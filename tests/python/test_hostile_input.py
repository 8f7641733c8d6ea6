"""Hostile values from Python: text that is not valid Unicode and integers Python itself will
not print are bad values (UsageError, a ValueError, naming the keyword); a value of the wrong
type is a TypeError naming the keyword. Never RuntimeError, never Python's own conversion
error."""

import pytest

import iteragpu

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
