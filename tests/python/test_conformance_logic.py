"""The comparison logic of tests/conformance/gpu_conformance.py, without a GPU (and of the
checkpoint scripts beside it where they decide something: the kernel cell's reading of ncu's
CSV, decode_step_anatomy.py's first differing call).

Synthetic measurement documents (the peer's and iteragpu's JSON shapes) go through the
functions that decide the GPU conformance step of scripts/gpu-check: counters equal byte for
byte, the prediction exact, GPU time ratios within [0.97, 1.03], the same kernel sequence
under Nsight Compute, the parsing of ncu's CSV, and the torch.profiler fallback where ncu is
unusable (when it is chosen, its kernel lists, its labels). Then the whole script runs against
fake tools (a fake CLI, peer, iteragpu package, ncu and torch) to check the orchestration, the
table and the exit status. Neither a GPU nor torch is needed.
"""

import copy
import importlib.util
import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "conformance", "gpu_conformance.py")
_spec = importlib.util.spec_from_file_location("gpu_conformance", SCRIPT)
conformance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conformance)

COUNTER_NAMES = [name for name, _, _ in conformance.COUNTERS]
MiB = 1 << 20


# --- Synthetic documents ------------------------------------------------------------------------

def make_rows(warmup=1, repeats=2, gpu_seconds=0.008, host_seconds=0.0081):
    """Phase rows shaped like the CLI's and the peer's, with plausible counters."""
    phases = [("model_load", None, 0), ("inputs", None, 0), ("cold_forward", None, 1)]
    if warmup:
        phases.append(("warmup", None, warmup))
    phases += [("warm_forward", repeat, 1) for repeat in range(1, repeats + 1)]
    rows = []
    allocated, reserved = 0, 0
    for index, (phase, repeat, forwards) in enumerate(phases):
        end = allocated + 4096 * (index + 1)
        rows.append({
            "phase": phase, "repeat": repeat, "forwards": forwards,
            "host_seconds": host_seconds, "gpu_event_seconds": gpu_seconds,
            "allocated_bytes": {"baseline": allocated, "end": end},
            "reserved_bytes": {"baseline": reserved, "end": reserved + 2 * MiB},
            "peak_allocated_bytes": end + 512,
            "peak_reserved_bytes": reserved + 2 * MiB,
        })
        allocated, reserved = end, reserved + 2 * MiB
    return rows


def peer_document(**options):
    return {"schema": "iteragpu.measurement-peer", "phases": make_rows(**options)}


def counters_of(row):
    return {key: copy.deepcopy(row[key]) for key in
            ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes")}


def iteragpu_document(**options):
    """The CLI's / Python's shape: each row with "predicted" (exact) and "difference" (zeros)."""
    document = {"schema": "iteragpu.measurement", "phases": make_rows(**options)}
    for row in document["phases"]:
        row["predicted"] = counters_of(row)
        row["difference"] = {"allocated_bytes": {"baseline": 0, "end": 0},
                             "reserved_bytes": {"baseline": 0, "end": 0},
                             "peak_allocated_bytes": 0, "peak_reserved_bytes": 0}
    return document


def set_counter(row, name, value):
    member, _, sub = name.partition(".")
    if sub:
        row[member][sub] = value
    else:
        row[member] = value


def get_counter(row, name):
    member, _, sub = name.partition(".")
    return row[member][sub] if sub else row[member]


def cell(gpu_timed=False):
    return {"kind": "measure", "dtype": "float32", "config": "seed-small", "batch": 1, "context": 16,
            "width": 64, "hidden": 0, "warmup": 1, "repeats": 2, "gpu_timed": gpu_timed}


def runs_of(documents, rounds=1):
    """Run records as run_cell makes them: documents = {tool: [document per round]}."""
    return [{"tool": tool, "round": index, "error": None, "document": per_round[index]}
            for index in range(rounds) for tool, per_round in documents.items()]


# --- Counters -----------------------------------------------------------------------------------

def test_equal_counters_pass():
    result = conformance.check_counters(peer_document(), [("cli", iteragpu_document()),
                                                          ("python", iteragpu_document())])
    assert result["ok"], result
    assert result["differences"] == [] and result["problems"] == []
    assert conformance.describe_counters(result) == "yes"
    evaluated = conformance.evaluate_cell(cell(), runs_of({"peer": [peer_document()], "cli": [iteragpu_document()],
                                                           "python": [iteragpu_document()]}))
    assert evaluated["failures"] == []


@pytest.mark.parametrize("tool", ["cli", "python"])
@pytest.mark.parametrize("counter", COUNTER_NAMES)
@pytest.mark.parametrize("row_index", [0, 2, 5])
def test_one_byte_difference_in_any_counter_fails_and_is_named(tool, counter, row_index):
    documents = {"peer": peer_document(), "cli": iteragpu_document(), "python": iteragpu_document()}
    row = documents[tool]["phases"][row_index]
    set_counter(row, counter, get_counter(row, counter) + 1)
    result = conformance.check_counters(documents["peer"], [("cli", documents["cli"]),
                                                            ("python", documents["python"])])
    assert not result["ok"]
    assert result["differences"] == [{
        "tool": tool, "phase": conformance.row_label(row), "counter": counter,
        "reference": get_counter(row, counter) - 1, "value": get_counter(row, counter), "difference": 1}]
    text = conformance.describe_counters(result)
    assert text.startswith("NO ") and counter in text and "+1" in text and tool in text
    evaluated = conformance.evaluate_cell(cell(), runs_of({name: [doc] for name, doc in documents.items()}))
    assert any(failure.startswith("counters:") and counter in failure for failure in evaluated["failures"])


def test_a_difference_in_a_later_round_is_named_with_its_round():
    rounds = {tool: [peer_document() if tool == "peer" else iteragpu_document() for _ in range(3)]
              for tool in conformance.TOOLS}
    rounds["peer"][2]["phases"][2]["reserved_bytes"]["end"] += MiB  # the peer itself, round 3
    evaluated = conformance.evaluate_cell(cell(gpu_timed=True), runs_of(rounds, rounds=3))
    failure = next(failure for failure in evaluated["failures"] if failure.startswith("counters:"))
    assert "peer round 3: cold_forward reserved_bytes.end +1048576" in failure


def test_rows_that_do_not_line_up_fail():
    document = iteragpu_document()
    del document["phases"][-1]
    result = conformance.check_counters(peer_document(), [("cli", document)])
    assert not result["ok"]
    assert "phase rows" in result["problems"][0] and "warm_forward 2" in result["problems"][0]


def test_a_failed_run_fails_the_cell():
    runs = runs_of({"peer": [peer_document()], "cli": [iteragpu_document()], "python": [iteragpu_document()]})
    runs[1].update(document=None, error="exit 3: out of memory")
    evaluated = conformance.evaluate_cell(cell(), runs)
    assert any("cli: no result (exit 3: out of memory)" in failure for failure in evaluated["failures"])
    assert any(failure.startswith("prediction:") and "cli: no result" in failure
               for failure in evaluated["failures"])


# --- Prediction ---------------------------------------------------------------------------------

def test_exact_prediction_passes_and_counts_every_counter():
    result = conformance.check_prediction(iteragpu_document())
    assert result["ok"], result
    assert (result["exact"], result["total"]) == (36, 36)
    assert result["largest_difference"] is None


@pytest.mark.parametrize("how", ["absent", "null"])
def test_missing_predicted_fails(how):
    document = iteragpu_document()
    row = document["phases"][3]
    if how == "absent":
        del row["predicted"]
        del row["difference"]
    else:
        row["predicted"] = row["difference"] = None
    result = conformance.check_prediction(document)
    assert not result["ok"]
    assert result["exact"] == 30 and result["total"] == 36
    assert 'no "predicted" in 1 of 6 phase rows (warmup)' in result["problems"][0]


def test_a_document_without_any_prediction_fails_clearly():
    documents = {"peer": [peer_document()], "cli": [peer_document()], "python": [iteragpu_document()]}
    evaluated = conformance.evaluate_cell(cell(), runs_of(documents))
    assert evaluated["counters"]["ok"]
    assert not evaluated["prediction"]["ok"]
    assert any('cli: no "predicted" in 6 of 6 phase rows' in failure for failure in evaluated["failures"])
    text = conformance.describe_prediction(evaluated["prediction"])
    assert text.startswith("NO ") and "cli 0/36" in text and "py 36/36" in text


def test_inexact_prediction_reports_the_count_and_the_largest_difference():
    document = iteragpu_document()
    cold = document["phases"][2]
    cold["predicted"]["reserved_bytes"]["end"] -= 2 * MiB
    cold["difference"]["reserved_bytes"]["end"] = 2 * MiB
    cold["predicted"]["peak_allocated_bytes"] += 512
    cold["difference"]["peak_allocated_bytes"] = -512
    result = conformance.check_prediction(document)
    assert not result["ok"]
    assert (result["exact"], result["total"]) == (34, 36)
    assert result["largest_difference"]["value"] == 2 * MiB
    assert result["largest_difference"]["phase"] == "cold_forward"
    assert result["largest_difference"]["counter"] == "reserved_bytes.end"
    assert result["problems"] == []  # "difference" is consistent: only the count fails
    summary = conformance.summarize_prediction({"cli": [result], "python": [conformance.check_prediction(iteragpu_document())]})
    assert conformance.describe_prediction(summary) == "NO cli 34/36 py 36/36 (max +2097152)"


def test_a_difference_field_that_is_not_measured_minus_predicted_fails():
    document = iteragpu_document()
    document["phases"][1]["difference"]["peak_reserved_bytes"] = 7
    result = conformance.check_prediction(document)
    assert not result["ok"]
    assert result["exact"] == 36
    assert any("peak_reserved_bytes is 7" in problem for problem in result["problems"])


# --- GPU time -----------------------------------------------------------------------------------

def samples(cli_ratio=1.0, python_ratio=1.0, peer=0.008, count=60, warm_ratio=1.0):
    """Back-to-back times in the given ratios to the peer's; warm_forward times in warm_ratio."""
    return {"peer": {"gpu": [peer] * count, "host": [peer * 1.01] * count, "back_to_back": [peer] * 3},
            "cli": {"gpu": [peer * warm_ratio] * count, "host": [peer] * count,
                    "back_to_back": [peer * cli_ratio] * 3},
            "python": {"gpu": [peer * warm_ratio] * count, "host": [peer] * count,
                       "back_to_back": [peer * python_ratio] * 3}}


@pytest.mark.parametrize("ratio, ok", [(1.0, True), (1.02, True), (0.98, True), (1.04, False), (0.96, False)])
@pytest.mark.parametrize("tool", ["cli", "python"])
def test_gpu_ratio_bounds(tool, ratio, ok):
    result = conformance.check_gpu_time(samples(**{f"{tool}_ratio": ratio}))
    assert result["ok"] is ok
    assert result["ratios"][tool] == pytest.approx(ratio)
    assert conformance.describe_ratio(result, tool).endswith(" NO") is (not ok)
    if not ok:
        assert result["problems"] == [f"{tool}/peer back-to-back GPU median ratio {ratio:.3f} outside [0.97, 1.03]"]


def test_paced_warm_forward_times_are_reported_not_checked():
    result = conformance.check_gpu_time(samples(warm_ratio=1.05))
    assert result["ok"] is True
    assert result["warm_ratios"]["cli"] == pytest.approx(1.05)


def test_back_to_back_time_is_the_warmup_row_per_forward():
    document = {"phases": [{"phase": "warmup", "forwards": 200, "gpu_event_seconds": 1.4},
                           {"phase": "warm_forward", "forwards": 1, "gpu_event_seconds": 0.0071}]}
    assert conformance.back_to_back_forward_seconds(document) == pytest.approx(0.007)
    assert conformance.back_to_back_forward_seconds({"phases": []}) is None


def test_gpu_time_is_the_median_pooled_over_rounds():
    documents = {tool: [] for tool in conformance.TOOLS}
    for round_index in range(3):
        for tool in conformance.TOOLS:
            make = peer_document if tool == "peer" else iteragpu_document
            # The CLI is 4 % slower in one round of three only: the pooled median stays at 1.
            factor = 1.04 if tool == "cli" and round_index == 1 else 1.0
            documents[tool].append(make(warmup=3, repeats=20, gpu_seconds=0.008 * factor))
    evaluated = conformance.evaluate_cell(cell(gpu_timed=True), runs_of(documents, rounds=3))
    assert evaluated["gpu_time"]["ok"], evaluated["gpu_time"]
    assert evaluated["gpu_time"]["samples_count"] == {"peer": 60, "cli": 60, "python": 60}
    for document in documents["cli"]:
        for row in document["phases"]:
            row["gpu_event_seconds"] *= 1.04
    evaluated = conformance.evaluate_cell(cell(gpu_timed=True), runs_of(documents, rounds=3))
    assert any(failure.startswith("GPU time: cli/peer") for failure in evaluated["failures"])


# --- Kernels ------------------------------------------------------------------------------------

NCU_SAMPLE = textwrap.dedent('''\
    ==PROF== Connected to process 4242 (/opt/torch/.venv/bin/python3.12)
    ==PROF== Profiling "distribution_elementwise_grid_stride_kernel" - 0: 0%....50%....100% - 1 pass
    ==PROF== Profiling "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_bias_TNT" - 1: 0%....50%....100% - 1 pass
    ==PROF== Profiling "vectorized_elementwise_kernel" - 2: 0%....50%....100% - 1 pass
    ==PROF== Profiling "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8" - 3: 0%....50%....100% - 1 pass
    Measurement on cuda:0 (NVIDIA H200), LibTorch 2.11.0
    phase, host ms, "GPU" ms
    ==PROF== Disconnected from process 4242
    ==WARNING== Found outstanding GPU clock reset, trying to revert...Success.
    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
    "0","4242","python3.12","127.0.0.1","void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, (int)4, void at::native::templates::cuda::normal_and_transform<float, float, at::CUDAGeneratorImpl *>(int, at::PhiloxCudaState, T3, T4)","1","7","(256, 1, 1)","(264, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","2,272"
    "1","4242","python3.12","127.0.0.1","nvjet_sm90_tst_64x8_64x16_4x1_v_bz_bias_TNT","1","7","(384, 1, 1)","(1, 32, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","5.18"
    "2","4242","python3.12","127.0.0.1","void at::native::vectorized_elementwise_kernel<(int)4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase &, at::native::GeluType)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 2)]::operator ()() const::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)","1","7","(128, 1, 1)","(32, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","1,696"
    "3","4242","python3.12","127.0.0.1","sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8","1","7","(128, 1, 1)","(1, 2, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","6,080"
    ''')


def test_parse_ncu_csv_sample():
    kernels = conformance.parse_ncu_csv(NCU_SAMPLE)
    assert [kernel["id"] for kernel in kernels] == [0, 1, 2, 3]
    assert [conformance.kernel_base_name(kernel["name"]) for kernel in kernels] == [
        "at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel",
        "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_bias_TNT",
        "at::native::vectorized_elementwise_kernel",
        "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8",
    ]
    assert kernels[0]["name"].endswith("(int, at::PhiloxCudaState, T3, T4)")  # quoted commas kept
    assert [kernel["duration_ns"] for kernel in kernels] == pytest.approx([2272, 5180, 1696, 6080])
    assert conformance.gemm_kernel_names([kernel["name"] for kernel in kernels]) == [
        "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_bias_TNT", "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8"]


def test_real_ncu_csv_of_the_decoder_kernel_cell(tmp_path):
    """The kernel cell's two CSV files as Nsight Compute wrote them on the H200 (2026-12-05,
    units "ns"), read by decoder_conformance.py through the one parser: 625 kernels a side,
    the same names in order, summed kernel time within 3 % (0.998)."""
    import gzip
    data = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "decode-anatomy")
    sys.path.insert(0, os.path.dirname(SCRIPT))
    try:
        import decoder_conformance
    finally:
        sys.path.remove(os.path.dirname(SCRIPT))
    sides = {}
    for side in ("iteragpu", "peer"):
        path = tmp_path / f"{side}.csv"
        with gzip.open(os.path.join(data, f"llama-2-layers-bfloat16-1x128-kernels-{side}-h200.csv.gz"), "rt") as packed:
            path.write_text(packed.read())
        sides[side] = decoder_conformance.kernels_of(str(path))
    mine, peer = sides["iteragpu"], sides["peer"]
    assert len(mine) == len(peer) == 625
    assert [name for name, _ in mine] == [name for name, _ in peer]
    assert all(ns is not None and ns > 0 for _, ns in mine + peer)  # every duration read, "ns" understood
    ratio = sum(ns for _, ns in mine) / sum(ns for _, ns in peer)
    assert ratio == pytest.approx(0.998, abs=0.0005)


