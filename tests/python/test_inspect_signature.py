"""inspect.signature works for every public function and method of the package (the README:
"Every function lists its keywords (`inspect.signature`)"), those of the compiled extension
included: python/src/module.cpp gives each pybind11 function a text signature
(__text_signature__) read from pybind11's own signature line, and __doc__ keeps that line."""

import inspect

import pytest

import iteragpu
from test_stub_signatures import module_signatures

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only",
    inspect.Parameter.VAR_POSITIONAL: "*args",
    inspect.Parameter.VAR_KEYWORD: "**kwargs",
}


def _public_callables():
    """(qualified name, callable) of every public function in iteragpu.__all__ and every public
    method (static methods included) of its classes, as a user reaches them."""
    found = []
    for name in iteragpu.__all__:
        value = getattr(iteragpu, name)
        if isinstance(value, type):
            for klass in value.__mro__:
                if klass is object or klass.__module__ == "builtins" or not klass.__module__.startswith("iteragpu"):
                    continue  # Exception's own methods, pybind11's base
                for member, raw in vars(klass).items():
                    if member.startswith("_") and member != "__init__":
                        continue
                    if isinstance(raw, property) or type(raw).__name__ == "pybind11_static_property":
                        continue
                    if member == "__init__" and type(raw).__name__ == "wrapper_descriptor":
                        continue
                    attribute = getattr(value, member)
                    if callable(attribute):
                        found.append((f"{name}.{member}", attribute))
        elif callable(value):
            found.append((name, value))
    return found


PUBLIC = _public_callables()


def test_the_walk_sees_the_extension_and_the_python_code():
    names = {name for name, _ in PUBLIC}
    for expected in ("read_measurement", "Measurement.read", "Measurement.to_dict", "Measurement.plot",
                     "SweepResult.plot", "MeasurementComparison.to_markdown", "estimate", "measure", "sweep",
                     "PackageCalculator.quote", "ResultsTable.add_result", "PhaseMeasurer.measure",
                     "build_description"):
        assert expected in names, expected
    assert len(PUBLIC) > 60


@pytest.mark.parametrize("name, function", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_inspect_signature_works(name, function):
    signature = inspect.signature(function)
    if inspect.isbuiltin(function) or type(function).__name__ == "builtin_function_or_method":
        # The extension's: the same parameters, kinds and defaults as pybind11's signature line.
        short = name.rsplit(".", 1)[-1]
        overloads = module_signatures(short, function)
        parameters = [(p.name, _KINDS[p.kind], p.default is not inspect.Parameter.empty)
                      for p in signature.parameters.values()]
        if len(overloads) == 1:
            assert parameters == overloads[0], (name, str(signature))
        else:
            assert [kind for _, kind, _ in parameters] == ["*args", "**kwargs"]
        # __doc__ still starts with pybind11's line (the stub test reads it).
        assert function.__doc__.startswith(f"{short}(") or "Overloaded function." in function.__doc__


def test_signatures_a_user_asks_for():
    assert str(inspect.signature(iteragpu.read_measurement)) == "(path)"
    assert str(inspect.signature(iteragpu.Measurement.read)) == "(path)"
    assert list(inspect.signature(iteragpu.MeasureRequest.__init__).parameters)[:3] == ["self", "device", "batch"]
    measurement = iteragpu.read_measurement(_example())
    # A bound method: self is gone, as for a Python method.
    assert str(inspect.signature(measurement.to_dict)) == "()"
    assert str(inspect.signature(measurement.plot)) == "()"
    assert list(inspect.signature(measurement.predicted_row).parameters) == ["index"]
    quote = inspect.signature(iteragpu.PackageCalculator.quote)
    assert list(quote.parameters) == ["self", "gpu", "days", "lots", "accepted_results"]
    keyword_only = inspect.signature(iteragpu.ResultsTable.add_result).parameters["measurement"]
    assert keyword_only.kind is inspect.Parameter.KEYWORD_ONLY
    # The package's own Python functions keep their real signatures.
    assert "checkpoint" in inspect.signature(iteragpu.estimate).parameters
    # help() shows the signature line and the documentation.
    assert iteragpu.read_measurement.__doc__.splitlines()[0].startswith("read_measurement(path")


def _example():
    import os

    from conftest import SOURCE_DIR

    return os.path.join(SOURCE_DIR, "examples", "results", "mesures-float32.json")


@pytest.mark.parametrize("name, expected", [
    ("MeasureRequest", "(*, device='cuda:0', batch=1, context=16, width=None, hidden=None, dtype=None, "
                       "warmup=None, repeats=None, seed=20260924, output=None, backend_path=None, model=None, "
                       "timeout=None, train=None, steps=None, lora_rank=None, lora_alpha=None, lora_targets=None, "
                       "gradient_checkpointing=None, new_tokens=None)"),
    ("PackageCalculator", "(catalog=None)"),
    ("MemoryEstimator", "()"),
])
def test_a_class_a_user_constructs_has_its_constructors_signature(name, expected):
    assert str(inspect.signature(getattr(iteragpu, name))) == expected


def test_a_class_only_the_library_makes_has_none():
    with pytest.raises(ValueError):
        inspect.signature(iteragpu.Measurement)
    with pytest.raises(TypeError):
        iteragpu.Measurement()


def test_no_signature_names_a_cpp_type():
    """pybind11 writes a C++ name ("iteragpu::MeasureRequest") for a type not yet registered
    when a function taking it is defined: every type a signature names is registered first."""
    from iteragpu import _iteragpu
    named = []
    for name, value in vars(_iteragpu).items():
        members = vars(value).items() if isinstance(value, type) else [("", value)]
        for member, item in members:
            doc = getattr(item, "__doc__", None) or ""
            if "::" in doc.split("\n\n")[0] or "iteragpu::" in doc:
                named.append(f"{name}.{member}" if member else name)
    assert not named, named
