#!/bin/sh
# `pip install .` as a Python user does it, offline: into a new virtual environment that
# sees Debian's packages, with the project's own build backend (no index, no isolation).
# Then, from another folder, `import iteragpu` must come from that environment and find its
# data and plugin there.   pip_install_test.sh PYTHON SOURCE_DIR WORK_DIR WITH_PLUGIN(0|1)
set -eu
python=$1 source=$2 work=$3 with_plugin=$4
rm -rf "$work/venv" "$work/run"
mkdir -p "$work/run"
"$python" -m venv --system-site-packages --without-pip "$work/venv"  # pip: the system's
# When PYTHON is itself a virtual environment (the GPU machine's, holding torch and
# pybind11), the new one sees its packages too, as it sees the system's.
"$python" -c 'import sys, sysconfig; sys.prefix != sys.base_prefix and print(sysconfig.get_paths()["purelib"])' \
  >"$work/parent.pth"
"$work/venv/bin/python" -c 'import shutil, sys, sysconfig; shutil.copy(sys.argv[1], sysconfig.get_paths()["purelib"])' \
  "$work/parent.pth"
# The CMake build folder is kept in WORK_DIR, so a second run rebuilds only what changed;
# unoptimised, as this checks packaging, not speed (half the compile time).
"$work/venv/bin/python" -m pip install --no-build-isolation --no-deps --no-index \
  --config-settings "build-dir=$work/cmake-build" \
  --config-settings "cmake-args=-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0" "$source"
cd "$work/run"
env -u PYTHONPATH -u ITERAGPU_DATA_DIR -u ITERAGPU_BACKEND "$work/venv/bin/python" - "$work/venv" "$with_plugin" <<'PY'
import os, sys
import iteragpu
venv = os.path.realpath(sys.argv[1])
package = os.path.dirname(os.path.realpath(iteragpu.__file__))
assert package.startswith(venv + os.sep), package
for name in ("data/tarifs-forfaits.csv", "data/schema/quote.schema.json"):
    assert os.path.isfile(os.path.join(package, name)), name
e = iteragpu.estimate(parameters="7B", bits=16, reserve_gib=4)
assert str(e.weights.gib) == "13.03851604461669921875", e.weights.gib
q = iteragpu.quote("b200", days=7, lots=2, accepted_results=3)
assert q.total_cents == 318562, q.total_cents
r = iteragpu.environment()
# What the wheel's build chose is visible once installed: the LibTorch the plugin was built against.
assert ("plugin built against LibTorch " in r.iteragpu_build) == (sys.argv[2] == "1"), r.iteragpu_build
if sys.argv[2] == "1":  # built against a LibTorch: the plugin beside the module is loaded
    assert r.backend_available, r.backend_error
    assert os.path.realpath(r.backend_path) == os.path.join(package, "libiteragpu_torch_backend.so"), r.backend_path
# A measurement runs in the worker installed beside the module: on a GPU a file, without
# one the worker's own answer.
try:
    m = iteragpu.measure(device="cuda:0", batch=1, context=16, width=64, output="pip-measure.json")
    assert os.path.getsize("pip-measure.json") > 0
    print("pip install: measured on", m.environment.selected_device)
except iteragpu.DeviceUnavailable as error:
    assert "no GPU available" in str(error), error
    assert not os.path.exists("pip-measure.json")
print("pip install: import iteragpu from", package, "-", sorted(os.listdir(package)))
PY
