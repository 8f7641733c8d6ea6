"""The PEP 517 build backend of `pip install .` and `pip wheel .` (pyproject.toml).

It needs nothing but the standard library, CMake and a compiler, so it works offline and
with `--no-build-isolation`: it configures the project for the interpreter running it
(Python module and LibTorch plugin only), builds it, installs the CMake component `python`
into a staging folder and zips that into a wheel. The plugin is built against the LibTorch
of that interpreter's PyTorch when it has one (visible with --no-build-isolation), else
against a system LibTorch (Debian's libtorch-dev) when CMake finds one, else not at all.

config_settings (pip --config-settings KEY=VALUE):
  build-dir   a CMake build folder to keep between builds (default: a temporary one)
  cmake-args  extra CMake arguments, separated by spaces (the CMAKE_ARGS environment
              variable is read too)
"""

import base64
import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _project():
    """Name, version and summary, from the project() call of the top CMakeLists.txt."""
    with open(os.path.join(_ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        text = f.read()
    call = re.search(r"project\(\s*(\w+)\s+VERSION\s+([0-9.]+).*?DESCRIPTION\s+\"([^\"]*)\"", text, re.S)
    return call.group(1), call.group(2), call.group(3)


def _wheel_tag():
    if sys.implementation.name != "cpython":
        raise RuntimeError("iteragpu's wheel is built for CPython only")
    python = "cp%d%d" % sys.version_info[:2]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s%s-%s" % (python, python, sys.abiflags, platform)


def _dist_info_name():
    name, version, _ = _project()
    return "%s-%s.dist-info" % (name, version)


def _metadata_files():
    name, version, summary = _project()
    metadata = (
        "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nLicense: MIT\n"
        "Requires-Python: >=3.8\n" % (name, version, summary)
    )
    wheel = "Wheel-Version: 1.0\nGenerator: iteragpu cmake_build_backend\nRoot-Is-Purelib: false\nTag: %s\n" % _wheel_tag()
    return {"METADATA": metadata, "WHEEL": wheel, "top_level.txt": name + "\n"}


def _torch_cmake_prefix():
    """torch.utils.cmake_prefix_path of this interpreter's PyTorch, without importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    prefix = os.path.join(list(spec.submodule_search_locations)[0], "share", "cmake")
    return prefix if os.path.isdir(os.path.join(prefix, "Torch")) else None


def _cmake_arguments(config_settings):
    args = [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DPython_EXECUTABLE=" + sys.executable,
        "-DITERAGPU_BUILD_PYTHON=ON",
        "-DITERAGPU_BUILD_CLI=OFF",
        "-DITERAGPU_BUILD_TESTS=OFF",
        "-DITERAGPU_BUILD_BENCHMARKS=OFF",
        "-DITERAGPU_BUILD_LAB_KIT=OFF",
        "-DITERAGPU_PYTHON_INSTALL_DIR=.",  # the staging folder is the wheel's root
    ]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    torch_prefix = _torch_cmake_prefix()
    if torch_prefix:
        print("iteragpu: LibTorch plugin built against the PyTorch of %s (%s)" % (sys.executable, torch_prefix))
        args.append("-DCMAKE_PREFIX_PATH=" + torch_prefix)
    else:
        print(
            "iteragpu: %s has no PyTorch here (with pip, --no-build-isolation shows the "
            "environment's); the plugin uses a system LibTorch if CMake finds one" % sys.executable
        )
    extra = os.environ.get("CMAKE_ARGS", "") + " " + (config_settings or {}).get("cmake-args", "")
    return args + shlex.split(extra)


def _run(command):
    print("iteragpu:", " ".join(shlex.quote(part) for part in command), flush=True)
    subprocess.run(command, check=True)


def _build_into(staging, config_settings):
    build_dir = (config_settings or {}).get("build-dir")
    temporary = None
    if not build_dir:
        temporary = tempfile.mkdtemp(prefix="iteragpu-build-")
        build_dir = temporary
    try:
        _run(["cmake", "-S", _ROOT, "-B", build_dir] + _cmake_arguments(config_settings))
        _run(["cmake", "--build", build_dir, "--parallel", str(os.cpu_count() or 1)])
        _run(["cmake", "--install", build_dir, "--component", "python", "--prefix", staging])
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (path, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist_info = os.path.join(metadata_directory, _dist_info_name())
    os.makedirs(dist_info, exist_ok=True)
    for name, text in _metadata_files().items():
        with open(os.path.join(dist_info, name), "w", encoding="utf-8") as f:
            f.write(text)
    return _dist_info_name()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version, _ = _project()
    wheel_name = "%s-%s-%s.whl" % (name, version, _wheel_tag())
    staging = tempfile.mkdtemp(prefix="iteragpu-wheel-")
    try:
        _build_into(staging, config_settings)
        record = ""
        with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as wheel:
            for folder, _, files in sorted(os.walk(staging)):
                for file in sorted(files):
                    path = os.path.join(folder, file)
                    archive_path = os.path.relpath(path, staging).replace(os.sep, "/")
                    with open(path, "rb") as f:
                        data = f.read()
                    info = zipfile.ZipInfo(archive_path, date_time=(1980, 1, 1, 0, 0, 0))
                    info.external_attr = (0o100000 | (os.stat(path).st_mode & 0o777)) << 16
                    info.compress_type = zipfile.ZIP_DEFLATED
                    wheel.writestr(info, data)
                    record += _record_line(archive_path, data)
            dist_info = _dist_info_name()
            for file, text in _metadata_files().items():
                wheel.writestr(dist_info + "/" + file, text)
                record += _record_line(dist_info + "/" + file, text.encode())
            wheel.writestr(dist_info + "/RECORD", record + dist_info + "/RECORD,,\n")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return wheel_name
