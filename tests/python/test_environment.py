"""iteragpu.environment on this machine, in a fresh process each (the backend plugin a
process opens stays for its life)."""

import json

import pytest

import iteragpu


def run_report(run_python, code, extra=None):
    completed = run_python("import iteragpu, json, pickle, sys\n" + code, extra=extra)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_report_on_this_machine(run_python, torch_backend_built):
    report = json.loads(run_report(run_python, "print(iteragpu.environment().to_json())"))
    assert report["selected_device"]["device"] == "cuda:0"
    assert report["system"]["os_name"] == "Linux"
    if not torch_backend_built:
        assert report["backend"]["available"] is False
        assert report["backend"]["error"]
        return
    # The LibTorch plugin was found beside the module, as installed.
    assert report["backend"]["available"] is True, report["backend"]
    assert report["backend"]["plugin_path"].endswith("iteragpu/libiteragpu_torch_backend.so")
    assert report["libtorch"]["version"]


def test_attributes_on_a_machine_without_gpu(torch_backend_built):
    report = iteragpu.environment(device="cuda:0")
    assert isinstance(report, iteragpu.EnvironmentReport)
    assert report.selected_device == "cuda:0" and report.selected_index == 0
    assert report.os_name == "Linux"
    if report.stack is not None and report.stack.gpu_runtime_available:
        pytest.skip("this machine has a GPU; the no-GPU expectations do not apply")
    assert report.selected_present is False
    if torch_backend_built:
        assert report.backend_available
        assert report.stack.torch_version.startswith("1.13"), report.stack.torch_version
        assert report.stack.gpus == []
        assert report.stack.cuda_build_version is None
        assert report.stack.selected_free_bytes is None


def test_to_dict_equals_the_cli_json_with_the_same_plugin(cli, fake_backend, run_python):
    completed = cli("environment", "--device", "cuda:0", "--backend", fake_backend, "--format", "json")
    assert completed.returncode == 0, completed.stderr
    ours = run_report(
        run_python,
        f"print(json.dumps(iteragpu.environment(device='cuda:0', backend_path={fake_backend!r}).to_dict()))",
    )
    assert json.loads(ours) == json.loads(completed.stdout)


def test_pickles_whole(fake_backend, run_python):
    # The fake backend reports GPUs, so every field (stack, gpus) is exercised.
    out = run_report(
        run_python,
        f"r = iteragpu.environment(device='cuda:1', backend_path={fake_backend!r})\n"
        "assert r.stack.gpus, r.to_text()\n"
        "copy = pickle.loads(pickle.dumps(r))\n"
        "print(copy.to_json() == r.to_json(), copy.stack.gpus[0].name == r.stack.gpus[0].name)\n",
        extra={"ITERAGPU_FAKE_BACKEND": "gpus=2"},
    )
    assert out.split() == ["True", "True"]


def test_missing_plugin_is_a_valid_report(run_python, tmp_path):
    missing = tmp_path / "no-such-plugin.so"
    report = json.loads(run_report(run_python, f"print(iteragpu.environment(backend_path={str(missing)!r}).to_json())"))
    assert report["backend"]["available"] is False
    assert "no-such-plugin.so" in report["backend"]["error"]


def test_output_file_is_created_once(fake_backend, run_python, tmp_path):
    output = tmp_path / "environment.json"
    code = (
        f"r = iteragpu.environment(output={str(output)!r}, backend_path={fake_backend!r})\n"
        f"try:\n"
        f"    iteragpu.environment(output={str(output)!r}, backend_path={fake_backend!r})\n"
        f"except iteragpu.OutputExists as error:\n"
        f"    print('refused', isinstance(error, FileExistsError))\n"
        f"print(json.dumps(r.to_dict()))\n"
    )
    lines = run_report(run_python, code).splitlines()
    assert lines[0] == "refused True"
    assert json.loads(output.read_text()) == json.loads(lines[1])


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:-1", "gpu0"])
def test_malformed_device_raises_value_error(device):
    with pytest.raises(ValueError) as raised:
        iteragpu.environment(device=device)
    assert isinstance(raised.value, iteragpu.UsageError)
    assert str(raised.value).startswith("device: ")


def test_environment_html_shows_the_key_figures(fake_backend, run_python):
    page = run_report(
        run_python,
        f"print(iteragpu.environment(backend_path={fake_backend!r})._repr_html_())",
        extra={"ITERAGPU_FAKE_BACKEND": "gpus=1"},
    )
    assert "Fake GPU 0" in page
    assert "not the driver" in page
    assert iteragpu.__version__ in page


def test_environment_html_without_gpu():
    report = iteragpu.environment()
    page = report._repr_html_()
    if report.stack is not None:
        assert report.stack.torch_version in page
    else:
        assert "not available" in page
    assert "GPU runtime available" in page or "not available" in page