def test_training_kernel_trace_compares_names_in_order_and_summed_time(tmp_path):
    """training_conformance.py's traced pair: each side runs once with the tracer's variables
    set (here a stand-in writes the trace file kernel_trace.c would), and the verdict names the
    first kernel that differs and a summed kernel time outside ±3 %; a side that fails under the
    tracer is a problem, not a comparison."""
    import types
    sys.path.insert(0, os.path.dirname(SCRIPT))
    try:
        import training_conformance
    finally:
        sys.path.remove(os.path.dirname(SCRIPT))

    def side(kernels, status=0):
        def run(env):
            assert env["CUDA_INJECTION64_PATH"] == "/tracer.so"
            with open(os.path.join(env["KERNEL_TRACE_DIR"], "kernels-1.csv"), "w") as trace:
                for start, (name, nanoseconds) in enumerate(kernels):
                    trace.write(f"{start * 1000},{start * 1000 + nanoseconds},{name}\n")
            return subprocess.CompletedProcess([], status, "", "out of memory\n")
        return run

    args = types.SimpleNamespace(work_dir=str(tmp_path), kernel_trace="/tracer.so")
    same, problems = training_conformance.trace_kernels(
        args, "llama-2-layers:bfloat16:full:1:128", side([("gemm", 1000), ("adamw", 200)]),
        side([("gemm", 1010), ("adamw", 200)]))
    assert problems == [] and same["same"] and same["kernels"] == 2
    assert same["kernel_time_ratio"] == pytest.approx(1210 / 1200)
    differ, problems = training_conformance.trace_kernels(
        args, "llama-2-layers:bfloat16:full:1:128", side([("gemm", 1000), ("adamw", 200)]),
        side([("gemm", 1000), ("copy", 400)]))
    assert not differ["same"] and differ["first_difference"] == 1
    assert problems[0] == "kernels: iteragpu 2, Python 2, 1 names differ, the first at 1"
    assert problems[-1] == "summed kernel GPU time 1.167x the Python loop's"
    failed, problems = training_conformance.trace_kernels(
        args, "llama-2-layers:bfloat16:full:1:128", side([("gemm", 1)]), side([("gemm", 1)], status=3))
    assert failed is None and problems == ["kernel trace: iteragpu exit 3 under the tracer: out of memory"]


