"""iteragpu.predict(): the same prediction as `iteragpu predict`, its objects, its views, and
the prediction carried by every measurement."""

import json
from html import escape
import pickle

import pytest

import iteragpu

SEED_LARGE = dict(batch=2, context=128, width=1024, warmup=3, repeats=5)


def test_equals_the_cli_json(cli, schema_validator):
    prediction = iteragpu.predict(compute_capability="9.0", **SEED_LARGE)
    completed = cli("predict", "--compute-capability", "9.0", "--batch", "2", "--context", "128",
                    "--width", "1024", "--warmup", "3", "--repeats", "5", "--format", "json")
    assert completed.returncode == 0, completed.stderr
    assert prediction.to_dict() == json.loads(completed.stdout)
    schema_validator(prediction.to_dict(), "prediction")


def test_attributes_are_the_counters_pytorch_recorded_on_an_h200():
    prediction = iteragpu.predict(compute_capability="9.0", **SEED_LARGE)
    cold = prediction.phases[2]
    assert cold.phase == "cold_forward"
    assert cold.end.allocated_bytes == 70_275_072
    assert cold.end.reserved_bytes == 92_274_688
    assert prediction.target.cublas_workspace_bytes == 32 * 2**20
    assert prediction.cublaslt_used is True
    assert [row.phase for row in prediction.phases] == (
        ["model_load", "inputs", "cold_forward", "warmup"] + ["warm_forward"] * 5)


def test_a_float_compute_capability_is_read_as_written():
    assert iteragpu.predict(compute_capability=8.0).target.compute_capability_major == 8


def test_pickles_and_shows_html():
    prediction = iteragpu.predict(compute_capability="9.0")
    copy = pickle.loads(pickle.dumps(prediction))
    assert copy.to_dict() == prediction.to_dict()
    page = prediction._repr_html_()
    assert "Predicted memory" in page and "cold_forward" in page


@pytest.mark.parametrize("options, field", [
    ({}, "device"),
    ({"device": "cuda:0", "compute_capability": "9.0"}, "compute_capability"),
    ({"compute_capability": "nine"}, "compute_capability"),
    ({"compute_capability": "9.0", "width": 0}, "width"),
])
def test_bad_values_raise_usage_error(options, field):
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.predict(**options)
    assert raised.value.field == field


def test_wrong_type_is_a_type_error():
    with pytest.raises(TypeError):
        iteragpu.predict(compute_capability=["9.0"])


def test_device_reads_the_gpu_through_the_backend(fake_backend, run_python):
    # A fresh process: one backend plugin per process, and this one is the test double.
    completed = run_python("import iteragpu\n"
                           f"p = iteragpu.predict(device='cuda:0', backend_path={fake_backend!r})\n"
                           "print(p.target.gpu_name)")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "Fake GPU 0"


def test_every_measurement_carries_its_prediction(fake_backend):
    measurement = iteragpu.measure(backend_path=fake_backend, progress=False, batch=1, context=16,
                                   width=64, warmup=1, repeats=2)
    assert measurement.prediction is not None
    assert len(measurement.prediction.phases) == len(measurement.phases)
    assert measurement.predicted_row(0).phase == "model_load"
    assert measurement.predicted_row(99) is None
    rows = measurement.to_dict()["phases"]
    assert all(row["predicted"] is not None and row["difference"] is not None for row in rows)
    first = rows[0]
    assert first["difference"]["allocated_bytes"]["end"] == (
        first["allocated_bytes"]["end"] - first["predicted"]["allocated_bytes"]["end"])
    assert "counters exact" in measurement._repr_html_()


def test_a_checkpoint_is_predicted_as_the_cli_predicts_it(tmp_path, cli, schema_validator):
    from test_measure import write_tiny_llama

    model = tmp_path / "tiny-llama"
    write_tiny_llama(model)
    prediction = iteragpu.predict(compute_capability="9.0", model=model, new_tokens=2, batch=2, context=4)
    completed = cli("predict", "--compute-capability", "9.0", "--model", str(model), "--new-tokens", "2",
                    "--batch", "2", "--context", "4", "--format", "json")
    assert completed.returncode == 0, completed.stderr
    assert prediction.to_dict() == json.loads(completed.stdout)
    schema_validator(prediction.to_dict(), "prediction")
    rows = [(row.phase, row.sequence, row.repeat, row.step) for row in prediction.phases]
    assert rows[:4] == [("weights_load", "", 0, None), ("inputs", "", 0, None), ("prefill", "cold", 0, 0),
                        ("decode", "cold", 0, 1)]
    assert rows[-1] == ("decode", "warm", 2, 2)
    assert prediction.input_bytes == 2 * 4 * 8  # int64 token ids
    assert pickle.loads(pickle.dumps(prediction)).to_dict() == prediction.to_dict()
    html = prediction._repr_html_()
    assert "warm #2 decode 2" in html
    # The view names the checkpoint, not the synthetic MLP; on 9.0 nothing is unchecked.
    assert prediction.heading.startswith("LlamaForCausalLM (2 layers") and escape(prediction.heading) in html
    assert "Linear(" not in html and "≥" not in html
    # On 8.0 the attention caveat's counters are marked, in the view and on each row.
    ampere = iteragpu.predict(compute_capability="8.0", model=model, new_tokens=2, batch=2, context=4)
    assert ampere.phases[2].uncertain_counters == ["reserved_bytes.end", "peak_allocated_bytes", "peak_reserved_bytes"]
    assert ampere.phases[2].lower_bound and not ampere.phases[1].uncertain_counters
    assert "≥" in ampere._repr_html_() and "≥ marks a counter" in ampere._repr_html_()
    restored = pickle.loads(pickle.dumps(ampere))
    assert (restored.heading, restored.phases[2].uncertain_counters) == (ampere.heading, ampere.phases[2].uncertain_counters)


