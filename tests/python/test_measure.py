"""iteragpu.measure in a child process (the default) and in-process.

Without a GPU the real plugin must refuse with DeviceUnavailable (BackendUnavailable in a
build without LibTorch) and leave no file. The whole success path, out of memory and
interruptions are driven through the scripted test double of the plugin. In-process runs
that open the test double happen in a fresh interpreter: one plugin per process.
"""

import json
import pathlib
import pickle
import sys

import pytest

import iteragpu

SMALL = dict(batch=1, context=16, width=64, dtype="float32", warmup=1, repeats=2)
PHASES = ["model_load", "inputs", "cold_forward", "warmup", "warm_forward", "warm_forward"]


def expected_no_gpu_error(torch_backend_built):
    return iteragpu.DeviceUnavailable if torch_backend_built else iteragpu.BackendUnavailable


# --- the real plugin on this machine (no GPU) ---------------------------------------------


def test_child_process_without_gpu_raises_and_leaves_no_file(tmp_path, torch_backend_built):
    if gpu_visible():
        pytest.skip("this machine has a GPU")
    output = tmp_path / "mesures-petit-essai.json"
    with pytest.raises(expected_no_gpu_error(torch_backend_built)) as raised:
        iteragpu.measure(device="cuda:0", output=output, **SMALL)
    assert "nothing was measured" in str(raised.value) or "backend" in str(raised.value)
    assert list(tmp_path.iterdir()) == []


def test_in_process_without_gpu_raises_and_leaves_no_file(tmp_path, torch_backend_built):
    if gpu_visible():
        pytest.skip("this machine has a GPU")
    output = tmp_path / "mesures-petit-essai.json"
    with pytest.raises(expected_no_gpu_error(torch_backend_built)):
        iteragpu.measure(device="cuda:0", output=str(output), in_process=True, **SMALL)
    assert list(tmp_path.iterdir()) == []


def gpu_visible():
    report = iteragpu.environment()
    return report.stack is not None and report.stack.gpu_runtime_available


def test_missing_plugin_raises_backend_unavailable(tmp_path):
    with pytest.raises(iteragpu.BackendUnavailable, match="no-such-plugin"):
        iteragpu.measure(output=tmp_path / "m.json", backend_path=tmp_path / "no-such-plugin.so")
    assert list(tmp_path.iterdir()) == []


# --- the success path, through the test double ---------------------------------------------


def test_child_process_measurement_with_progress(tmp_path, fake_backend):
    output = tmp_path / "m.json"
    rows_seen = []
    measurement = iteragpu.measure(
        output=output, backend_path=fake_backend, progress=lambda row, done, total: rows_seen.append((row.phase, done, total)), **SMALL
    )
    assert isinstance(measurement, iteragpu.Measurement)
    assert [row.phase for row in measurement.phases] == PHASES
    assert [row.repeat for row in measurement.phases] == [0, 0, 0, 0, 1, 2]
    assert rows_seen == [(phase, i + 1, 6) for i, phase in enumerate(PHASES)]
    # The file is the core's, and to_dict() is exactly it.
    assert measurement.to_dict() == json.loads(output.read_text())
    # Attributes: separate counters, allocated never above reserved.
    cold = measurement.phases[2]
    assert cold.forwards == 1
    assert cold.end.allocated_bytes > cold.baseline.allocated_bytes
    assert cold.end.allocated_bytes <= cold.end.reserved_bytes
    assert cold.end.peak_allocated_bytes >= cold.end.allocated_bytes
    assert measurement.model.parameter_count == 64 * 256 * 2 + 256 + 64
    assert measurement.configuration.output == str(output)
    assert measurement.environment.stack.gpus[0].name == "Fake GPU 0"
    copy = pickle.loads(pickle.dumps(measurement))
    assert copy.to_json() == measurement.to_json()


def test_json_matches_the_schema(fake_backend, schema_validator):
    measurement = iteragpu.measure(backend_path=fake_backend, progress=False, **SMALL)
    schema_validator(measurement.to_dict(), "measurement")


def test_without_output_nothing_is_written(tmp_path, fake_backend):
    measurement = iteragpu.measure(backend_path=fake_backend, progress=False, **SMALL)
    assert len(measurement.phases) == 6
    assert measurement.configuration.output == ""