def test_training_losses_count_only_as_far_as_a_rerun_of_the_loop_repeats_them(tmp_path):
    """The loop runs again until a run differs from the first at or before iteragpu's first
    differing step (two runs may agree there by chance): the losses count up to the earliest
    step any rerun differed at; when every rerun agrees they all count; a rerun that fails stops
    the search."""
    sys.path.insert(0, os.path.dirname(SCRIPT))
    try:
        import training_conformance
    finally:
        sys.path.remove(os.path.dirname(SCRIPT))
    reference_file = str(tmp_path / "reference.json")

    def loop(*runs):
        pending = list(runs)
        calls = []

        def run():
            losses = pending.pop(0)
            calls.append(losses)
            if losses is None:
                return subprocess.CompletedProcess([], 1, "", "out of memory")
            with open(reference_file, "w") as out:
                json.dump({"losses": losses}, out)
            return subprocess.CompletedProcess([], 0, "", "")
        return run, calls

    first = [12.0, 11.5, 10.7]
    measured = [12.0, 11.4, 10.6]  # differs from step 2 (index 1)
    # The first rerun agrees up to step 3 only: not enough, so the loop runs again and differs at 2.
    run, calls = loop([12.0, 11.5, 10.8], [12.0, 11.6, 10.7], [12.0, 11.5, 10.7])
    assert training_conformance.repeatable_steps(first, measured, run, reference_file, 3) == (1, [12.0, 11.6, 10.7])
    assert len(calls) == 2  # stops once a run differs at or before iteragpu's first difference
    # Every rerun agrees up to step 3: losses count up to step 2, so iteragpu's difference counts.
    run, calls = loop([12.0, 11.5, 10.8], [12.0, 11.5, 10.9], [12.0, 11.5, 10.7])
    assert training_conformance.repeatable_steps(first, measured, run, reference_file, 3) == (2, [12.0, 11.5, 10.8])
    assert len(calls) == 3
    run, calls = loop([12.0, 11.5, 10.7], [12.0, 11.5, 10.7])
    assert training_conformance.repeatable_steps(first, measured, run, reference_file, 2) == (3, [12.0, 11.5, 10.7])
    run, calls = loop(None, [12.0, 11.6, 10.7])
    assert training_conformance.repeatable_steps(first, measured, run, reference_file, 2) == (None, None)
    assert len(calls) == 1


def test_decode_anatomy_first_difference_names_the_call_whose_input_was_still_equal():
    """decode_step_anatomy.py's verdict on two fingerprinted runs: the first step and module
    call whose output differs, and whether its input was still equal (then that module is what
    does not repeat its bits); None for runs that agree; a different module order says so."""
    sys.path.insert(0, os.path.dirname(SCRIPT))
    try:
        import decode_step_anatomy
    finally:
        sys.path.remove(os.path.dirname(SCRIPT))
    prefill = [["model.layers.0.self_attn.q_proj", [1, 2], [3, 4]], ["model.layers.0.self_attn.o_proj", [5, 6], [7, 8]]]
    decode_a = [["model.layers.0.self_attn.q_proj", [9, 9], [10, 10]], ["model.layers.0.self_attn.o_proj", [11, 11], [12, 12]]]
    decode_b = copy.deepcopy(decode_a)
    decode_b[1][1] = [11, 99]  # the attention's output (o_proj's input) differs
    decode_b[1][2] = [12, 99]
    a, b = dict(calls=[prefill, decode_a]), dict(calls=[copy.deepcopy(prefill), decode_b])
    assert decode_step_anatomy.first_difference(a, a) is None
    assert decode_step_anatomy.first_difference(a, b) == dict(step=1, call=1, module="model.layers.0.self_attn.o_proj",
                                                              input_equal=False)
    decode_c = copy.deepcopy(decode_a)
    decode_c[0][2] = [10, 11]  # q_proj's output differs from an equal input
    assert decode_step_anatomy.first_difference(a, dict(calls=[prefill, decode_c]))["input_equal"] is True
    swapped = dict(calls=[prefill, list(reversed(decode_a))])
    assert decode_step_anatomy.first_difference(a, swapped)["note"] == "different module order"


def test_decoder_timing_rounds_give_the_median_ratio_and_the_spread():
    """decoder_conformance.py's timing over rounds (pairs of processes, iteragpu's rows and the
    peer's): each ratio the median over rounds of the warm medians' ratio, with its lowest and
    highest round; a slow round moves the spread, not the ratio."""
    sys.path.insert(0, os.path.dirname(SCRIPT))
    try:
        import decoder_conformance
    finally:
        sys.path.remove(os.path.dirname(SCRIPT))

    def rows(prefill, decode, host):
        made = [dict(phase="prefill", sequence="warm", gpu_event_seconds=prefill, host_seconds=prefill)]
        made += [dict(phase="decode", sequence="warm", gpu_event_seconds=decode, host_seconds=host)] * 3
        made += [dict(phase="decode", sequence="cold", gpu_event_seconds=99.0, host_seconds=99.0)]  # not timed
        return made

    pairs = [(rows(1.00, 0.50, 0.60), rows(1.00, 1.00, 1.00)),
             (rows(1.10, 0.50, 0.60), rows(1.00, 1.00, 1.00)),  # a slow round for iteragpu
             (rows(0.99, 0.55, 0.66), rows(1.00, 1.10, 1.10))]
    ratios, spreads = decoder_conformance.round_ratios(pairs)
    assert ratios["prefill"] == pytest.approx(1.00)
    assert spreads["prefill"] == pytest.approx((0.99, 1.10))
    assert ratios["decode"] == pytest.approx(0.50)
    assert ratios["decode_host"] == pytest.approx(0.60)
    single, _ = decoder_conformance.round_ratios(pairs[1:2])
    assert single["prefill"] == pytest.approx(1.10)  # one round: its own ratio


FAKE_PLAN = [("weights_load", None, None), ("inputs", None, None), ("prefill", "cold", 0), ("decode", "cold", 1),
             ("prefill", "warm", 0), ("decode", "warm", 1)]
FAKE_COUNTERS = dict(allocated_baseline=0, allocated_end=512, reserved_baseline=0, reserved_end=2 << 20,
                     peak_allocated=1024, peak_reserved=2 << 20)


def write_fake_peer(path, seconds):
    """What decoder_conformance.py --peer writes: FAKE_PLAN's rows, every one taking SECONDS."""
    rows = [dict(phase=phase, sequence=sequence, repeat=None, step=step, host_seconds=seconds,
                 gpu_event_seconds=seconds, **FAKE_COUNTERS) for phase, sequence, step in FAKE_PLAN]
    with open(path, "w") as out:
        json.dump(dict(rows=rows, tokens=[5, 7], logits_sha256="ab", attention="flash"), out)


def write_fake_measurement(path, seconds, attention, predicted):
    """What measure --model writes for FAKE_PLAN: the same counters as the fake peer, every row
    taking SECONDS, each with its prediction (equal to the counters) or none."""
    phases = [dict(phase=phase, sequence=sequence, repeat=None, step=step, host_seconds=seconds,
                   gpu_event_seconds=seconds, allocated_bytes=dict(baseline=0, end=512),
                   reserved_bytes=dict(baseline=0, end=2 << 20), peak_allocated_bytes=1024,
                   peak_reserved_bytes=2 << 20) for phase, sequence, step in FAKE_PLAN]
    for row in phases:
        row["predicted"] = {key: row[key] for key in ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes",
                                                       "peak_reserved_bytes")} if predicted else None
    with open(path, "w") as out:
        json.dump(dict(phases=phases, decoder_run=dict(first_sequence_tokens=[5, 7], last_logits_sha256="ab",
                                                      attention_backend=f"prefill {attention}, decode {attention}",
                                                      device_used_bytes=1 << 30)), out)


def test_decoder_cell_with_rounds_and_flash_against_fake_processes(tmp_path, monkeypatch):
    """decoder_conformance.compare_cell's orchestration, the GPU processes replaced by fakes that
    write what transformers' peer and `measure --model` write: counters compared, output
    equality, three timing rounds alternating the two (the ratio the median, a slow round
    only in the spread), and a :flash cell's environment reaching both processes."""
    import argparse as argument_parsing
    sys.path.insert(0, os.path.dirname(SCRIPT))
    try:
        import decoder_conformance
    finally:
        sys.path.remove(os.path.dirname(SCRIPT))
    calls = []

    def fake_run(command, **options):
        kind = "write" if "--write" in command else "peer" if "--peer" in command else "iteragpu"
        calls.append((kind, (options.get("env") or {}).get("TORCH_CUDNN_SDPA_DEPRIORITIZED")))
        round_number = sum(1 for k, _ in calls if k == kind)
        if kind == "peer":
            write_fake_peer(command[-1], 0.010)
        elif kind == "iteragpu":  # the second round is slow
            write_fake_measurement(command[command.index("--output") + 1], 0.009 if round_number != 2 else 0.020,
                                   "flash_attention", predicted=True)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(decoder_conformance.subprocess, "run", fake_run)
    args = argument_parsing.Namespace(work_dir=str(tmp_path), cli="iteragpu", new_tokens=1, warmup=0, repeats=1,
                                      seed=1, rounds=3, keep=None, kernel_trace=None)
    result = decoder_conformance.compare_cell(args, "llama-1b:bfloat16:1:128:flash")
    assert result["ok"], result["problems"]
    assert result["equal_counters"] == result["counters"] == 36
    assert result["predicted_equal"] == 36 and result["same_output"]
    assert [kind for kind, _ in calls] == ["write", "peer", "iteragpu", "peer", "iteragpu", "peer", "iteragpu"]
    assert all(flag == "1" for kind, flag in calls if kind != "write")  # :flash reached both processes
    assert result["rounds"] == 3
    assert result["ratios"]["decode"] == pytest.approx(0.9)  # median of 0.9, 2.0, 0.9
    assert result["spreads"]["decode"] == pytest.approx((0.9, 2.0))
    args.rounds = 1
    calls.clear()
    slow = decoder_conformance.compare_cell(args, "llama-1b:bfloat16:1:128")
    assert slow["rounds"] == 1 and slow["ratios"]["decode"] == pytest.approx(0.9)
    assert all(flag is None for kind, flag in calls if kind != "write")  # no :flash, no switch


def import_decoder_conformance():
    sys.path.insert(0, os.path.dirname(SCRIPT))
    try:
        import decoder_conformance
    finally:
        sys.path.remove(os.path.dirname(SCRIPT))
    return decoder_conformance


