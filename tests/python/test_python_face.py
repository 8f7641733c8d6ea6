"""The module speaks Python: its public functions list their keywords, and the text of its
objects names no command-line option."""

import inspect
import re

import pytest

import iteragpu

# Every function lists its keywords; compare(A, B, ...) takes the measurements themselves as
# its positional arguments, and nothing else.
VARIADIC_MEASUREMENTS = {"compare"}
CLI_OPTION = re.compile(r"(^|[\s(`'\"])--[a-z]")


def test_every_public_function_lists_its_keywords():
    checked = []
    for name in iteragpu.__all__:
        value = getattr(iteragpu, name)
        if not inspect.isfunction(value):
            continue
        kinds = {p.kind for p in inspect.signature(value).parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD not in kinds, f"{name}{inspect.signature(value)}"
        if name not in VARIADIC_MEASUREMENTS:
            assert inspect.Parameter.VAR_POSITIONAL not in kinds, f"{name}{inspect.signature(value)}"
        checked.append(name)
    assert {"estimate", "environment", "quote", "predict", "results_add", "measure", "sweep"} <= set(checked)
    assert "hidden" in inspect.signature(iteragpu.measure).parameters
    assert "reserve_gib" in inspect.signature(iteragpu.estimate).parameters
    assert "accepted_results" in inspect.signature(iteragpu.quote).parameters


def _objects(tmp_path):
    yield iteragpu.estimate("7B", 16, reserve_gib=4)
    yield iteragpu.estimate("1.5M", 3)
    yield iteragpu.quote("b200", 7)
    yield iteragpu.quote("b200", 7, lots=2, accepted_results=3)
    yield iteragpu.quote("b200", 7).unit_cost
    yield iteragpu.quote("b200", 7, accepted_results=3).unit_cost
    yield iteragpu.PackageCalculator().catalog
    yield iteragpu.predict(compute_capability="9.0")
    table = tmp_path / "empty.csv"
    table.write_text(",".join(iteragpu.ResultsTable.columns) + "\n")
    yield iteragpu.results_report(table)


def test_text_of_objects_names_no_command_line_option(tmp_path):
    for value in _objects(tmp_path):
        for text in (str(value), repr(value)):
            assert not CLI_OPTION.search(text), f"{type(value).__name__}: {text}"


def test_escape_codes_only_on_a_terminal_without_no_color(monkeypatch, tmp_path):
    import os

    from iteragpu._display.progress import _may_use_escape_codes

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    leader, follower = os.openpty()
    with open(follower, "w", closefd=True) as terminal, open(tmp_path / "log", "w") as log:
        assert _may_use_escape_codes(terminal)
        assert not _may_use_escape_codes(log)
        assert not _may_use_escape_codes(None)
        monkeypatch.setenv("NO_COLOR", "1")
        assert not _may_use_escape_codes(terminal)
        monkeypatch.delenv("NO_COLOR")
        monkeypatch.setenv("TERM", "dumb")
        assert not _may_use_escape_codes(terminal)
    os.close(leader)