def test_in_process_measurement_with_progress(tmp_path, fake_backend, run_python):
    output = tmp_path / "m.json"
    completed = run_python(
        "import iteragpu, json\n"
        "rows = []\n"
        f"m = iteragpu.measure(output={str(output)!r}, backend_path={fake_backend!r}, in_process=True,\n"
        f"                     progress=lambda row, done, total: rows.append([row.phase, done, total]), **{SMALL!r})\n"
        "print(json.dumps({'rows': rows, 'result': m.to_dict()}))\n"
    )
    assert completed.returncode == 0, completed.stderr
    printed = json.loads(completed.stdout)
    assert printed["rows"] == [[phase, i + 1, 6] for i, phase in enumerate(PHASES)]
    assert printed["result"] == json.loads(output.read_text())


# --- failures: the same exception type in both modes, and never a file ---------------------


def in_child_and_in_process(run_python, tmp_path, fake_backend, options, script=""):
    """Runs a failing measurement in both modes in a fresh interpreter (one plugin per
    process); returns [(mode, exception type name, message), ...] and checks no file."""
    output = tmp_path / "m.json"
    completed = run_python(
        "import iteragpu, json\n"
        "results = []\n"
        "for in_process in (False, True):\n"
        "    try:\n"
        f"        iteragpu.measure(output={str(output)!r}, backend_path={fake_backend!r},\n"
        f"                         in_process=in_process, progress=False, **{options!r})\n"
        "        results.append([in_process, 'no error', ''])\n"
        "    except BaseException as error:\n"
        "        results.append([in_process, type(error).__name__, str(error),\n"
        "                        [base.__name__ for base in type(error).__mro__]])\n"
        "print(json.dumps(results))\n",
        extra={"ITERAGPU_FAKE_BACKEND": script},
    )
    assert completed.returncode == 0, completed.stderr
    assert not output.exists()
    return json.loads(completed.stdout.splitlines()[-1])


def test_out_of_memory_names_the_phase(run_python, tmp_path, fake_backend):
    results = in_child_and_in_process(run_python, tmp_path, fake_backend, SMALL, "fail=forward:1:oom")
    for in_process, name, message, bases in results:
        assert name == "OutOfMemory", (in_process, name, message)
        assert "MeasurementFailed" in bases and "RuntimeError" in bases
        assert "cold_forward" in message


def test_interrupt_stops_between_phases(run_python, tmp_path, fake_backend):
    # The double raises SIGINT during the first forward, as a user's Ctrl-C would.
    results = in_child_and_in_process(run_python, tmp_path, fake_backend, SMALL, "interrupt=forward:1")
    for in_process, name, message, bases in results:
        assert name == "Interrupted", (in_process, name, message)
        assert "KeyboardInterrupt" in bases
        assert "nothing was written" in message


def test_bad_values_raise_value_error_in_both_modes(run_python, tmp_path, fake_backend):
    for options, keyword in [(dict(SMALL, batch=0), "batch"), (dict(SMALL, dtype="float64"), "dtype"),
                             (dict(SMALL, device="cuda"), "device")]:
        results = in_child_and_in_process(run_python, tmp_path, fake_backend, options)
        for in_process, name, message, bases in results:
            assert name == "UsageError" and "ValueError" in bases, (in_process, name, message)
            assert message.startswith(keyword + ": "), message


def test_wrong_type_is_a_type_error():
    # Numbers may be int or str (parsed by the core as the command line's are); not a list
    # or a bool.
    with pytest.raises(TypeError):
        iteragpu.measure(batch=[1])
    with pytest.raises(TypeError):
        iteragpu.measure(batch=True)
    with pytest.raises(TypeError, match="progress"):
        iteragpu.measure(progress="yes")


def test_existing_output_is_refused_and_kept(tmp_path, fake_backend):
    output = tmp_path / "m.json"
    output.write_text("earlier result")
    for in_process in (False, True):  # refused before any plugin is opened
        with pytest.raises(iteragpu.OutputExists) as raised:
            iteragpu.measure(output=output, backend_path=fake_backend, in_process=in_process, **SMALL)
        assert isinstance(raised.value, FileExistsError)
    assert output.read_text() == "earlier result"


