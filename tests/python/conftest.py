"""Shared fixtures of the Python tests. ctest (tests/python/CMakeLists.txt) sets
PYTHONPATH to the build tree's package and names the CLI, the test double plugin and the
source tree in environment variables."""

import json
import os
import subprocess
import sys

import pytest


def optional_module(name):
    """Imports a module the GPU machine lacks (nbclient, nbformat, jsonschema): skips there,
    but fails where the build says they must be present (ITERAGPU_REQUIRE_JUPYTER=1, the
    default for builds on Debian), so a missing package can never turn the notebook test
    into a silent skip."""
    if os.environ.get("ITERAGPU_REQUIRE_JUPYTER") == "1":
        import importlib

        return importlib.import_module(name)
    return pytest.importorskip(name)


SOURCE_DIR = os.environ.get(
    "ITERAGPU_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
)


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a real GPU; skipped where none is visible")


def _required_path(variable):
    path = os.environ.get(variable)
    if not path or not os.path.exists(path):
        pytest.skip(f"{variable} is not set to an existing file (run the suite through ctest)")
    return path


@pytest.fixture(scope="session")
def cli():
    """Runs the iteragpu executable; returns the CompletedProcess (text)."""
    path = _required_path("ITERAGPU_CLI")

    def run(*args, **kwargs):
        return subprocess.run([path, *args], capture_output=True, text=True, **kwargs)

    return run


@pytest.fixture(scope="session")
def fake_backend():
    """The scripted test double of the LibTorch plugin (tests/cpp/fake_backend_plugin.cpp)."""
    return _required_path("ITERAGPU_FAKE_BACKEND_PLUGIN")


@pytest.fixture(scope="session")
def torch_backend_built():
    return os.environ.get("ITERAGPU_TORCH_BACKEND_BUILT", "0") == "1"


@pytest.fixture
def run_python():
    """Runs Python code in a fresh interpreter with this environment (plus `extra`);
    returns the CompletedProcess (text). For checks that need a clean process: what
    `import iteragpu` loads, or which backend plugin a process opens (one per process)."""

    def run(code, extra=None, timeout=120):
        environment = dict(os.environ)
        environment.update(extra or {})
        return subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=timeout
        )

    return run


@pytest.fixture(scope="session")
def schema_validator():
    """validate(document, "estimate") checks a document against data/schema/estimate.schema.json."""
    jsonschema = optional_module("jsonschema")

    def validate(document, name):
        with open(os.path.join(SOURCE_DIR, "data", "schema", f"{name}.schema.json"), encoding="utf-8") as file:
            schema = json.load(file)
        jsonschema.validate(document, schema)

    return validate
