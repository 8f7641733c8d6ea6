"""The PEP 517 build backend of `pip install .` and `pip wheel .` (pyproject.toml).

It needs nothing but the standard library, CMake and a compiler, so it works offline and
with `--no-build-isolation`: it configures the project for the interpreter running it
(Python module and LibTorch plugin only), builds it, installs the CMake component `python`
into a staging folder and zips that into a wheel. The plugin is built against the LibTorch
of that interpreter's PyTorch when it has one (visible with --no-build-isolation), else
against a system LibTorch (Debian's libtorch-dev) when CMake finds one, else not at all.

CMAKE_PREFIX_PATH is merged, never replaced: the torch prefix of the interpreter comes first,
then every -DCMAKE_PREFIX_PATH of CMAKE_ARGS and of cmake-args in order, as one ';'-joined
list (CMAKE_ARGS=-DCMAKE_PREFIX_PATH=<deps prefix> adds the dependencies' prefix and keeps
the PyTorch one). -DTorch_DIR=... still names another LibTorch explicitly.

Where the interpreter's PyTorch is a CUDA or ROCm build, the wheel must hold a plugin built
with that GPU runtime: when configure did not make one (no plugin, or one against a CPU-only
LibTorch), the build fails with the reason, unless a CPU-only wheel is asked for explicitly
(allow-cpu-only=true, or ITERAGPU_ALLOW_CPU_ONLY_WHEEL=1). What was chosen is printed (pip
shows it with -v) and compiled into the package: iteragpu.build_description(), the
iteragpu_build of iteragpu.environment() and `iteragpu environment` name the LibTorch the
plugin was built against ("LibTorch backend plugin built against LibTorch 2.5.1 (CUDA
12.4)") or say it was not built.

config_settings (pip --config-settings KEY=VALUE):
  build-dir       a CMake build folder to keep between builds (default: a temporary one)
  cmake-args      extra CMake arguments, separated by spaces (the CMAKE_ARGS environment
                  variable is read too, first)
  allow-cpu-only  true: build the wheel even where the interpreter's PyTorch has CUDA or
                  ROCm and the plugin could not be built with it (environment variable:
                  ITERAGPU_ALLOW_CPU_ONLY_WHEEL=1)
"""

import ast
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