def test_progress_callback_error_stops_the_measurement(run_python, tmp_path, fake_backend):
    output = tmp_path / "m.json"
    completed = run_python(
        "import iteragpu\n"
        "def progress(row, done, total):\n"
        "    if done == total:  # even on the last row, before the file is published\n"
        "        raise LookupError('stop here')\n"
        "for in_process in (False, True):\n"
        "    try:\n"
        f"        iteragpu.measure(output={str(output)!r}, backend_path={fake_backend!r},\n"
        "                         in_process=in_process, progress=progress)\n"
        "    except LookupError as error:\n"
        "        print(in_process, error)\n"
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == ["False stop here", "True stop here"]
    assert not output.exists()


def test_worker_that_dies_without_result_raises_error(monkeypatch, tmp_path):
    monkeypatch.setenv("ITERAGPU_MEASURE_WORKER", "/bin/false")
    with pytest.raises(iteragpu.Error, match="exited with code 1 without a result"):
        iteragpu.measure(output=tmp_path / "m.json")
    assert list(tmp_path.iterdir()) == []


def test_worker_is_found_beside_the_package(fake_backend, tmp_path, monkeypatch):
    # Whatever PYTHONPATH says, the runner starts the worker installed with this package.
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv("ITERAGPU_MEASURE_WORKER", raising=False)
    measurement = iteragpu.measure(backend_path=fake_backend, progress=False)
    assert len(measurement.phases) == 6


def test_measurement_html_and_repr(fake_backend):
    measurement = iteragpu.measure(backend_path=fake_backend, progress=False, **SMALL)
    page = measurement._repr_html_()
    for phase in ("model_load", "cold_forward", "warm_forward #2"):
        assert phase in page
    cold = measurement.phases[2]
    assert f"{cold.end.peak_allocated_bytes:,}" in page
    assert "never add them" in page
    assert repr(measurement) == "Measurement(device='cuda:0', phases=6)"
    # The heading is the workload's own, as a prediction's is: one text, from the core.
    assert measurement.heading == iteragpu.predict(compute_capability="9.0", **SMALL).heading
    assert measurement.heading.startswith("Linear(") and measurement.heading in page


def test_plot_has_memory_and_time_panels(fake_backend, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    measurement = iteragpu.measure(backend_path=fake_backend, progress=False, **SMALL)
    import matplotlib.pyplot as plt

    figure = measurement.plot()
    # Returned, not also left open in pyplot (Jupyter's inline backend would draw it twice).
    assert figure.number not in plt.get_fignums()
    axes = figure.get_axes()
    assert [a.get_ylabel() for a in axes] == ["allocated (MiB)", "reserved (MiB)", "time (ms, log scale)",
                                              "time (µs)"]
    assert axes[2].get_yscale() == "log"  # warm forwards (µs) visible beside model_load (ms)
    figure.canvas.draw()
    repeat_ticks = [tick for tick in axes[3].get_xticks() if axes[3].get_xlim()[0] <= tick <= axes[3].get_xlim()[1]]
    assert repeat_ticks and all(float(tick).is_integer() for tick in repeat_ticks), repeat_ticks
    labels = [label.get_text() for label in axes[2].get_xticklabels()]
    assert labels == ["model_load", "inputs", "cold_forward", "warmup", "warm_forward #1", "warm_forward #2"]
    # Three bars (baseline, end, peak) per phase row on each memory panel.
    assert len(axes[0].patches) == 3 * 6
    # The warm repeats one by one (host and GPU events), the warnings in the panel's title.
    assert [len(line.get_xdata()) for line in axes[3].get_lines() if line.get_marker() == "o"] == [2, 2]
    assert "few_repeats" in axes[3].get_title()
    figure.savefig(tmp_path / "phases.png")
    assert (tmp_path / "phases.png").stat().st_size > 0


def test_timing_spread_and_warnings_in_every_view(fake_backend):
    measurement = iteragpu.measure(backend_path=fake_backend, progress=False, **SMALL)  # child: pickled
    timing = measurement.timing
    assert timing.warm_repeats == 2
    warm = [row for row in measurement.phases if row.phase == "warm_forward"]
    assert timing.host_seconds.median == pytest.approx(sum(row.host_seconds for row in warm) / 2)
    assert timing.host_seconds.min == min(row.host_seconds for row in warm)
    assert timing.gpu_event_seconds.cv == 0  # the test double's GPU time is constant
    assert [w.code for w in timing.warnings if w.clock == "host"][0] == "few_repeats"
    document = measurement.to_dict()["timing"]
    assert document["warm_repeats"] == 2 and document["warnings"][0]["code"] == "few_repeats"
    assert "Warm repeats (2)" in measurement.to_text()
    page = measurement._repr_html_()
    assert "Warm repeats: 2" in page and "few_repeats" in page and "CV" in page


# --- the runner: several GPUs, text keywords, measurements read back ---------------------------


def test_every_gpu_at_once_gives_a_summary(tmp_path, fake_backend, monkeypatch):
    monkeypatch.setenv("ITERAGPU_FAKE_BACKEND", "gpus=2;fail_device=1:forward:1:oom")
    rows = []
    summary = iteragpu.measure(device="all", output=tmp_path / "m.json", backend_path=fake_backend,
                               progress=lambda row, done, total: rows.append((done, total)), **SMALL)
    assert isinstance(summary, iteragpu.MeasurementSummary)
    assert [outcome.device for outcome in summary.devices] == ["cuda:0", "cuda:1"]
    assert summary.devices[0].ok and not summary.devices[1].ok
    assert summary.devices[1].exit_code == 3 and "injected oom" in summary.devices[1].error
    assert summary.devices[0].measurement.to_json() == (tmp_path / "m-cuda0.json").read_text()
    assert not summary.complete and summary.exit_code == 3
    assert json.loads((tmp_path / "m.json").read_text()) == summary.to_dict()
    assert rows and all(total >= done for done, total in rows)
    assert "Measurement summary" in summary._repr_html_()


def test_numbers_as_text_are_parsed_by_the_core_like_the_command_line(fake_backend):
    measurement = iteragpu.measure(batch="2", width="+32", hidden=None, backend_path=fake_backend, progress=False)
    assert (measurement.configuration.batch, measurement.configuration.width) == (2, 32)
    assert measurement.configuration.hidden == 128  # None: 4 x width
    for keyword, value in [("batch", "1e3"), ("width", "1.5"), ("hidden", 0), ("repeats", "0x2")]:
        with pytest.raises(iteragpu.UsageError) as raised:
            iteragpu.measure(backend_path=fake_backend, progress=False, **{keyword: value})
        assert raised.value.field == keyword


def test_a_measurement_file_reads_back_whole(tmp_path, fake_backend):
    output = tmp_path / "m.json"
    measurement = iteragpu.measure(output=output, backend_path=fake_backend, progress=False, **SMALL)
    again = iteragpu.Measurement.read(output)
    assert again.to_json() == output.read_text() == measurement.to_json()
    assert iteragpu.Measurement.from_json(output.read_text()).phases[4].repeat == 1
    (tmp_path / "bad.json").write_text('{"schema": "iteragpu.measurement"}')
    with pytest.raises(iteragpu.DataFileError, match="bad.json"):
        iteragpu.Measurement.read(tmp_path / "bad.json")


def test_sweep_finds_the_largest_batch_under_the_budget(tmp_path, fake_backend, monkeypatch):
    monkeypatch.setenv("ITERAGPU_FAKE_BACKEND", "memory=268435456")
    points = []
    result = iteragpu.sweep("batch", width=1024, budget="50%", output=tmp_path / "s.json",
                            backend_path=fake_backend, progress=lambda point, n: points.append((point.value, n)))
    assert result.budget_bytes == 268435456 // 2
    assert result.smallest_not_fitting == result.largest_fitting + 1
    fits = {point.value: point.fits for point in result.points}
    assert fits[result.largest_fitting] and not fits[result.smallest_not_fitting]
    assert [n for _, n in points] == list(range(1, result.measurements + 1))
    assert json.loads((tmp_path / "s.json").read_text()) == result.to_dict()
    assert "Memory sweep" in result._repr_html_()
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.sweep("depth", backend_path=fake_backend, progress=False)
    assert raised.value.field == "vary"


# --- a real checkpoint (measure(model=...)) ---------------------------------------------------

H200_CHECKPOINT_MEASUREMENT = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "results"
                               / "llama-8b-bfloat16-h200.json")


def write_tiny_llama(folder, max_position_embeddings=None):
    """config.json and model.safetensors of a 2-layer Llama (zeros), as tests/support writes them."""
    import struct
    folder.mkdir()
    hidden, heads, kv_heads, intermediate, vocab, layers = 64, 4, 2, 128, 256, 2
    head_dim = hidden // heads
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
              "intermediate_size": intermediate, "num_hidden_layers": layers, "num_attention_heads": heads,
              "num_key_value_heads": kv_heads, "vocab_size": vocab, "torch_dtype": "bfloat16",
              "tie_word_embeddings": False}
    if max_position_embeddings is not None:
        config["max_position_embeddings"] = max_position_embeddings
    (folder / "config.json").write_text(json.dumps(config))
    shapes = {"model.embed_tokens.weight": [vocab, hidden], "model.norm.weight": [hidden],
              "lm_head.weight": [vocab, hidden]}
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes.update({p + "self_attn.q_proj.weight": [heads * head_dim, hidden],
                       p + "self_attn.k_proj.weight": [kv_heads * head_dim, hidden],
                       p + "self_attn.v_proj.weight": [kv_heads * head_dim, hidden],
                       p + "self_attn.o_proj.weight": [hidden, heads * head_dim],
                       p + "mlp.gate_proj.weight": [intermediate, hidden],
                       p + "mlp.up_proj.weight": [intermediate, hidden],
                       p + "mlp.down_proj.weight": [hidden, intermediate],
                       p + "input_layernorm.weight": [hidden], p + "post_attention_layernorm.weight": [hidden]})
    header, offset = {}, 0
    for name, shape in shapes.items():
        size = 2
        for dimension in shape:
            size *= dimension
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + bytes(offset))


