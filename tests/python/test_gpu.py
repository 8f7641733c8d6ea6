"""Real measurements on a GPU from Python (ctest label gpu). Every test skips, saying why,
where no GPU is visible to the LibTorch backend."""

import json
import os

import pytest

import iteragpu

pytestmark = pytest.mark.gpu

SMALL = dict(batch=1, context=16, width=64, dtype="float32", warmup=1, repeats=2)
LARGER = dict(batch=2, context=128, width=1024, dtype="float32", warmup=3, repeats=5)


@pytest.fixture(scope="module", autouse=True)
def gpu_report(run_python_module):
    # Asked in a fresh process: this one stays free of LibTorch for the in-process test.
    completed = run_python_module("import iteragpu; print(iteragpu.environment().to_json())")
    if completed.returncode != 0:
        pytest.fail(completed.stderr)
    report = json.loads(completed.stdout)
    if not report["backend"]["available"]:
        pytest.skip(f"no LibTorch backend: {report['backend']['error']}")
    if not report["libtorch"]["gpu_runtime_available"] or not report["selected_device"]["present"]:
        pytest.skip(f"no GPU visible to LibTorch {report['libtorch']['version']}")
    return report


@pytest.fixture(scope="module")
def run_python_module():
    import subprocess
    import sys

    def run(code):
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)

    return run


def check_protocol(measurement, rows):
    assert [row.phase for row in measurement.phases][:3] == ["model_load", "inputs", "cold_forward"]
    assert len(measurement.phases) == rows
    for row in measurement.phases:
        for counters in (row.baseline, row.end):
            assert counters.allocated_bytes <= counters.reserved_bytes, row
        assert row.end.peak_allocated_bytes >= max(row.baseline.allocated_bytes, row.end.allocated_bytes)
        assert row.end.peak_reserved_bytes >= row.end.reserved_bytes
        assert row.host_seconds > 0
    model_load = measurement.phases[0]
    # The allocator rounds each tensor up to 512 bytes: at least the parameter bytes.
    assert model_load.end.allocated_bytes >= measurement.model.parameter_bytes


def test_small_measurement_in_a_child_process(tmp_path, gpu_report):
    output = tmp_path / "mesures-petit-essai.json"
    rows_seen = []
    measurement = iteragpu.measure(device="cuda:0", output=output,
                                   progress=lambda row, done, total: rows_seen.append(done), **SMALL)
    check_protocol(measurement, 6)
    assert rows_seen == [1, 2, 3, 4, 5, 6]
    assert measurement.to_dict() == json.loads(output.read_text())
    # A fresh process: nothing allocated before the model.
    assert measurement.phases[0].baseline.allocated_bytes == 0
    assert measurement.phases[0].baseline.reserved_bytes == 0
    assert measurement.environment.stack.gpus[0].name == gpu_report["gpus"][0]["name"]


def test_larger_suggested_measurement_is_exact_about_weights(tmp_path):
    measurement = iteragpu.measure(device="cuda:0", output=tmp_path / "mesures.json", progress=False, **LARGER)
    check_protocol(measurement, 3 + 1 + 5)
    # 1024 -> 4096 -> 1024 float32: every tensor is a multiple of 512 bytes, so allocated
    # after model_load is exactly the parameter bytes (33,574,912).
    assert measurement.model.parameter_bytes == 33_574_912
    assert measurement.phases[0].end.allocated_bytes == 33_574_912


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_dtypes(dtype):
    measurement = iteragpu.measure(device="cuda:0", progress=False, **dict(SMALL, dtype=dtype))
    check_protocol(measurement, 6)
    assert measurement.model.dtype_bytes == 2


def test_in_process_measurement_and_plot(tmp_path, run_python_module):
    # In a fresh interpreter so the parent test process never holds LibTorch's CUDA state.
    output = tmp_path / "m.json"
    completed = run_python_module(
        "import matplotlib; matplotlib.use('Agg')\n"
        "import iteragpu, json\n"
        f"m = iteragpu.measure(device='cuda:0', output={str(output)!r}, in_process=True, progress=False, **{SMALL!r})\n"
        f"m.plot().savefig({str(tmp_path / 'phases.png')!r})\n"
        "print(json.dumps(m.to_dict()))\n"
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == json.loads(output.read_text())
    assert (tmp_path / "phases.png").stat().st_size > 10_000


def test_missing_device_index(tmp_path, gpu_report):
    absent = f"cuda:{len(gpu_report['gpus'])}"
    with pytest.raises(iteragpu.DeviceUnavailable, match=absent):
        iteragpu.measure(device=absent, output=tmp_path / "m.json", progress=False)
    assert not os.listdir(tmp_path)