def write_kernel_trace(folder, forwards, new_tokens, decode_ns, prefill_ns=1000, rename=None):
    """What kernel_trace.c writes for a process: start_ns,end_ns,name per kernel. Each forward
    is a GEMM and its greedy token's argmax; a prefill every new_tokens + 1 forwards."""
    clock, lines = 5000, []
    for forward in range(forwards):
        gemm = prefill_ns if forward % (new_tokens + 1) == 0 else decode_ns
        for name, nanoseconds in (("_Z4gemmv", gemm), ("_Z13reduce_kernelIN2at6native9ArgMaxOpsIfEEEvv", 10)):
            if rename and forward == rename:
                name = "_Z5otherv"
            lines.append(f"{clock},{clock + nanoseconds},{name}")
            clock += nanoseconds + 50
    with open(os.path.join(folder, "kernels-4242.csv"), "w") as out:
        out.write("\n".join(lines) + "\n")


def test_kernel_trace_read_cut_into_forwards_and_compared(tmp_path):
    """decoder_conformance.py's reading of kernel_trace.c's files: kernels in GPU start order
    with their own durations; the run cut into forwards at each argmax, prefill forwards (every
    new_tokens + 1) apart from decode ones; names compared in order and summed times as ratios.
    A trace that lost records, or a folder without kernels, is refused, never summed short."""
    decoder_conformance = import_decoder_conformance()
    mine, peer = tmp_path / "mine", tmp_path / "peer"
    mine.mkdir(), peer.mkdir()
    write_kernel_trace(mine, forwards=6, new_tokens=2, decode_ns=100)
    write_kernel_trace(peer, forwards=6, new_tokens=2, decode_ns=110)
    (mine / "kernels-1.csv").write_text("")  # the CLI's own process: CUDA started, no kernel
    kernels = decoder_conformance.read_kernel_trace(str(mine))
    assert len(kernels) == 12 and kernels[0] == ("_Z4gemmv", 1000)
    assert decoder_conformance.kernel_time_by_phase(kernels, 2, 2) == {"prefill": 2 * 1010, "decode": 4 * 110}
    assert decoder_conformance.kernel_time_by_phase(kernels, 1, 2) is None  # 6 argmax kernels, 4 forwards expected
    compared = decoder_conformance.compare_kernel_traces(kernels, decoder_conformance.read_kernel_trace(str(peer)), 2, 2)
    assert compared["same"] and compared["kernels"] == compared["peer_kernels"] == 12
    assert compared["ratios"]["prefill"] == pytest.approx(1.0)
    assert compared["ratios"]["decode"] == pytest.approx(440 / 480)
    assert decoder_conformance.describe_kernel_trace(compared) == "12 same 1.000/0.917x"
    write_kernel_trace(peer, forwards=6, new_tokens=2, decode_ns=100, rename=4)
    renamed = decoder_conformance.compare_kernel_traces(kernels, decoder_conformance.read_kernel_trace(str(peer)), 2, 2)
    assert not renamed["same"] and renamed["first_difference"] == 8
    assert renamed["differences"] == [dict(iteragpu="_Z4gemmv", transformers="_Z5otherv", positions=[8], count=1,
                                           nanoseconds=(100, 100)),  # forward 4: a decode step
                                      dict(iteragpu="_Z13reduce_kernelIN2at6native9ArgMaxOpsIfEEEvv",
                                           transformers="_Z5otherv", positions=[9], count=1, nanoseconds=(10, 10))]
    shorter = decoder_conformance.compare_kernel_traces(kernels[:-2], kernels, 2, 2)
    assert not shorter["same"] and shorter["first_difference"] == 10
    with open(mine / "kernels-4242.csv", "a") as out:
        out.write("dropped,17,records\n")
    with pytest.raises(RuntimeError, match="dropped,17,records"):
        decoder_conformance.read_kernel_trace(str(mine))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RuntimeError, match="no kernel recorded"):
        decoder_conformance.read_kernel_trace(str(empty))


def test_decoder_cell_with_a_kernel_trace_against_fake_processes(tmp_path, monkeypatch):
    """compare_cell with --kernel-trace: one more pair of processes runs with CUDA's injection
    variable naming the tracer and its own trace folder; equal kernels and times pass, decode
    kernels 10 % slower fail the cell naming the part, and a tracer that lost records fails it
    too, even where the event times agree."""
    import argparse as argument_parsing
    decoder_conformance = import_decoder_conformance()
    behaviour = dict(iteragpu_decode_ns=100, dropped=False)
    traced = []

    def fake_run(command, **options):
        environment = options.get("env") or {}
        kind = "write" if "--write" in command else "peer" if "--peer" in command else "iteragpu"
        if environment.get("CUDA_INJECTION64_PATH"):
            traced.append((kind, environment["CUDA_INJECTION64_PATH"]))
            folder = environment["KERNEL_TRACE_DIR"]
            write_kernel_trace(folder, forwards=4, new_tokens=1,
                               decode_ns=behaviour["iteragpu_decode_ns"] if kind == "iteragpu" else 100)
            if behaviour["dropped"] and kind == "iteragpu":
                with open(os.path.join(folder, "kernels-4242.csv"), "a") as out:
                    out.write("dropped,3,records\n")
        if kind == "peer":
            write_fake_peer(command[-1], 0.01)
        elif kind == "iteragpu":
            write_fake_measurement(command[command.index("--output") + 1], 0.01, "cudnn_attention", predicted=False)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(decoder_conformance.subprocess, "run", fake_run)
    args = argument_parsing.Namespace(work_dir=str(tmp_path), cli="iteragpu", new_tokens=1, warmup=0, repeats=1,
                                      seed=1, rounds=1, keep=None, kernel_trace="/opt/libiteragpu_kernel_trace.so")
    same = decoder_conformance.compare_cell(args, "llama-1b:bfloat16:1:128")
    assert same["ok"], same["problems"]
    assert traced == [("peer", "/opt/libiteragpu_kernel_trace.so"), ("iteragpu", "/opt/libiteragpu_kernel_trace.so")]
    assert same["kernel_trace"]["same"] and same["kernel_trace"]["ratios"]["decode"] == pytest.approx(1.0)
    behaviour["iteragpu_decode_ns"] = 110
    slower = decoder_conformance.compare_cell(args, "llama-1b:bfloat16:1:128")
    assert not slower["ok"] and slower["problems"] == ["summed kernel GPU time (decode) 1.091x transformers'"]  # (110 + 10) / (100 + 10)
    behaviour.update(iteragpu_decode_ns=100, dropped=True)
    lost = decoder_conformance.compare_cell(args, "llama-1b:bfloat16:1:128")
    assert not lost["ok"] and lost["kernel_trace"] is None
    assert lost["problems"][0].startswith("kernel trace: kernel trace kernels-4242.csv: dropped,3,records")