def test_checkpoint_measured_through_the_test_double(tmp_path, fake_backend):
    model = tmp_path / "tiny-llama"
    write_tiny_llama(model)
    output = tmp_path / "m.json"
    measurement = iteragpu.measure(model=model, new_tokens=2, output=output, backend_path=fake_backend,
                                   progress=False)
    rows = [(row.phase, row.sequence, row.repeat, row.step) for row in measurement.phases]
    assert rows[:3] == [("weights_load", "", 0, None), ("inputs", "", 0, None), ("prefill", "cold", 0, 0)]
    assert rows[-1] == ("decode", "warm", 2, 2)
    assert len(rows) == 2 + 4 * 3
    assert measurement.configuration.dtype == "bfloat16"  # the checkpoint's
    assert measurement.checkpoint.architecture.layers == 2
    assert measurement.decoder_run.first_sequence_tokens == [1, 2, 3]
    # Predicted before the GPU was touched: one predicted row per measured row.
    assert ([(r.phase, r.sequence, r.step) for r in measurement.prediction.phases]
            == [(r.phase, r.sequence, r.step) for r in measurement.phases])
    assert measurement.to_dict() == json.loads(output.read_text())
    # The workload's heading, as predict gives it; a file read back gives it from its record.
    assert measurement.heading == iteragpu.predict(model=model, new_tokens=2, compute_capability="9.0").heading
    assert iteragpu.Measurement.read(output).heading == measurement.heading
    html = measurement._repr_html_()
    assert "LlamaForCausalLM (2 layers" in html and "warm #2 decode 2" in html