def _torch_description():
    """Version, CUDA and HIP of this interpreter's PyTorch, read from torch/version.py
    without importing torch (a plain file of assignments); None without PyTorch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
    found = {"version": None, "cuda": None, "hip": None}
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return found
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        for target in targets:
            name = getattr(target, "id", None)
            name = "version" if name == "__version__" else name
            if name in found and isinstance(value, ast.Constant) and isinstance(value.value, (str, type(None))):
                found[name] = value.value
    return found


def _setting_text(config_settings, key):
    """A --config-settings value; given more than once, pip passes a list: joined by spaces."""
    value = (config_settings or {}).get(key, "")
    return " ".join(value) if isinstance(value, (list, tuple)) else str(value)


def _true(text):
    return str(text).strip().lower() in ("1", "true", "yes", "on")


def _allow_cpu_only(config_settings, environ=None):
    environ = os.environ if environ is None else environ
    return _true(_setting_text(config_settings, "allow-cpu-only")) or _true(environ.get("ITERAGPU_ALLOW_CPU_ONLY_WHEEL", ""))


_PREFIX_PATH = re.compile(r"^-DCMAKE_PREFIX_PATH(?::[A-Za-z]+)?=(.*)$", re.S)


def _merge_prefix_paths(arguments, first=None):
    """The arguments with every CMAKE_PREFIX_PATH definition (-DCMAKE_PREFIX_PATH=a;b,
    -DCMAKE_PREFIX_PATH:PATH=a, -D CMAKE_PREFIX_PATH=a) taken out and put back as one, at the
    end: `first` (the torch prefix), then each given list in order, duplicates dropped."""
    rest, prefixes = [], [first] if first else []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if argument == "-D" and index + 1 < len(arguments) and _PREFIX_PATH.match("-D" + arguments[index + 1]):
            argument = "-D" + arguments[index + 1]
            index += 1
        match = _PREFIX_PATH.match(argument)
        if match:
            prefixes += [p for p in match.group(1).split(";") if p]
        else:
            rest.append(argument)
        index += 1
    merged = []
    for prefix in prefixes:
        if prefix not in merged:
            merged.append(prefix)
    return rest + (["-DCMAKE_PREFIX_PATH=" + ";".join(merged)] if merged else [])


def _cmake_arguments(config_settings, environ=None, torch_prefix=None, executable=None):
    environ = os.environ if environ is None else environ
    executable = executable or sys.executable
    args = [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DPython_EXECUTABLE=" + executable,
        "-DITERAGPU_BUILD_PYTHON=ON",
        "-DITERAGPU_BUILD_CLI=OFF",
        "-DITERAGPU_BUILD_TESTS=OFF",
        "-DITERAGPU_BUILD_BENCHMARKS=OFF",
        "-DITERAGPU_BUILD_LAB_KIT=OFF",
        "-DITERAGPU_PYTHON_INSTALL_DIR=.",  # the staging folder is the wheel's root
    ]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    if torch_prefix:
        print("iteragpu: LibTorch plugin built against the PyTorch of %s (%s)" % (executable, torch_prefix))
    else:
        print(
            "iteragpu: %s has no PyTorch here (with pip, --no-build-isolation shows the "
            "environment's); the plugin uses a system LibTorch if CMake finds one" % executable
        )
    extra = environ.get("CMAKE_ARGS", "") + " " + _setting_text(config_settings, "cmake-args")
    return _merge_prefix_paths(args + shlex.split(extra), torch_prefix)


def _configured_plugin(build_dir):
    """The LibTorch the configured plugin is built against ("LibTorch 2.5.1 (CUDA 12.4)"), ""
    when no plugin is built, from the CMake cache."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("ITERAGPU_TORCH_BACKEND_DESCRIPTION:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


def _plugin_refusal(torch, plugin, allow_cpu_only):
    """Why the wheel must not be built, or None. torch: _torch_description() of the
    interpreter; plugin: _configured_plugin(). A CUDA or ROCm PyTorch asks for a plugin built
    with that runtime; a CPU-only wheel there is a silent loss of the GPU, so only an explicit
    allow_cpu_only accepts it."""
    if not torch or not (torch.get("cuda") or torch.get("hip")) or allow_cpu_only:
        return None
    runtime = "CUDA %s" % torch["cuda"] if torch.get("cuda") else "ROCm %s" % torch["hip"]
    if plugin and ("(CUDA" in plugin or "(ROCm" in plugin):
        return None
    found = ("it was configured against %s instead" % plugin) if plugin else "CMake did not build it (Torch not found or ITERAGPU_WITH_TORCH=OFF)"
    return (
        "the interpreter's PyTorch %s has %s, but the wheel would hold no LibTorch plugin with a GPU "
        "runtime: %s; see the CMake output above (Torch_DIR, CMAKE_PREFIX_PATH), or build a CPU-only "
        "wheel with --config-settings allow-cpu-only=true or ITERAGPU_ALLOW_CPU_ONLY_WHEEL=1"
        % (torch.get("version") or "", runtime, found)
    )


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
        _run(["cmake", "-S", _ROOT, "-B", build_dir]
             + _cmake_arguments(config_settings, torch_prefix=_torch_cmake_prefix()))
        plugin = _configured_plugin(build_dir)
        print("iteragpu: LibTorch backend plugin: %s" % ("built against " + plugin if plugin else "not built"), flush=True)
        refusal = _plugin_refusal(_torch_description(), plugin, _allow_cpu_only(config_settings))
        if refusal:
            sys.exit("iteragpu: cannot build the wheel: " + refusal)
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