def test_packages_judges_a_checkpoint_as_the_cli_does(tmp_path, cli, schema_validator):
    from test_measure import write_tiny_llama

    model = tmp_path / "tiny-llama"
    write_tiny_llama(model)
    report = iteragpu.packages(model=model, batch=2, context=8, days=7)
    completed = cli("packages", "--model", str(model), "--batch", "2", "--context", "8", "--days", "7",
                    "--format", "json")
    assert completed.returncode == 0, completed.stderr
    assert report.to_dict() == json.loads(completed.stdout)
    schema_validator(report.to_dict(), "package-fit")
    h200 = next(fit for fit in report.packages if fit.gpu == "h200")
    assert h200.verdict == "fits"
    assert h200.required_bytes == h200.predicted_peak_reserved_bytes + h200.outside_allocator_bytes
    assert h200.headroom_bytes == h200.memory_bytes - h200.required_bytes
    assert h200.lot_price_cents > 0 and h200.cost_per_million_tokens_usd is None
    assert next(fit for fit in report.packages if fit.gpu == "mi300x").verdict == "not assessed"
    # Exact on compute capability 9.0; a lower bound where the attention backend is unchecked.
    a100 = next(fit for fit in report.packages if fit.gpu == "a100-80gb")
    assert (h200.required_unchecked, a100.required_unchecked) == ("", "at least")
    html = report._repr_html_()
    assert "splitting a model over several GPUs is not modelled" in html and "h200" in html
    assert f"≥{a100.required_bytes:,}" in html and f"≥{h200.required_bytes:,}" not in html
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.packages(model=model, measurement=tmp_path / "m.json")
    assert raised.value.field == "measurement"


def test_a_fine_tuning_run_is_predicted_and_judged_as_the_cli_does(tmp_path, cli, schema_validator):
    """predict(model=..., train=...) and packages(..., train=...): every row of the run, from the
    headers; the Python keywords give what the command line gives."""
    from test_measure import write_tiny_llama

    model = tmp_path / "tiny-llama"
    write_tiny_llama(model)
    prediction = iteragpu.predict(compute_capability="9.0", model=model, train="lora", steps=2, lora_rank=4,
                                  batch=2, context=8)
    completed = cli("predict", "--compute-capability", "9.0", "--model", str(model), "--train", "lora", "--steps", "2",
                    "--lora-rank", "4", "--batch", "2", "--context", "8", "--format", "json")
    assert completed.returncode == 0, completed.stderr
    assert prediction.to_dict() == json.loads(completed.stdout)
    schema_validator(prediction.to_dict(), "prediction")
    assert [(row.phase, row.step) for row in prediction.phases] == [
        ("weights_load", None), ("adapters", None), ("inputs", None), ("forward", 1), ("backward", 1),
        ("optimizer", 1), ("forward", 2), ("backward", 2), ("optimizer", 2)]
    # The segment order is said on every row from the first forward on; the rows before are exact.
    assert not prediction.phases[2].uncertain_counters
    assert "peak_reserved_bytes" in prediction.phases[3].uncertain_counters
    report = iteragpu.packages(model=model, train="full", batch=2, context=8)
    schema_validator(report.to_dict(), "package-fit")  # the configuration's fine-tuning options
    h200 = next(fit for fit in report.packages if fit.gpu == "h200")
    full = iteragpu.predict(compute_capability="9.0", model=model, train="full", batch=2, context=8)
    assert h200.predicted_peak_reserved_bytes == max(row.end.peak_reserved_bytes for row in full.phases)
    assert report.heading.endswith("full fine-tuning, token ids [2, 8], 3 steps")
    completed = cli("packages", "--model", str(model), "--train", "full", "--batch", "2", "--context", "8")
    assert completed.returncode == 0, completed.stderr
    assert "batch 2, context 8, full fine-tuning, 3 steps, " in completed.stdout
    # Gradient checkpointing is predicted as such: the forward keeps each layer's input, not its
    # activations or a KV cache, so less stays allocated after it than without.
    checkpointed = iteragpu.predict(compute_capability="9.0", model=model, train="lora", steps=2, lora_rank=4,
                                    batch=2, context=8, gradient_checkpointing=True)
    completed = cli("predict", "--compute-capability", "9.0", "--model", str(model), "--train", "lora", "--steps", "2",
                    "--lora-rank", "4", "--gradient-checkpointing", "--batch", "2", "--context", "8", "--format", "json")
    assert completed.returncode == 0, completed.stderr
    assert checkpointed.to_dict() == json.loads(completed.stdout)
    assert checkpointed.phases[3].end.allocated_bytes < prediction.phases[3].end.allocated_bytes