def test_a_training_step_measured_through_the_test_double(tmp_path, fake_backend):
    """measure(model=..., train="lora"): the training workload's rows and record, from Python's keywords."""
    model = tmp_path / "tiny-llama"
    write_tiny_llama(model)
    output = tmp_path / "t.json"
    measurement = iteragpu.measure(model=model, train="lora", steps=2, lora_rank=4, lora_targets="q_proj,v_proj",
                                   batch=2, context=8, output=output, backend_path=fake_backend, progress=False)
    rows = [(row.phase, row.step) for row in measurement.phases]
    assert rows == [("weights_load", None), ("adapters", None), ("inputs", None), ("forward", 1), ("backward", 1),
                    ("optimizer", 1), ("forward", 2), ("backward", 2), ("optimizer", 2)]
    # Predicted before the backend ran: one predicted row per measured row.
    assert ([(r.phase, r.step) for r in measurement.prediction.phases]
            == [(r.phase, r.step) for r in measurement.phases])
    document = json.loads(output.read_text())
    assert measurement.to_dict() == document
    assert document["training_model"]["method"] == "lora" and document["training_model"]["lora_rank"] == 4
    assert [step["step"] for step in document["training_run"]["losses"]] == [1, 2]
    assert document["configuration"]["lora_targets"] == "q_proj,v_proj"
    assert "LoRA r4 alpha 32 on q_proj,v_proj" in measurement.heading
    assert "optimizer" in measurement._repr_html_()
    # compare reads fine-tuning files with their own rows: the largest backward peak over the steps.
    comparison = iteragpu.compare(output, output)
    backward = max(row.end.peak_allocated_bytes for row in measurement.phases if row.phase == "backward")
    assert "backward peak allocated (largest of the steps)" in comparison.to_text()
    assert f"{backward:,}" in comparison.to_text()
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.measure(model=model, train="full", lora_rank=8, progress=False)
    assert raised.value.field == "lora_rank" and "needs --train lora" in str(raised.value)
    with pytest.raises(iteragpu.UsageError) as raised:  # a fine-tuning run's rows are its steps
        iteragpu.measure(model=model, train="full", repeats=2, progress=False)
    assert raised.value.field == "repeats" and "its rows are --steps training steps" in str(raised.value)