def test_decode_step_bench_row_gives_both_sides_the_ratio_and_the_loading_rates():
    """tests/bench/decode_step_bench.py's line for a cell from compare_cell's result: each side's
    warm decode step, the ratio's median with its lowest and highest round, and weights_load as
    bytes per second on each side; a failed cell says why instead of printing numbers."""
    bench_path = os.path.join(os.path.dirname(os.path.dirname(SCRIPT)), "bench", "decode_step_bench.py")
    spec = importlib.util.spec_from_file_location("decode_step_bench", bench_path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = dict(cell="llama-1b:bfloat16:4:2048", ratios={"decode_host": 0.549}, rounds=3,
                  spreads={"decode_host": (0.538, 0.792)}, decode_host_seconds=(0.01003, 0.01865),
                  load_seconds=0.37, peer_load_seconds=0.74)
    line = bench.timing_row(result, 2_471_000_000)
    assert "10.03 ms" in line and "18.65 ms" in line
    assert "0.549 (0.538-0.792) x3" in line
    assert "6.68 GB/s" in line and "3.34 GB/s" in line and line.endswith("2.00")
    failed = bench.timing_row(dict(cell="qwen3-0.6b:bfloat16:1:128", ok=False, problems=["iteragpu exit 4: no GPU"]), 0)
    assert "failed: iteragpu exit 4: no GPU" in failed
    folder = os.path.join(os.path.dirname(SCRIPT), "..", "data", "decode-anatomy")
    assert bench.checkpoint_bytes(folder) == 0  # only *.safetensors files count


def test_parse_ncu_csv_one_entry_per_launch_and_nothing_from_noise():
    header = NCU_SAMPLE.splitlines()[9]
    extra_metric = ('"1","4242","python3.12","127.0.0.1","nvjet_sm90_tst_64x8_64x16_4x1_v_bz_bias_TNT","1","7",'
                    '"(384, 1, 1)","(1, 32, 1)","0","9.0","Command line profiler metrics","sm__cycles_elapsed.avg",'
                    '"cycle","9,001"')
    kernels = conformance.parse_ncu_csv(NCU_SAMPLE + extra_metric + "\n")
    assert len(kernels) == 4 and kernels[1]["duration_ns"] == pytest.approx(5180)
    assert conformance.parse_ncu_csv("==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM\n") == []
    assert header.startswith('"ID"')
    assert conformance.parse_ncu_csv(header + "\n") == []


def test_same_kernels_pass_and_a_kernel_list_that_differs_fails():
    kernels = conformance.parse_ncu_csv(NCU_SAMPLE)
    same = conformance.evaluate_kernels({"dtype": "float32", "config": "kernels"},
                                        {"peer": kernels, "cli": copy.deepcopy(kernels)}, {"peer": None, "cli": None})
    assert same["ok"] and conformance.describe_kernels(same) == "same 4 kernels (ncu: peer = cli)"
    other = copy.deepcopy(kernels)
    other[3]["name"] = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(T1::Params)"
    differs = conformance.evaluate_kernels({"dtype": "float32", "config": "kernels"},
                                           {"peer": kernels, "cli": other}, {"peer": None, "cli": None})
    assert not differs["ok"]
    assert "launch 3" in differs["failures"][0] and "cutlass::Kernel2" in differs["failures"][0]
    assert differs["gemm"]["cli"][-1].startswith("void cutlass::Kernel2")
    shorter = conformance.evaluate_kernels({"dtype": "float32", "config": "kernels"},
                                           {"peer": kernels, "cli": kernels[:3]}, {"peer": None, "cli": None})
    assert not shorter["ok"] and "cli (none)" in shorter["failures"][0]
    empty = conformance.evaluate_kernels({"dtype": "float32", "config": "kernels"},
                                         {"peer": [], "cli": []}, {"peer": None, "cli": None})
    assert not empty["ok"] and empty["failures"] == ["no kernels profiled"]


# --- The torch.profiler fallback ----------------------------------------------------------------

NCU_LIBRARY_NOT_LOADED = textwrap.dedent("""\
    ==PROF== Connected to process 4242 (/opt/torch/.venv/bin/python3.12)
    ==ERROR== Failed to initialize the profiler: LibraryNotLoaded
    Measurement on cuda:0 (NVIDIA H200), LibTorch 2.11.0
    ==PROF== Disconnected from process 4242
    ==WARNING== No kernels were profiled.
    """)


def ncu_process(stdout, stderr="", error=None, returncode=0):
    return {"returncode": returncode, "wall_seconds": 0.5, "stdout": stdout, "stderr": stderr, "error": error}


def test_ncu_unusable_reason_on_an_error_line_or_no_kernel_rows():
    reason = conformance.ncu_unusable_reason(ncu_process(NCU_LIBRARY_NOT_LOADED), [])
    assert reason == "Failed to initialize the profiler: LibraryNotLoaded"
    # An ==ERROR== line makes ncu unusable even when some kernels were listed.
    kernels = conformance.parse_ncu_csv(NCU_SAMPLE)
    partial = NCU_SAMPLE + "==ERROR== An error was reported by the driver\n"
    assert conformance.ncu_unusable_reason(ncu_process(partial), kernels) == "An error was reported by the driver"
    # On stderr too.
    assert conformance.ncu_unusable_reason(ncu_process("", "==ERROR== ERR_NVGPUCTRPERM - no permission\n"),
                                           []) == "ERR_NVGPUCTRPERM - no permission"
    # The CSV header but no kernel row.
    header_only = "\n".join(NCU_SAMPLE.splitlines()[:10]) + "\n"
    assert conformance.parse_ncu_csv(header_only) == []
    reason = conformance.ncu_unusable_reason(ncu_process(header_only), [])
    assert reason.startswith("no kernels in ncu's output") and "outstanding GPU clock reset" in reason
    assert conformance.ncu_unusable_reason(ncu_process("", error="timed out after 300 s"), []) == \
        "no kernels in ncu's output (timed out after 300 s)"


def test_ncu_is_usable_with_kernels_even_when_the_program_failed():
    kernels = conformance.parse_ncu_csv(NCU_SAMPLE)
    assert conformance.ncu_unusable_reason(ncu_process(NCU_SAMPLE), kernels) is None
    # The profiled program's own failure, reported by ncu, is that program's: ncu itself worked.
    failed = NCU_SAMPLE + "==ERROR== The application returned an error code (3).\n"
    assert conformance.ncu_unusable_reason(ncu_process(failed, error="exit 3", returncode=3), kernels) is None


def profiler_document(names, starts=None, **extra):
    starts = starts if starts is not None else [10.0 + 5 * index for index in range(len(names))]
    document = {"schema": conformance.PROFILER_SCHEMA, "tool": "peer", "method": "torch.profiler",
                "source": "chrome trace", "torch": "2.11.0+cu130", "skipped": {"gpu_memcpy": 2},
                "kernels": [{"name": name, "start_us": start, "duration_us": 2.5}
                            for name, start in zip(names, starts)]}
    document.update(extra)
    return json.dumps(document)


FORWARD = ["void at::native::normal_kernel<float>(int, T)", "nvjet_sm90_tst_64x8_TNT",
           "void at::native::vectorized_elementwise_kernel<4, Gelu>(int, T2, T3)", "nvjet_sm90_tst_64x8_TNT"]


def test_parse_profiler_kernels():
    kernels, error = conformance.parse_profiler_kernels(profiler_document(FORWARD))
    assert error is None
    assert [kernel["name"] for kernel in kernels] == FORWARD
    assert [kernel["id"] for kernel in kernels] == [0, 1, 2, 3]
    assert [kernel["duration_ns"] for kernel in kernels] == pytest.approx([2500] * 4)
    # Listed out of order: sorted by start time (ties keep the file's order).
    kernels, error = conformance.parse_profiler_kernels(profiler_document(FORWARD, starts=[30.0, 10.0, 20.0, 10.0]))
    assert error is None and [kernel["name"] for kernel in kernels] == [FORWARD[1], FORWARD[3], FORWARD[2], FORWARD[0]]
    # An empty list is a list: the caller decides that no kernel is a failure.
    assert conformance.parse_profiler_kernels(profiler_document([])) == ([], None)


@pytest.mark.parametrize("text, expected", [
    ("==ERROR== not json", "unreadable kernel list"),
    (json.dumps({"schema": "iteragpu.measurement", "kernels": []}), "not a kernel list"),
    (json.dumps({"schema": conformance.PROFILER_SCHEMA}), 'no "kernels" list'),
    (json.dumps({"schema": conformance.PROFILER_SCHEMA, "kernels": [{"name": "k"}, {"start_us": 1}]}),
     "kernel 1: no name"),
])
def test_parse_profiler_kernels_refuses_what_is_not_a_kernel_list(text, expected):
    kernels, error = conformance.parse_profiler_kernels(text)
    assert kernels == [] and error.startswith(expected), error


def test_profiler_kernel_lists_compare_as_under_ncu():
    peer, _ = conformance.parse_profiler_kernels(profiler_document(FORWARD))
    other = list(FORWARD)
    other[3] = "sm90_xmma_gemm_f32f32_tn_n_tilesize64x64x8"
    python, _ = conformance.parse_profiler_kernels(profiler_document(other))
    same = conformance.evaluate_kernels({"dtype": "float32", "config": "kernels"},
                                        {"peer": peer, "python": copy.deepcopy(peer)},
                                        {"peer": None, "python": None}, other="python")
    assert same["ok"] and same["comparison"] == conformance.compare_kernel_sequences(FORWARD, FORWARD, "python")
    differs = conformance.evaluate_kernels({"dtype": "float32", "config": "kernels"},
                                           {"peer": peer, "python": python},
                                           {"peer": None, "python": None}, other="python")
    assert not differs["ok"]
    assert differs["failures"] == ["kernel sequences differ at launch 3 (peer 4 kernels, python 4): "
                                   "peer nvjet_sm90_tst_64x8_TNT, python sm90_xmma_gemm_f32f32_tn_n_tilesize64x64x8"]
    assert differs["comparison"]["first_difference"]["python"] == other[3]


def test_profiler_unusable_only_when_the_peer_cannot_be_profiled():
    peer, _ = conformance.parse_profiler_kernels(profiler_document(FORWARD))
    assert conformance.profiler_unusable_reason({"peer": peer, "python": []},
                                                {"peer": None, "python": "exit 1: OutOfMemory"}) is None
    assert conformance.profiler_unusable_reason({"peer": [], "python": peer},
                                                {"peer": "exit 1: CUPTI_ERROR", "python": None}) == "peer: exit 1: CUPTI_ERROR"
    assert conformance.profiler_unusable_reason({"peer": [], "python": []},
                                                {"peer": None, "python": None}) == "peer: no kernels listed"


def test_profiler_command(tmp_path):
    settings = {"cli": "/b/iteragpu", "python": "/v/python3", "pythonpath": "/b/python", "peer": "/s/peer.py"}
    kernel_cell = conformance.kernel_cells()[0]
    argv, environment = conformance.profiler_command("peer", kernel_cell, "/w/k.json", "/w/t.json", "/w/p.json",
                                                     settings, environ={})
    assert argv[:3] == ["/v/python3", "-c", conformance.PROFILE_KERNELS_CODE]
    spec = json.loads(argv[3])
    assert spec["tool"] == "peer" and (spec["kernels"], spec["trace"]) == ("/w/k.json", "/w/t.json")
    assert spec["argv"][0] == "/s/peer.py" and spec["argv"][-2:] == ["--output", "/w/p.json"]
    assert spec["argv"][spec["argv"].index("--repeats") + 1] == "1"
    argv, environment = conformance.profiler_command("python", kernel_cell, "/w/k.json", "/w/t.json", "/w/p.json",
                                                     settings, environ={})
    spec = json.loads(argv[3])
    assert spec["request"]["output"] is None and (spec["request"]["warmup"], spec["request"]["repeats"]) == (0, 1)
    assert environment["PYTHONPATH"] == "/b/python"
    code = conformance.PROFILE_KERNELS_CODE
    assert code.index("import torch") < code.index("import iteragpu") < code.index("with profile(")
    assert "activities=[ProfilerActivity.CUDA]" in code and "in_process=True, progress=False" in code
    with pytest.raises(ValueError):
        conformance.profiler_command("cli", kernel_cell, "k", "t", "o", settings)


@pytest.fixture
def scripted_processes(tmp_path, monkeypatch):
    """run_process replaced: ncu answers `ncu_stdout`; a profiled run writes its kernel list
    (`names[tool]`). Records the calls as (what, tool)."""
    state = {"calls": [], "ncu_stdout": NCU_LIBRARY_NOT_LOADED, "names": {"peer": FORWARD, "python": FORWARD}}

    def run_process(argv, environment, log_path, timeout, cwd):
        if argv[0] == "/fake/ncu":
            tool = "peer" if "/s/peer.py" in argv else "cli"
            state["calls"].append(("ncu", tool))
            return ncu_process(state["ncu_stdout"])
        spec = json.loads(argv[3])
        state["calls"].append(("profile", spec["tool"]))
        with open(spec["kernels"], "w", encoding="utf-8") as output:
            output.write(profiler_document(state["names"][spec["tool"]]))
        return ncu_process("")

    monkeypatch.setattr(conformance, "run_process", run_process)
    state["settings"] = {"cli": "/b/iteragpu", "python": "/v/python3", "pythonpath": "/b/python",
                         "peer": "/s/peer.py", "work_dir": str(tmp_path), "ncu": "/fake/ncu"}
    return state


@pytest.mark.parametrize("ncu_stdout, reason", [
    (NCU_LIBRARY_NOT_LOADED, "peer: Failed to initialize the profiler: LibraryNotLoaded"),
    ("\n".join(NCU_SAMPLE.splitlines()[:10]) + "\n", "peer: no kernels in ncu's output"),
])
def test_run_kernel_cell_falls_back_to_the_profiler(scripted_processes, ncu_stdout, reason):
    scripted_processes["ncu_stdout"] = ncu_stdout
    settings = scripted_processes["settings"]
    first, second = conformance.kernel_cells()
    result = conformance.run_kernel_cell(first, settings)
    # ncu failed for the peer: not tried for the CLI; the peer and Python in-process profiled.
    assert scripted_processes["calls"] == [("ncu", "peer"), ("profile", "peer"), ("profile", "python")]
    assert result["ok"] and result["tools"] == ["peer", "python"]
    assert result["ncu_unusable"].startswith(reason)
    assert result["method"] == f"torch.profiler (ncu unusable: {result['ncu_unusable']})"
    assert result["comparison"]["count"] == 4 and result["gemm"]["python"] == [FORWARD[1], FORWARD[3]]
    assert [run["method"] for run in result["runs"]] == ["ncu", "torch.profiler", "torch.profiler"]
    # The next cell goes straight to the profiler, with the same reason.
    scripted_processes["calls"].clear()
    again = conformance.run_kernel_cell(second, settings)
    assert scripted_processes["calls"] == [("profile", "peer"), ("profile", "python")]
    assert again["method"] == result["method"]


def test_run_kernel_cell_keeps_ncu_while_it_works(scripted_processes):
    scripted_processes["ncu_stdout"] = NCU_SAMPLE
    result = conformance.run_kernel_cell(conformance.kernel_cells()[0], scripted_processes["settings"])
    assert scripted_processes["calls"] == [("ncu", "peer"), ("ncu", "cli")]
    assert result["ok"] and result["method"] == "ncu" and result["tools"] == ["peer", "cli"]
    assert result["ncu_unusable"] is None and "ncu_unusable" not in scripted_processes["settings"]


def test_run_kernel_cell_without_ncu_profiles_and_a_difference_fails_even_if_allowed(scripted_processes):
    settings = dict(scripted_processes["settings"], ncu=None, allow_no_ncu=True)
    scripted_processes["names"]["python"] = FORWARD[:3]
    result = conformance.run_kernel_cell(conformance.kernel_cells()[0], settings)
    assert scripted_processes["calls"] == [("profile", "peer"), ("profile", "python")]
    assert not result["ok"] and result["status"] == "failed"
    assert result["method"] == "torch.profiler (ncu unusable: ncu not found)"
    assert result["failures"] == ["torch.profiler: kernel sequences differ at launch 3 (peer 4 kernels, "
                                  "python 3): peer nvjet_sm90_tst_64x8_TNT, python (none)"]


@pytest.mark.parametrize("allow", [False, True])
def test_run_kernel_cell_when_the_profiler_fails_too(scripted_processes, allow):
    settings = dict(scripted_processes["settings"], ncu=None, allow_no_ncu=allow)
    scripted_processes["names"]["peer"] = []
    result = conformance.run_kernel_cell(conformance.kernel_cells()[0], settings)
    why = ("ncu not found, and the torch.profiler fallback failed "
           "(peer: torch.profiler listed no kernels)")
    if allow:
        assert result["ok"] and result["status"] == "skipped" and result["failures"] == []
        assert result["reason"] == why + " (--allow-no-ncu)"
        assert conformance.describe_kernels(result) == "skipped: " + result["reason"]
    else:
        assert not result["ok"] and result["failures"] == ["kernels not checked: " + why]


def kernel_result(method, tools, dtype):
    kernels, _ = conformance.parse_profiler_kernels(profiler_document(FORWARD))
    lists = {tool: kernels for tool in tools}
    result = conformance.evaluate_kernels({"dtype": dtype, "config": "kernels"}, lists,
                                          {tool: None for tool in tools}, other=tools[1])
    result.update(method=method, tools=list(tools), ncu_unusable=None if method == "ncu" else "peer: LibraryNotLoaded")
    return result


def test_kernel_method_labels_in_the_row_and_the_summary():
    under_ncu = kernel_result("ncu", ("peer", "cli"), "float32")
    fallback = kernel_result(conformance.profiler_method("peer: LibraryNotLoaded"), ("peer", "python"), "bfloat16")
    assert fallback["method"] == "torch.profiler (ncu unusable: peer: LibraryNotLoaded)"
    assert conformance.describe_kernels(under_ncu) == "same 4 kernels (ncu: peer = cli)"
    assert conformance.describe_kernels(fallback) == "same 4 kernels (torch.profiler: peer = python)"
    assert conformance.describe_kernel_method(under_ncu) is None
    note = conformance.describe_kernel_method(fallback)
    assert note.startswith("method: torch.profiler (ncu unusable: peer: LibraryNotLoaded); ")
    assert "in-process Python measurement stands for iteragpu's backend (same plugin, same code)" in note
    # A summary from before the fallback (no "method"): ncu.
    legacy = {key: value for key, value in under_ncu.items() if key not in ("method", "tools")}
    assert conformance.describe_kernels(legacy) == "same 4 kernels (ncu: peer = cli)"

    summary = conformance.build_summary([], [under_ncu, fallback], {"rounds": 3, "ncu": "/usr/local/cuda/bin/ncu"},
                                        10.0, 9.0)
    assert summary["result"] == "PASS"
    assert summary["kernel_methods"] == {"float32:kernels": "ncu",
                                         "bfloat16:kernels": "torch.profiler (ncu unusable: peer: LibraryNotLoaded)"}
    assert summary["ncu_unusable"] == "peer: LibraryNotLoaded"
    table = conformance.render_table(summary).splitlines()
    row = next(index for index, line in enumerate(table) if "torch.profiler: peer = python" in line)
    assert table[row].startswith("bfloat16  kernels")
    assert table[row + 1].strip() == note  # the method, right under its row
    assert sum("(ncu: peer = cli)" in line for line in table) == 1
    gemm = [line.split()[:3] for line in table if line.startswith("  ") and line.split()[0].endswith(":kernels")]
    assert gemm == [["float32:kernels", "peer", "ncu"], ["float32:kernels", "cli", "ncu"],
                    ["bfloat16:kernels", "peer", "torch.profiler"], ["bfloat16:kernels", "python", "torch.profiler"]]


# --- Matrix and options -------------------------------------------------------------------------

def test_the_matrix():
    cells, kernels = conformance.select_cells([])
    keys = [conformance.cell_key(c) for c in cells]
    assert len(keys) == 12 and len(set(keys)) == 12
    by_key = {conformance.cell_key(c): c for c in cells}
    assert by_key["float16:gpu-bound"]["width"] == 4096 and by_key["float32:gpu-bound"]["width"] == 2048
    assert by_key["bfloat16:odd"]["hidden"] == 1001
    assert [c["gpu_timed"] for c in cells].count(True) == 3
    assert [conformance.cell_key(c) for c in kernels] == ["float32:kernels", "bfloat16:kernels"]
    assert conformance.estimate_seconds(cells, kernels, 3, True) <= conformance.BUDGET_SECONDS
    # Without ncu, torch.profiler's runs; with ncu unusable, at worst the peer's ncu run on top.
    assert conformance.estimate_seconds(cells, kernels, 3, False) + conformance.NCU_PROCESS_SECONDS["peer"] \
        <= conformance.BUDGET_SECONDS


def test_only_selects_cells_and_refuses_unknown_ones():
    cells, kernels = conformance.select_cells(["float16:gpu-bound", "float32:kernels"])
    assert [conformance.cell_key(c) for c in cells + kernels] == ["float16:gpu-bound", "float32:kernels"]
    cells, kernels = conformance.select_cells(["*:odd"])
    assert [c["dtype"] for c in cells] == ["float32", "float16", "bfloat16"] and kernels == []
    for bad in ("float64:odd", "float32:huge", "float16:kernels"):
        with pytest.raises(conformance.UsageError):
            conformance.select_cells([bad])


def test_tool_commands(tmp_path):
    settings = {"cli": "/b/iteragpu", "python": "/v/python3", "pythonpath": "/b/python", "peer": "/s/peer.py"}
    odd = dict(cell(), width=333, hidden=1001, dtype="bfloat16")
    argv, _ = conformance.tool_command("cli", odd, "/w/o.json", settings, environ={})
    assert argv[:4] == ["/b/iteragpu", "measure", "--device", "cuda:0"]
    assert argv[argv.index("--hidden") + 1] == "1001" and argv[-2:] == ["--output", "/w/o.json"]
    argv, _ = conformance.tool_command("peer", cell(), "/w/p.json", settings, environ={})
    assert argv[:2] == ["/v/python3", "/s/peer.py"] and "--hidden" not in argv  # 0: 4 x width
    argv, environment = conformance.tool_command("python", odd, "/w/y.json", settings,
                                                 environ={"PYTHONPATH": "/elsewhere"})
    assert argv[:2] == ["/v/python3", "-c"] and "in_process=True" in argv[2]
    assert json.loads(argv[3])["hidden"] == 1001 and json.loads(argv[3])["output"] == "/w/y.json"
    assert environment["PYTHONPATH"] == "/b/python" + os.pathsep + "/elsewhere"


def test_python_request_keywords_are_those_of_the_module():
    """The keywords gpu_conformance passes to iteragpu.measure() exist in the real binding."""
    iteragpu = pytest.importorskip("iteragpu")
    import inspect

    request = iteragpu.MeasureRequest(**conformance.python_request(dict(cell(), hidden=1001), "x.json"))
    assert (request.hidden, request.output, request.device) == ("1001", "x.json", "cuda:0")
    default = iteragpu.MeasureRequest(**conformance.python_request(cell(), None))  # hidden 0: 4 x width
    assert iteragpu.MeasureConfiguration.parse(default).hidden == 4 * 64
    parameters = inspect.signature(iteragpu.PhaseMeasurer.measure).parameters
    assert "in_process" in parameters and "progress" in parameters


# --- The whole script against fake tools --------------------------------------------------------

FAKE_TOOL = '''
import json, os, sys
MiB = 1 << 20

def document(tool, request):
    """Counters from the shape, the same for every tool unless FAKE_PERTURB says otherwise."""
    width, hidden = int(request["width"]), int(request.get("hidden") or 0) or 4 * int(request["width"])
    warmup, repeats = int(request["warmup"]), int(request["repeats"])
    phases = [("model_load", None), ("inputs", None), ("cold_forward", None)]
    phases += [("warmup", None)] if warmup else []
    phases += [("warm_forward", r) for r in range(1, repeats + 1)]
    rows, allocated = [], 0
    for index, (phase, repeat) in enumerate(phases):
        end = allocated + 512 * (width + hidden) * (index + 1)
        row = {"phase": phase, "repeat": repeat, "forwards": 1, "host_seconds": 0.0081,
               "gpu_event_seconds": 0.008 * float(os.environ.get("FAKE_GPU_SCALE_" + tool, "1")),
               "allocated_bytes": {"baseline": allocated, "end": end},
               "reserved_bytes": {"baseline": 2 * MiB, "end": 4 * MiB},
               "peak_allocated_bytes": end + 512, "peak_reserved_bytes": 4 * MiB}
        allocated = end
        if tool != "peer" and os.environ.get("FAKE_NO_PREDICTION") != tool:
            row["predicted"] = {k: json.loads(json.dumps(row[k])) for k in
                                ("allocated_bytes", "reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes")}
            row["difference"] = {"allocated_bytes": {"baseline": 0, "end": 0},
                                 "reserved_bytes": {"baseline": 0, "end": 0},
                                 "peak_allocated_bytes": 0, "peak_reserved_bytes": 0}
        rows.append(row)
    perturb = os.environ.get("FAKE_PERTURB", "")  # tool:phase:member:delta
    if perturb.startswith(tool + ":"):
        _, phase, member, delta = perturb.split(":")
        for row in rows:
            if row["phase"] == phase:
                row[member]["end"] += int(delta)
    return {"phases": rows}

KERNELS = ["void at::native::normal_kernel<float>(int, T)", "nvjet_sm90_tst_64x8_TNT",
           "void at::native::vectorized_elementwise_kernel<4, Gelu>(int, T2, T3)", "nvjet_sm90_tst_64x8_TNT"]

def write(tool, request):
    if request.get("output"):
        with open(request["output"], "x") as output:
            json.dump(document(tool, request), output)
    torch = sys.modules.get("torch")  # the fake torch, under the profiler: "launch" the kernels
    if torch is not None:
        names = list(KERNELS)
        if os.environ.get("FAKE_PROFILER_DIFFER") == tool:
            names[2] = "void at::native::vectorized_elementwise_kernel<4, Tanh>(int, T2, T3)"
        for name in names:
            torch.launch(name)

def main(tool, argv):
    if argv and argv[0] == "measure":
        argv = argv[1:]
    request = dict(zip([a[2:] for a in argv[0::2]], argv[1::2]))
    write(tool, request)
'''

FAKE_PACKAGE = '''
import fake_tool

def measure(in_process=False, progress=None, **request):
    if not in_process or progress is not False:
        raise SystemExit("expected in_process=True, progress=False")
    fake_tool.write("python", request)
'''

FAKE_NCU = '''
import os, sys
peer = any(a.endswith("fake_peer.py") for a in sys.argv)
if os.environ.get("FAKE_NCU_CALLS"):
    with open(os.environ["FAKE_NCU_CALLS"], "a") as calls:
        calls.write(("peer" if peer else "cli") + "\\n")
if os.environ.get("FAKE_NCU_ERROR"):  # as on gVisor: the program runs, nothing is profiled
    print("==PROF== Connected to process 77 (/usr/bin/python3)")
    print("==ERROR== Failed to initialize the profiler: LibraryNotLoaded")
    print("Measurement on cuda:0, some, text")
    print("==PROF== Disconnected from process 77")
    sys.exit(1)
names = ["void at::native::normal_kernel<float>(int, T)", "nvjet_sm90_tst_64x8_TNT",
         "void at::native::vectorized_elementwise_kernel<4, Gelu>(int, T2, T3)", "nvjet_sm90_tst_64x8_TNT"]
if not peer and os.environ.get("FAKE_NCU_DIFFER"):
    names[3] = "sm90_xmma_gemm_f32f32_tn_n_tilesize64x64x8"
print("==PROF== Connected to process 77 (/usr/bin/python3)")
print("Measurement on cuda:0, some, text")
print("==PROF== Disconnected from process 77")
print('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Metric Name","Metric Unit","Metric Value"')
for index, name in enumerate(names):
    print(f'"{index}","77","python3","localhost","{name}","1","7","gpu__time_duration.sum","nsecond","1,024"')
'''


# A fake torch for the torch.profiler fallback: the real PROFILE_KERNELS_CODE runs with it.
FAKE_TORCH = '''
__version__ = "0.0+fake"
launched = []

def launch(name):
    launched.append(name)

class cuda:
    @staticmethod
    def init():
        pass
'''

FAKE_TORCH_PROFILER = '''
import json, os, types
import torch

class ProfilerActivity:
    CPU, CUDA = "CPU", "CUDA"

class profile:
    def __init__(self, activities=()):
        assert list(activities) == [ProfilerActivity.CUDA], activities

    def __enter__(self):
        if os.environ.get("FAKE_PROFILER_BROKEN"):
            raise RuntimeError("CUPTI_ERROR_NOT_INITIALIZED")
        del torch.launched[:]
        return self

    def __exit__(self, *exception):
        self.launched = list(torch.launched)
        return False

    def export_chrome_trace(self, path):
        if os.environ.get("FAKE_TRACE_BROKEN"):
            raise RuntimeError("no trace")
        events = [{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "ts": 1.0, "dur": 1.0},
                  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 2.0, "dur": 1.0},
                  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 3.0, "dur": 1.0},
                  {"ph": "s", "cat": "ac2g", "name": "ac2g", "ts": 3.0}]
        events += [{"ph": "X", "cat": "kernel", "name": name, "ts": 10.0 + index, "dur": 0.5}
                   for index, name in enumerate(self.launched)]
        events.reverse()  # a trace's order is not the launch order
        with open(path, "w") as trace:
            json.dump({"traceEvents": events}, trace)

    def events(self):
        cuda = types.SimpleNamespace(name="CUDA")
        found = [types.SimpleNamespace(name="Memcpy HtoD (Pageable -> Device)", device_type=cuda,
                                       time_range=types.SimpleNamespace(start=1.0, end=2.0))]
        found += [types.SimpleNamespace(name=name, device_type=cuda,
                                        time_range=types.SimpleNamespace(start=10.0 + index, end=10.5 + index))
                  for index, name in enumerate(self.launched)]
        return list(reversed(found))
'''


def executable(path, body):
    path.write_text(f"#!{sys.executable}\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def fakes(tmp_path):
    package = tmp_path / "package"
    (package / "iteragpu").mkdir(parents=True)
    (package / "fake_tool.py").write_text(FAKE_TOOL)
    (package / "iteragpu" / "__init__.py").write_text(FAKE_PACKAGE)
    prelude = f"import sys; sys.path.insert(0, {str(package)!r}); import fake_tool\n"
    torch_path = tmp_path / "fake-torch"
    (torch_path / "torch").mkdir(parents=True)
    (torch_path / "torch" / "__init__.py").write_text(FAKE_TORCH)
    (torch_path / "torch" / "profiler.py").write_text(FAKE_TORCH_PROFILER)
    return {
        "cli": executable(tmp_path / "iteragpu", prelude + 'fake_tool.main("cli", sys.argv[1:])\n'),
        "peer": executable(tmp_path / "fake_peer.py", prelude + 'fake_tool.main("peer", sys.argv[1:])\n'),
        "ncu": executable(tmp_path / "ncu", FAKE_NCU),
        "pythonpath": str(package),
        "torch_path": str(torch_path),  # on PYTHONPATH only where a test wants the fallback to work
        "tmp": tmp_path,
    }


def run_script(fakes, *options, **environment):
    summary = fakes["tmp"] / "summary.json"
    argv = [sys.executable, SCRIPT, "--cli", fakes["cli"], "--python", sys.executable,
            "--pythonpath", fakes["pythonpath"], "--peer", fakes["peer"], "--work-dir",
            str(fakes["tmp"] / "work"), "--summary", str(summary), "--rounds", "2", "--settle-seconds", "0", *options]
    env = {key: value for key, value in os.environ.items() if not key.startswith("FAKE_")}
    env.update(environment)
    completed = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    data = json.loads(summary.read_text()) if summary.exists() else None
    return completed, data


QUICK = ("--only", "float32:seed-small", "--only", "bfloat16:gpu-bound", "--only", "float32:kernels")


def test_script_passes_with_conforming_tools(fakes):
    completed, summary = run_script(fakes, *QUICK, "--ncu", fakes["ncu"])
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.rstrip().endswith("conformance: PASS")
    assert summary["result"] == "PASS" and summary["mismatches"] == 0
    assert "36/36" in summary["table"] and "same 4 kernels (ncu: peer = cli)" in summary["table"]
    assert summary["kernel_methods"] == {"float32:kernels": "ncu"} and summary["ncu_unusable"] is None
    timed = next(cell for cell in summary["cells"] if cell["cell"]["config"] == "gpu-bound")
    assert timed["gpu_time"]["samples_count"] == {"peer": 60, "cli": 60, "python": 60}  # 30 × 2 rounds
    assert [run["tool"] for run in timed["runs"]] == ["peer", "cli", "python", "cli", "python", "peer"]
    assert "nvjet_sm90_tst_64x8_TNT" in completed.stdout  # the forward's GEMMs are printed
    completed, again = run_script(fakes, "--print-summary", str(fakes["tmp"] / "summary.json"))
    assert completed.returncode == 0 and completed.stdout.strip() == summary["table"].strip()


@pytest.mark.parametrize("environment, expected", [
    ({"FAKE_PERTURB": "cli:cold_forward:reserved_bytes:1"}, "cli: cold_forward reserved_bytes.end +1"),
    ({"FAKE_NO_PREDICTION": "python"}, 'python: no "predicted" in 6 of 6 phase rows'),
    ({"FAKE_GPU_SCALE_python": "1.04"}, "python/peer back-to-back GPU median ratio 1.040 outside [0.97, 1.03]"),
    ({"FAKE_NCU_DIFFER": "1"}, "kernel sequences differ at launch 3"),
])
def test_script_fails_and_names_the_mismatch(fakes, environment, expected):
    completed, summary = run_script(fakes, *QUICK, "--ncu", fakes["ncu"], **environment)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert summary["result"] == "FAIL" and summary["mismatches"] == len(summary["failures"]) >= 1
    assert completed.stdout.rstrip().endswith(f"conformance: FAIL ({summary['mismatches']} mismatches)")
    assert any(expected in failure for failure in summary["failures"]), summary["failures"]


def test_script_without_ncu_nor_a_working_profiler(fakes, monkeypatch):
    """No ncu, and no torch for the fallback (the peer's profiled run cannot import it): the
    check fails, or is skipped with --allow-no-ncu."""
    only = ("--only", "float32:kernels")
    # No ncu on PATH or in the usual places here; --ncu is not given.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))
    if conformance.find_ncu() is not None:
        pytest.skip("this machine has ncu installed")
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("this interpreter has torch: the fallback would run for real")
    completed, summary = run_script(fakes, *only, PATH=os.path.dirname(sys.executable))
    assert completed.returncode == 1, completed.stdout + completed.stderr
    [failure] = summary["failures"]
    assert failure.startswith("float32:kernels: kernels not checked: ncu not found, and the torch.profiler "
                              "fallback failed (peer: exit 1: ModuleNotFoundError: No module named 'torch'")
    completed, summary = run_script(fakes, *only, "--allow-no-ncu", PATH=os.path.dirname(sys.executable))
    assert completed.returncode == 0 and "skipped: ncu not found" in summary["table"]
    assert summary["kernel_checks"][0]["status"] == "skipped"
    assert summary["kernel_methods"] == {"float32:kernels": "torch.profiler (ncu unusable: ncu not found)"}



def test_the_profiler_snippet_lists_kernels_in_start_order(fakes, tmp_path):
    """PROFILE_KERNELS_CODE itself, with the fake torch: the peer run as __main__, the kernels
    of the Chrome trace in start order, memcpy and memset counted apart."""
    settings = {"cli": fakes["cli"], "python": sys.executable, "pythonpath": fakes["pythonpath"],
                "peer": fakes["peer"]}
    environ = dict(os.environ, PYTHONPATH=fakes["torch_path"])
    kernel_cell = conformance.kernel_cells()[0]
    expected = ["void at::native::normal_kernel<float>(int, T)", "nvjet_sm90_tst_64x8_TNT",
                "void at::native::vectorized_elementwise_kernel<4, Gelu>(int, T2, T3)", "nvjet_sm90_tst_64x8_TNT"]
    for tool, trace_broken in (("peer", ""), ("python", ""), ("python", "1")):
        kernels_path, trace_path = tmp_path / f"{tool}{trace_broken}.k.json", tmp_path / f"{tool}{trace_broken}.t.json"
        output = tmp_path / f"{tool}{trace_broken}.out.json"
        argv, environment = conformance.profiler_command(tool, kernel_cell, str(kernels_path), str(trace_path),
                                                         str(output), settings, environ=environ)
        environment["FAKE_TRACE_BROKEN"] = trace_broken
        completed = subprocess.run(argv, env=environment, capture_output=True, text=True, timeout=60)
        assert completed.returncode == 0, completed.stderr
        document = json.loads(kernels_path.read_text())
        kernels, error = conformance.parse_profiler_kernels(kernels_path.read_text())
        assert error is None and [kernel["name"] for kernel in kernels] == expected
        assert document["tool"] == tool and document["torch"] == "0.0+fake"
        if trace_broken:
            assert document["source"] == "profiler events" and document["skipped"] == {"gpu_memcpy": 1}
            assert document["notes"][0].startswith("chrome trace unreadable: RuntimeError")
        else:
            assert document["source"] == "chrome trace"
            assert document["skipped"] == {"gpu_memcpy": 1, "gpu_memset": 1}
        assert output.exists() is (tool == "peer")  # the peer writes its file as always; Python none


def test_the_profiler_snippet_fails_when_the_peer_fails(fakes, tmp_path):
    settings = {"cli": fakes["cli"], "python": sys.executable, "pythonpath": fakes["pythonpath"],
                "peer": str(tmp_path / "failing_peer.py")}
    (tmp_path / "failing_peer.py").write_text("import sys\nsys.exit('measure_peer: no GPU runtime available')\n")
    argv, environment = conformance.profiler_command(
        "peer", conformance.kernel_cells()[0], str(tmp_path / "k.json"), str(tmp_path / "t.json"),
        str(tmp_path / "o.json"), settings, environ=dict(os.environ, PYTHONPATH=fakes["torch_path"]))
    completed = subprocess.run(argv, env=environment, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 1 and "no GPU runtime available" in completed.stderr
    assert not (tmp_path / "k.json").exists()


def test_script_falls_back_to_the_profiler_when_ncu_reports_an_error(fakes):
    calls = fakes["tmp"] / "ncu-calls.txt"
    completed, summary = run_script(fakes, "--only", "*:kernels", "--ncu", fakes["ncu"],
                                    PYTHONPATH=fakes["torch_path"], FAKE_NCU_ERROR="1", FAKE_NCU_CALLS=str(calls))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert summary["result"] == "PASS"
    assert calls.read_text().split() == ["peer"]  # once: not for the CLI, not for the second cell
    method = "torch.profiler (ncu unusable: peer: Failed to initialize the profiler: LibraryNotLoaded)"
    assert summary["kernel_methods"] == {"float32:kernels": method, "bfloat16:kernels": method}
    assert summary["ncu_unusable"] == "peer: Failed to initialize the profiler: LibraryNotLoaded"
    assert summary["table"].count("same 4 kernels (torch.profiler: peer = python)") == 2
    assert summary["table"].count("method: " + method + "; the in-process Python measurement stands for "
                                  "iteragpu's backend") == 2
    assert all(check["tools"] == ["peer", "python"] for check in summary["kernel_checks"])
    assert "torch.profiler instead" in completed.stdout


def test_script_profiler_fallback_names_a_difference(fakes):
    completed, summary = run_script(fakes, "--only", "float32:kernels", "--ncu", fakes["ncu"], "--allow-no-ncu",
                                    PYTHONPATH=fakes["torch_path"], FAKE_NCU_ERROR="1", FAKE_PROFILER_DIFFER="python")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    [failure] = summary["failures"]
    assert failure.startswith("float32:kernels: torch.profiler: kernel sequences differ at launch 2 "
                              "(peer 4 kernels, python 4)")


def test_script_without_ncu_uses_the_profiler(fakes, monkeypatch):
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))
    if conformance.find_ncu() is not None:
        pytest.skip("this machine has ncu installed")
    completed, summary = run_script(fakes, "--only", "float32:kernels", PATH=os.path.dirname(sys.executable),
                                    PYTHONPATH=fakes["torch_path"])
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert summary["kernel_methods"] == {"float32:kernels": "torch.profiler (ncu unusable: ncu not found)"}
    assert "not found, torch.profiler instead" in completed.stdout
    # The profiler broken as well: now --allow-no-ncu decides.
    completed, summary = run_script(fakes, "--only", "float32:kernels", PATH=os.path.dirname(sys.executable),
                                    PYTHONPATH=fakes["torch_path"], FAKE_PROFILER_BROKEN="1")
    assert completed.returncode == 1
    assert "CUPTI_ERROR_NOT_INITIALIZED" in summary["failures"][0]
    completed, summary = run_script(fakes, "--only", "float32:kernels", "--allow-no-ncu",
                                    PATH=os.path.dirname(sys.executable), PYTHONPATH=fakes["torch_path"],
                                    FAKE_PROFILER_BROKEN="1")
    assert completed.returncode == 0 and summary["kernel_checks"][0]["status"] == "skipped"


@pytest.mark.parametrize("options", [
    (),                                   # no --cli
    ("--only", "float64:odd"),
    ("--rounds", "0"),
    ("--pythonpath", "/no/such/folder"),
])
def test_script_usage_errors_exit_2(fakes, options):
    argv = [sys.executable, SCRIPT] + ([] if not options else ["--cli", fakes["cli"]]) + list(options)
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2, completed.stderr
    assert "error" in completed.stderr
