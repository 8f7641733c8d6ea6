"""One rule for numbers in both front ends: Python hands the core the text of each value
(str as given, int as digits, Decimal in plain notation, float as its repr) and the core's
parsers decide, so a spelling the command line refuses is refused in Python too, naming the
same option."""

from decimal import Decimal

import pytest

import iteragpu

# (Python keyword, CLI option, value as given in Python, the text the core receives, which is
# what is typed on the command line, accepted?). A float arrives as its repr: 7e9 is
# "7000000000.0", a whole decimal, which a parameter count accepts (as it accepts "1.5M")
# and a count of days or lots does not.
SPELLINGS = [
    ("parameters", "--parameters", 7_000_000_000, "7000000000", True),
    ("parameters", "--parameters", "7B", "7B", True),
    ("parameters", "--parameters", "1.5M", "1.5M", True),
    ("parameters", "--parameters", "+12", "+12", True),
    ("parameters", "--parameters", 7e9, "7000000000.0", True),
    ("parameters", "--parameters", "7e9", "7e9", False),
    ("parameters", "--parameters", 1e22, "1e+22", False),
    ("parameters", "--parameters", "1.5", "1.5", False),
    ("bits", "--bits", 16, "16", True),
    ("bits", "--bits", 16.0, "16.0", False),
    ("reserve_gib", "--reserve-gib", 0.5, "0.5", True),
    ("reserve_gib", "--reserve-gib", 4.0, "4.0", True),
    ("reserve_gib", "--reserve-gib", Decimal("4.000"), "4.000", True),
    ("reserve_gib", "--reserve-gib", 1e-05, "1e-05", False),
    ("reserve_gib", "--reserve-gib", float("nan"), "nan", False),
    ("days", "--days", 7, "7", True),
    ("days", "--days", "7", "7", True),
    ("days", "--days", 7.0, "7.0", False),
    ("lots", "--lots", 2, "2", True),
    ("lots", "--lots", 2.0, "2.0", False),
    ("lots", "--lots", "1e3", "1e3", False),
    ("accepted_results", "--accepted-results", 120, "120", True),
    ("accepted_results", "--accepted-results", Decimal("120"), "120", True),
    ("accepted_results", "--accepted-results", 120.0, "120.0", False),
]


def test_a_float_reaches_the_core_as_its_repr():
    for _, _, value, typed, _ in SPELLINGS:
        if isinstance(value, float):
            assert repr(value) == typed


ESTIMATE = {"parameters": "7B", "bits": 16}
QUOTE = {"gpu": "b200", "days": 7}


def _python(keyword, value):
    if keyword in ("parameters", "bits", "reserve_gib"):
        options = dict(ESTIMATE, **{keyword: value})
        return lambda: iteragpu.estimate(options.pop("parameters"), options.pop("bits"), **options)
    options = dict(QUOTE, **{keyword: value})
    return lambda: iteragpu.quote(options.pop("gpu"), options.pop("days"), **options)


def _command_line(option, text):
    if option in ("--parameters", "--bits", "--reserve-gib"):
        arguments = {"--parameters": "7B", "--bits": "16", option: text}
        return ["estimate", *[part for pair in arguments.items() for part in pair]]
    arguments = {"--gpu": "b200", "--days": "7", option: text}
    return ["packages", *[part for pair in arguments.items() for part in pair]]


@pytest.mark.parametrize("keyword, option, value, typed, accepted", SPELLINGS,
                         ids=[f"{s[0]}={s[3]}" for s in SPELLINGS])
def test_both_front_ends_accept_the_same_spellings(cli, keyword, option, value, typed, accepted):
    completed = cli(*_command_line(option, typed))
    assert (completed.returncode == 0) == accepted, completed.stderr
    if accepted:
        _python(keyword, value)()
        return
    assert completed.returncode == 2 and f"error: {option}:" in completed.stderr, completed.stderr
    with pytest.raises(iteragpu.UsageError) as raised:
        _python(keyword, value)()
    assert raised.value.field == keyword
