"""The package itself: what importing it loads, its exceptions, stubs and version."""

import ast
import os

import pytest

import iteragpu
from conftest import SOURCE_DIR

PACKAGE_DIR = os.path.dirname(iteragpu.__file__)


def test_import_loads_neither_libtorch_nor_matplotlib(run_python):
    completed = run_python(
        "import sys, iteragpu\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('libtorch' in maps, 'libc10' in maps, 'iteragpu_torch_backend' in maps)\n"
        "print('matplotlib' in sys.modules, 'torch' in sys.modules)\n"
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["False"] * 5


def test_estimate_and_quote_do_not_load_libtorch(run_python):
    completed = run_python(
        "import iteragpu\n"
        "iteragpu.estimate('7B', 16, reserve_gib=4)._repr_html_()\n"
        "iteragpu.quote('b200', 7, lots=2, accepted_results=3)._repr_html_()\n"
        "print('libtorch' in open('/proc/self/maps').read())\n"
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["False"]


def test_environment_loads_libtorch_on_first_use(run_python, torch_backend_built):
    if not torch_backend_built:
        pytest.skip("built without the LibTorch backend")
    completed = run_python(
        "import iteragpu\n"
        "maps = lambda: open('/proc/self/maps').read()\n"
        "before = 'libtorch' in maps()\n"
        "iteragpu.environment()\n"
        "print(before, 'libtorch' in maps())\n"
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["False", "True"]


def test_plot_imports_matplotlib_only_when_asked(run_python, fake_backend):
    completed = run_python(
        "import sys, iteragpu\n"
        f"m = iteragpu.measure(backend_path={fake_backend!r}, progress=False)\n"
        "m._repr_html_()\n"
        "print('matplotlib' in sys.modules)\n"
        "m.plot()\n"
        "print('matplotlib.pyplot' in sys.modules)\n",
        extra={"MPLBACKEND": "Agg"},
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["False", "True"]


HIERARCHY = {
    "Error": (Exception,),
    "UsageError": ("Error", ValueError),
    "DataFileError": ("Error", ValueError),
    "ResourceUnavailable": ("Error",),
    "BackendUnavailable": ("ResourceUnavailable",),
    "DeviceUnavailable": ("ResourceUnavailable",),
    "OutputExists": ("ResourceUnavailable", FileExistsError),
    "MeasurementFailed": ("Error", RuntimeError),
    "OutOfMemory": ("MeasurementFailed",),
    "Interrupted": ("Error", KeyboardInterrupt),
}


@pytest.mark.parametrize("name, bases", HIERARCHY.items())
def test_exception_hierarchy(name, bases):
    error_type = getattr(iteragpu, name)
    assert error_type.__module__ == "iteragpu"
    assert error_type.__doc__, name
    assert error_type is getattr(iteragpu._iteragpu, name)  # registered once
    for base in bases:
        base_type = getattr(iteragpu, base) if isinstance(base, str) else base
        assert issubclass(error_type, base_type), (name, base_type)
    if name != "Error":
        assert issubclass(error_type, iteragpu.Error)


def test_usage_error_carries_the_keyword():
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.quote("b200", 7, lots="many")
    assert raised.value.field == "lots"
    assert iteragpu.UsageError("x").field is None  # raised by hand: no keyword


def test_version_matches_the_cli(cli):
    completed = cli("--version")
    assert completed.returncode == 0
    assert completed.stdout.startswith(f"iteragpu {iteragpu.__version__} ")
    assert iteragpu.build_description() in completed.stdout


def test_package_files_are_beside_the_extension():
    names = set(os.listdir(PACKAGE_DIR))
    # The measurement worker too: the runner looks for it beside the module.
    for required in ("__init__.py", "__init__.pyi", "_iteragpu.pyi", "py.typed", "_measure.py",
                     "iteragpu-measure-worker"):
        assert required in names
    assert any(name.startswith("_iteragpu.") and name.endswith(".so") for name in names)
    # Every pure-Python file of python/iteragpu/, in its folder (_display/ too): one missing
    # from ITERAGPU_PYTHON_FILES (python/CMakeLists.txt) would be missing here and when installed.
    source = os.path.join(SOURCE_DIR, "python", "iteragpu")
    for folder, folders, files in os.walk(source):
        folders[:] = [name for name in folders if name != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".pyi")) or name == "py.typed":
                relative = os.path.relpath(os.path.join(folder, name), source)
                assert os.path.isfile(os.path.join(PACKAGE_DIR, relative)), relative


def test_stubs_declare_every_public_name():
    with open(os.path.join(PACKAGE_DIR, "__init__.pyi"), encoding="utf-8") as file:
        tree = ast.parse(file.read())
    declared = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            declared.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared.add(node.name)
    assert set(iteragpu.__all__) <= declared, set(iteragpu.__all__) - declared
    for name in iteragpu.__all__:
        assert hasattr(iteragpu, name), name


def test_every_binding_has_documented_keywords():
    # py::arg on every parameter: the signatures name their keywords.
    for function, keywords in [
        (iteragpu.MemoryEstimator.estimate, ["parameters", "bits", "reserve_gib"]),
        (iteragpu.PackageCalculator.quote, ["gpu", "days", "lots", "accepted_results"]),
        (iteragpu.Environment.collect, ["device", "output", "backend_path"]),
        (iteragpu.MeasureRequest.__init__, ["device", "batch", "context", "width", "hidden", "dtype",
                                            "warmup", "repeats", "seed", "output", "backend_path"]),
        (iteragpu._iteragpu.PhaseMeasurer.measure, ["request", "progress"]),
    ]:
        signature = function.__doc__.splitlines()[0]
        for keyword in keywords:
            assert f"{keyword}:" in signature, (function, keyword, signature)
        assert "Returns:" in function.__doc__ or function.__name__ == "__init__"


def test_defaults_come_from_the_core_request_structs():
    request = iteragpu.MeasureRequest()  # text, as written; the core parses it
    assert (request.device, request.batch, request.context) == ("cuda:0", "1", "16")
    # Left out (None), as an option not given: width 64, hidden 4 x width, dtype float32 for
    # the synthetic MLP (a checkpoint's own with model), new tokens 16 with a model, warmup 1
    # and repeats 2 (a workload without warm-ups refuses them given).
    assert (request.width, request.dtype, request.warmup, request.repeats, request.hidden) == (None, None, None, None, None)
    assert (request.model, request.new_tokens) == (None, None)
    configuration = iteragpu.MeasureConfiguration.parse(request)
    assert (configuration.batch, configuration.width, configuration.hidden) == (1, 64, 256)
    assert (configuration.warmup, configuration.repeats) == (1, 2)
    assert configuration.dtype == "float32"
    assert iteragpu.estimate(1, 8).reserve.bytes == 0
    assert iteragpu.quote("b200", 7).lots == 1
