"""The pip build backend (python/cmake_build_backend.py, standard library only): how it
assembles CMake's arguments and when it refuses to build a wheel. No CMake run, no PyTorch."""
import importlib.util
import os

import pytest

from conftest import SOURCE_DIR

_spec = importlib.util.spec_from_file_location(
    "cmake_build_backend", os.path.join(SOURCE_DIR, "python", "cmake_build_backend.py"))
backend = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backend)


def prefix_paths(arguments):
    return [a for a in arguments if a.startswith("-DCMAKE_PREFIX_PATH")]


def test_prefix_paths_are_merged_with_the_torch_prefix_not_replaced():
    arguments = backend._cmake_arguments(
        {"cmake-args": "-DCMAKE_PREFIX_PATH:PATH=/settings -DX=1"},
        environ={"CMAKE_ARGS": "-DCMAKE_PREFIX_PATH=/tmp/deps/usr;/other -D CMAKE_PREFIX_PATH=/separate"},
        torch_prefix="/venv/torch/share/cmake", executable="/venv/bin/python3")
    assert prefix_paths(arguments) == [
        "-DCMAKE_PREFIX_PATH=/venv/torch/share/cmake;/tmp/deps/usr;/other;/separate;/settings"]
    assert "-DX=1" in arguments and "-DPython_EXECUTABLE=/venv/bin/python3" in arguments
    assert "-D" not in arguments and "CMAKE_PREFIX_PATH=/separate" not in arguments


def test_the_readme_spelling_keeps_the_torch_prefix():
    arguments = backend._cmake_arguments(
        None, environ={"CMAKE_ARGS": "-DCMAKE_PREFIX_PATH=/tmp/deps/usr"}, torch_prefix="/t/share/cmake")
    assert prefix_paths(arguments) == ["-DCMAKE_PREFIX_PATH=/t/share/cmake;/tmp/deps/usr"]


def test_prefix_paths_without_torch_or_without_any():
    assert prefix_paths(backend._cmake_arguments(None, environ={}, torch_prefix=None)) == []
    arguments = backend._cmake_arguments(
        {"cmake-args": ["-DCMAKE_PREFIX_PATH=/a", "-DCMAKE_PREFIX_PATH=/b;/a"]}, environ={}, torch_prefix=None)
    assert prefix_paths(arguments) == ["-DCMAKE_PREFIX_PATH=/a;/b"]  # a list: the setting given twice


CUDA_TORCH = {"version": "2.5.1+cu124", "cuda": "12.4", "hip": None}
ROCM_TORCH = {"version": "2.5.1+rocm6.2", "cuda": None, "hip": "6.2.41133"}
CPU_TORCH = {"version": "2.5.1+cpu", "cuda": None, "hip": None}


@pytest.mark.parametrize("torch", [CUDA_TORCH, ROCM_TORCH])
@pytest.mark.parametrize("plugin", ["", "LibTorch 2.1.2 (CPU only)"])
def test_a_gpu_torch_without_a_gpu_plugin_fails_the_wheel(torch, plugin):
    reason = backend._plugin_refusal(torch, plugin, allow_cpu_only=False)
    assert reason and "\n" not in reason
    assert torch["version"] in reason and ("CUDA 12.4" in reason or "ROCm 6.2" in reason)
    assert "allow-cpu-only=true" in reason and "ITERAGPU_ALLOW_CPU_ONLY_WHEEL=1" in reason
    assert (plugin in reason) if plugin else ("did not build it" in reason)
    assert backend._plugin_refusal(torch, plugin, allow_cpu_only=True) is None


@pytest.mark.parametrize("torch, plugin", [
    (CUDA_TORCH, "LibTorch 2.5.1 (CUDA 12.4)"),
    (ROCM_TORCH, "LibTorch 2.5.1 (ROCm 6.2.41133)"),
    (CPU_TORCH, ""), (CPU_TORCH, "LibTorch 2.5.1 (CPU only)"),
    (None, ""), (None, "LibTorch 2.1.2 (CPU only)"),
])
def test_otherwise_the_wheel_is_built(torch, plugin):
    assert backend._plugin_refusal(torch, plugin, allow_cpu_only=False) is None


def test_cpu_only_is_allowed_by_a_setting_or_the_environment():
    assert not backend._allow_cpu_only(None, environ={})
    assert not backend._allow_cpu_only({"allow-cpu-only": "false"}, environ={"ITERAGPU_ALLOW_CPU_ONLY_WHEEL": "0"})
    assert backend._allow_cpu_only({"allow-cpu-only": "true"}, environ={})
    assert backend._allow_cpu_only(None, environ={"ITERAGPU_ALLOW_CPU_ONLY_WHEEL": "1"})


def test_the_configured_plugin_is_read_from_the_cmake_cache(tmp_path):
    assert backend._configured_plugin(str(tmp_path)) == ""
    (tmp_path / "CMakeCache.txt").write_text(
        "Torch_DIR:PATH=/x\nITERAGPU_TORCH_BACKEND_DESCRIPTION:INTERNAL=LibTorch 2.5.1 (CUDA 12.4)\n")
    assert backend._configured_plugin(str(tmp_path)) == "LibTorch 2.5.1 (CUDA 12.4)"


def test_torch_version_file_is_read_without_importing_torch(tmp_path, monkeypatch):
    package = tmp_path / "torch"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('torch must not be imported')\n")
    (package / "version.py").write_text(
        "from typing import Optional\n__all__ = ['__version__', 'cuda', 'hip']\n"
        "__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\nhip: Optional[str] = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert backend._torch_description() == CUDA_TORCH
