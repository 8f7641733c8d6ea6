"""One rule for numbers in every JSON view, checked over every schema in data/schema/:

- a count (days, lots, GPUs, results, units, tensors, repeats, indices, sizes) is a JSON
  integer, bounded by the parsers so every JSON reader holds it exactly;
- money and memory amounts of exact arithmetic (cents, dollars, GiB, GB, a GiB reserve) are
  decimal strings with a pattern, so no reader turns them into a rounded double.

Byte and parameter counts follow their source: machine counters (a measurement's allocator,
a tensor) are integers; the totals of an estimate, computed exactly from counts a user may
give with a thousand digits, are pattern-checked strings. Then one real output per schema
validates against it."""

import glob
import json
import os

import pytest

import iteragpu
from conftest import SOURCE_DIR, optional_module

SCHEMAS = sorted(glob.glob(os.path.join(SOURCE_DIR, "data", "schema", "*.schema.json")))

COUNTS = {"days", "lots", "total_gpus", "gpus_per_lot", "accepted_results", "units_attempted",
          "units_accepted_distinct", "line", "tensors", "tensor_count", "warmup", "repeats",
          "batch", "context", "width", "hidden", "seed", "index", "multiprocessors", "repeat",
          "forwards", "count", "warm_repeats", "exit_code", "size", "schema_version",
          "bits_per_element", "exact_counters", "counters"}
AMOUNT_SUFFIXES = ("_cents", "_usd", "gib", "gb")
AMOUNTS = {"denominator"}  # of the reduced fraction of cents per result


def _deref(schema, node):
    """Follows local $refs ("#/definitions/x")."""
    while isinstance(node, dict) and "$ref" in node:
        target = schema
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _alternatives(schema, node):
    """The schemas a value may match: through $ref, oneOf/anyOf, and nulls left out."""
    node = _deref(schema, node)
    branches = node.get("oneOf") or node.get("anyOf")
    if branches:
        return [alt for branch in branches for alt in _alternatives(schema, branch)]
    if node.get("type") == "null":
        return []
    return [node]


def _properties(schema, node, path="", seen=None):
    """Every (path, name, subschema) of a named property, wherever it is declared."""
    seen = set() if seen is None else seen
    if isinstance(node, dict):
        if id(node) in seen:
            return
        seen.add(id(node))
        for name, child in node.get("properties", {}).items():
            yield f"{path}.{name}", name, child
        for key, child in node.items():
            yield from _properties(schema, child, f"{path}/{key}", seen)
    elif isinstance(node, list):
        for child in node:
            yield from _properties(schema, child, path, seen)


def _is_integer(alternative):
    types = alternative.get("type")
    types = types if isinstance(types, list) else [types]
    if "integer" in types:
        return True
    values = alternative.get("enum")
    return bool(values) and all(type(v) is int for v in values)


def _is_exact_text(alternative):
    return alternative.get("type") == "string" and "pattern" in alternative


def _is_label(alternative):
    values = alternative.get("enum")
    return bool(values) and all(type(v) is str for v in values)


def _checked(kind):
    problems = []
    for path in SCHEMAS:
        with open(path, encoding="utf-8") as file:
            schema = json.load(file)
        for where, name, node in _properties(schema, schema):
            # A branch with neither type nor enum only narrows a property typed elsewhere
            # ({"minimum": 1}); arrays and objects are not numbers ("tensors": [...]).
            alternatives = [alt for alt in _alternatives(schema, node)
                            if ("type" in alt or "enum" in alt) and alt.get("type") not in ("array", "object")]
            if not alternatives:
                continue
            label = f"{os.path.basename(path)}:{where}"
            if kind == "count" and name in COUNTS:
                if not all(_is_integer(alt) for alt in alternatives):
                    problems.append(label)
            if kind == "amount" and (name in AMOUNTS or name.endswith(AMOUNT_SUFFIXES)):
                # A constant label ("gib": "2^30 bytes") is not an amount.
                if not all(_is_exact_text(alt) or _is_label(alt) for alt in alternatives):
                    problems.append(label)
    return problems


def test_there_are_schemas_to_check():
    assert len(SCHEMAS) >= 11


def test_every_count_is_a_json_integer():
    assert _checked("count") == []


def test_every_money_or_memory_amount_is_pattern_checked_text():
    assert _checked("amount") == []


