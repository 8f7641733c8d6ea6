"""Every JSON file the project ships or records (examples/, data/, tests/data/) that names an
iteragpu schema ("schema": "iteragpu.NAME") validates against data/schema/NAME.schema.json, and
a file that names a schema the project does not have fails. The build tree's data folder (the
layout installed to share/iteragpu) holds every schema."""

import glob
import json
import os

import pytest

from conftest import SOURCE_DIR, optional_module

SHIPPED_FOLDERS = ("examples", "data", os.path.join("tests", "data"))
SCHEMA_FOLDER = os.path.join(SOURCE_DIR, "data", "schema")


def _named_schema(path):
    """NAME of the "schema": "iteragpu.NAME" member of a JSON file, or None when it names none."""
    try:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None  # not a JSON document (a test input that is meant to be broken is not shipped data)
    schema = document.get("schema") if isinstance(document, dict) else None
    if isinstance(schema, str) and schema.startswith("iteragpu."):
        return schema[len("iteragpu."):]
    return None


def _files_naming_a_schema():
    found = []
    for folder in SHIPPED_FOLDERS:
        for path in sorted(glob.glob(os.path.join(SOURCE_DIR, folder, "**", "*.json"), recursive=True)):
            if path.endswith(".schema.json"):
                continue
            name = _named_schema(path)
            if name is not None:
                found.append((os.path.relpath(path, SOURCE_DIR), name))
    return found


FILES = _files_naming_a_schema()


def _schema_problem(name):
    """Why a file naming iteragpu.NAME cannot be checked, or None when the schema exists."""
    if not os.path.exists(os.path.join(SCHEMA_FOLDER, f"{name}.schema.json")):
        return f"it names iteragpu.{name}, but data/schema/{name}.schema.json does not exist"
    return None


def test_the_walk_finds_the_shipped_results():
    paths = {path for path, _ in FILES}
    for expected in ("examples/results/llama-8b-bfloat16-h200.json", "examples/results/sweep-batch-h200.json",
                     "examples/results/benchmark.json", "examples/results/conformance.json",
                     "examples/results/environment.json"):
        assert expected in paths
    assert len(FILES) >= 20


@pytest.mark.parametrize("path, name", FILES, ids=[path for path, _ in FILES])
def test_a_shipped_file_validates_against_the_schema_it_names(path, name, schema_validator):
    assert _schema_problem(name) is None, f"{path}: {_schema_problem(name)}"
    with open(os.path.join(SOURCE_DIR, path), encoding="utf-8") as file:
        schema_validator(json.load(file), name)


def test_a_file_naming_a_missing_schema_is_caught(tmp_path):
    made_up = tmp_path / "result.json"
    made_up.write_text(json.dumps({"schema": "iteragpu.no-such-record", "value": 1}))
    name = _named_schema(str(made_up))
    assert name == "no-such-record"
    assert _schema_problem(name) == ("it names iteragpu.no-such-record, but "
                                     "data/schema/no-such-record.schema.json does not exist")
    assert _schema_problem("sweep") is None


def test_a_file_that_breaks_its_schema_is_caught(schema_validator):
    jsonschema = optional_module("jsonschema")
    with open(os.path.join(SOURCE_DIR, "examples", "results", "sweep-batch-h200.json"), encoding="utf-8") as file:
        document = json.load(file)
    del document["largest_accepted"]  # what the version 1 file lacked
    with pytest.raises(jsonschema.ValidationError, match="largest_accepted"):
        schema_validator(document, "sweep")


def test_the_build_tree_data_holds_every_schema(cli):
    """share/iteragpu beside bin/ is the installed layout (data/CMakeLists.txt copies and
    installs the same list): a schema missing there would be missing once installed."""
    executable = os.environ["ITERAGPU_CLI"]
    shipped = os.path.join(os.path.dirname(os.path.dirname(executable)), "share", "iteragpu", "schema")
    assert os.path.isdir(shipped), f"{shipped} does not exist"
    in_source = sorted(os.path.basename(p) for p in glob.glob(os.path.join(SCHEMA_FOLDER, "*.schema.json")))
    in_build = sorted(os.path.basename(p) for p in glob.glob(os.path.join(shipped, "*.schema.json")))
    assert in_source == in_build