def test_gradient_checkpointing_is_a_bool_keyword(tmp_path, fake_backend):
    """gradient_checkpointing=True: the switch reaches the file as a JSON bool and the heading names it."""
    model = tmp_path / "tiny-llama"
    write_tiny_llama(model)
    output = tmp_path / "gc.json"
    measurement = iteragpu.measure(model=model, train="full", gradient_checkpointing=True, steps=2, batch=1,
                                   context=8, output=output, backend_path=fake_backend, progress=False)
    document = json.loads(output.read_text())
    assert document["configuration"]["gradient_checkpointing"] is True
    assert document["training_model"]["gradient_checkpointing"] is True
    assert "full fine-tuning, gradient checkpointing" in measurement.heading
    assert iteragpu.Measurement.read(output).configuration.gradient_checkpointing is True
    with pytest.raises(TypeError, match="gradient_checkpointing"):
        iteragpu.measure(model=model, train="full", gradient_checkpointing="yes", progress=False)
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.measure(model=model, gradient_checkpointing=True, progress=False)
    assert raised.value.field == "gradient_checkpointing" and "needs --train" in str(raised.value)


def test_checkpoint_keywords_are_checked(tmp_path):
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.measure(model=tmp_path, width=8, progress=False)
    assert raised.value.field == "width"
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.measure(new_tokens=4, progress=False)
    assert raised.value.field == "new_tokens"


def test_an_h200_checkpoint_measurement_reads_without_its_folder():
    measurement = iteragpu.read_measurement(H200_CHECKPOINT_MEASUREMENT)
    assert measurement.checkpoint.architecture.architecture == "LlamaForCausalLM"
    assert measurement.checkpoint.parameter_count == 8030261248
    run = measurement.decoder_run
    assert run.attention_backend == "prefill cudnn_attention, decode cudnn_attention"
    assert run.device_used_bytes == 21815427072
    html = measurement._repr_html_()
    for text in ("32 layers", "decode: 228.8 tokens/s", "none recorded for this checkpoint run", "cold prefill"):
        assert text in html, text
    assert "Linear(" not in html
    figure = measurement.plot()
    assert len(figure.axes) >= 2


def test_a_checkpoint_sweeps_its_context(tmp_path, fake_backend, monkeypatch):
    monkeypatch.setenv("ITERAGPU_FAKE_BACKEND", "memory=268435456")
    model = tmp_path / "tiny-llama"
    write_tiny_llama(model, max_position_embeddings=4_194_304)  # the fake GPU's boundary is beyond 2,048
    result = iteragpu.sweep("context", model=model, new_tokens=2, context=8, budget=200_000_000,
                            backend_path=fake_backend, progress=False)
    assert result.start.model == str(model)
    assert result.smallest_not_fitting == result.largest_fitting + 1
    assert result.largest_accepted == 4_194_304 - 2 and result.beyond_largest_accepted
    measured = [point for point in result.points if point.outcome in ("fits", "over budget")]
    assert measured and all(point.predicted_peak_reserved_bytes for point in measured)
    short = tmp_path / "tiny-llama-64-positions"
    write_tiny_llama(short, max_position_embeddings=64)
    limited = iteragpu.sweep("context", model=short, new_tokens=2, context=8, budget=200_000_000,
                             backend_path=fake_backend, progress=False)
    assert (limited.largest_fitting, limited.smallest_not_fitting, limited.largest_accepted) == (62, None, 62)
    assert "max_position_embeddings (64" in limited.beyond_largest_accepted
    assert "63 is refused" in limited._repr_html_()
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.sweep("width", model=model, backend_path=fake_backend, progress=False)
    assert raised.value.field == "vary"