def test_the_walk_sees_the_properties_that_once_disagreed():
    # The quote and the results report once gave lots and total_gpus as strings.
    names = set()
    for path in SCHEMAS:
        with open(path, encoding="utf-8") as file:
            schema = json.load(file)
        names |= {name for _, name, _ in _properties(schema, schema)}
    assert {"lots", "total_gpus", "accepted_results", "units_attempted", "lot_price_cents"} <= names


def _real_outputs(cli, tmp_path, fake_backend):
    """One output per schema, made here by the CLI and the module or shipped as examples."""
    def run(*args):
        completed = cli(*args)
        assert completed.returncode == 0, completed.stderr
        return json.loads(completed.stdout)

    outputs = {
        "estimate": run("estimate", "--parameters", "1.5M", "--bits", "3", "--format", "json"),
        "quote": run("packages", "--gpu", "b200", "--days", "7", "--accepted-results", "3",
                     "--format", "json"),
        "catalog": run("packages", "--list", "--format", "json"),
        "prediction": run("predict", "--compute-capability", "9.0", "--format", "json"),
        "environment": iteragpu.environment(backend_path=str(tmp_path / "no-plugin.so")).to_dict(),
    }
    examples = os.path.join(SOURCE_DIR, "examples", "results")
    for name in ["mesures-petit-essai.json", "mesures-tous.json", "benchmark.json", "conformance.json"]:
        with open(os.path.join(examples, name), encoding="utf-8") as file:
            document = json.load(file)
        outputs[document["schema"].split(".", 1)[1]] = document
    checkpoint = tmp_path / "model.safetensors"
    header = json.dumps({"w": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]}}).encode()
    checkpoint.write_bytes(len(header).to_bytes(8, "little") + header + bytes(8))
    outputs["checkpoint-estimate"] = run("estimate", "--checkpoint", str(checkpoint), "--format", "json")
    from test_measure import write_tiny_llama

    write_tiny_llama(tmp_path / "tiny-llama")
    outputs["package-fit"] = run("packages", "--model", str(tmp_path / "tiny-llama"), "--batch", "2",
                                 "--context", "8", "--days", "7", "--format", "json")
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / "a.txt").write_text("abc")
    manifest = {"schema": "iteragpu.lab-kit-manifest", "schema_version": 1, "kit": "kit",
                "note": "hand-made", "members": [
                    {"path": "a.txt", "size": 3, "sha256":
                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
                    {"path": "MANIFEST.json", "size": None, "sha256": None}]}
    (kit / "MANIFEST.json").write_text(json.dumps(manifest))
    outputs["lab-kit-manifest"] = manifest
    outputs["kit-verification"] = run("kit", "verify", str(kit), "--format", "json")
    table = tmp_path / "resultats.csv"
    measurement = tmp_path / "m.json"
    with open(os.path.join(examples, "mesures-float32.json"), "rb") as file:
        measurement.write_bytes(file.read())
    outputs["results-add"] = run("results", "add", "--table", str(table), "--measurement", str(measurement),
                                 "--gpu", "h200", "--days", "7", "--work-unit", "translated ticket",
                                 "--attempted", "10", "--accepted", "7", "--metric", "reviewer score",
                                 "--threshold", ">= 4", "--observed", "4.2", "--date", "2026-12-01",
                                 "--format", "json")
    outputs["results-check"] = run("results", "check", "--table", str(table), "--format", "json")
    outputs["results-report"] = iteragpu.results_report(
        os.path.join(SOURCE_DIR, "data", "resultats-bruts.csv")).to_dict()
    outputs["comparison"] = iteragpu.compare(
        os.path.join(examples, "mesures-float32.json"), os.path.join(examples, "mesures-bfloat16.json")).to_dict()
    os.environ["ITERAGPU_FAKE_BACKEND"] = "memory=268435456"
    try:
        outputs["sweep"] = iteragpu.sweep("batch", width=1024, backend_path=fake_backend, progress=False).to_dict()
    finally:
        del os.environ["ITERAGPU_FAKE_BACKEND"]
    return outputs


def test_a_real_output_of_every_schema_validates(cli, tmp_path, fake_backend):
    jsonschema = optional_module("jsonschema")
    outputs = _real_outputs(cli, tmp_path, fake_backend)
    names = {os.path.basename(path)[: -len(".schema.json")] for path in SCHEMAS}
    assert set(outputs) == names
    for name, document in outputs.items():
        with open(os.path.join(SOURCE_DIR, "data", "schema", f"{name}.schema.json"), encoding="utf-8") as file:
            jsonschema.validate(document, json.load(file))
