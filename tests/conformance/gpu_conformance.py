#!/usr/bin/env python3
"""Conformance of iteragpu's measurements with the same protocol in PyTorch (measure_peer.py).

For every cell of the matrix below (dtype x configuration) three fresh processes measure the
same thing: the PyTorch peer (tests/bench/measure_peer.py, the reference), the CLI
(`iteragpu measure`) and the Python module in-process in its own interpreter
(`iteragpu.measure(..., in_process=True)`). Checked:

- counters: every allocator counter of every phase row (allocated and reserved at baseline
  and end, peak allocated, peak reserved) equal byte for byte across the three;
- prediction: in the CLI's and Python's files each phase row carries "predicted" (same shape
  as the measured counters) and "difference" (measured - predicted); every counter must be
  predicted exactly (a missing "predicted" is a failure);
- GPU time (GPU-bound cells): interleaved rounds, the first tool rotating; warm_forward
  gpu_event_seconds pooled per tool over the rounds; median CLI / peer and Python / peer must
  lie within [0.97, 1.03] (host-time medians printed for information);
- kernels: under Nsight Compute (ncu) on a reduced configuration, the peer and the CLI must
  launch the same sequence of kernels; the forward's GEMM kernel names are printed. Where ncu
  is not found or unusable (it reports an ==ERROR== line, as on gVisor's "Failed to initialize
  the profiler: LibraryNotLoaded", or lists no kernels), PyTorch's profiler (torch.profiler,
  CUDA activity: Kineto/CUPTI) lists the kernels instead, in fresh --python processes: the
  peer's protocol, and iteragpu.measure(..., in_process=True) after `import torch` (the same
  backend plugin and code as the CLI, which, a separate C++ process, cannot be profiled so).
  The method is named in the table row and the summary.

Prints one table at the end, "conformance: PASS" or "conformance: FAIL (n mismatches)", and
writes every figure to --summary. Exit 0 on pass, 1 on any mismatch, 2 on usage errors.
The standard library only (the tools it runs import torch). Used by scripts/gpu-check.

Time budget (about 4 minutes on an H200): process start-up dominates (the torch peer ~3 s,
the CLI ~1 s, the Python module ~2 s), so the matrix is 12 cells run once (GPU-bound cells
--rounds times) plus two ncu runs per kernel check (or two profiled runs of about 10 s
when ncu is unusable: once ncu failed, later checks go straight to torch.profiler); the
estimate is printed first, the elapsed time last.

    python3 tests/conformance/gpu_conformance.py --cli build/bin/iteragpu \\
        --python "$(command -v python3)" --pythonpath build/python \\
        --work-dir /tmp/conformance --summary conformance.json
    python3 tests/conformance/gpu_conformance.py ... --only float16:gpu-bound --only float32:kernels
    python3 tests/conformance/gpu_conformance.py --print-summary conformance.json
"""

import argparse
import csv
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
PEER = os.path.join(SOURCE_DIR, "tests", "bench", "measure_peer.py")

# --- The matrix -------------------------------------------------------------------------------
DTYPES = ("float32", "float16", "bfloat16")
# One line per configuration and the dtypes it applies to. hidden 0 = 4 x width (the tools'
# default, then not passed). gpu_timed: GPU time compared, over --rounds interleaved rounds.
MATRIX_COLUMNS = ("config", "dtypes", "batch", "context", "width", "hidden", "warmup", "repeats",
                  "gpu_timed")
MATRIX = [
    # config      dtypes                  batch context width hidden warmup repeats gpu_timed
    ("seed-small", DTYPES,                    1,    16,    64,    0,    1,     2,    False),
    ("seed-large", DTYPES,                    2,   128,  1024,    0,    3,     5,    False),
    # GPU-bound: at least 5 ms per forward on an H200; float32 GEMMs are ~15x slower, so a
    # smaller shape (about 8 ms in float32, 6 ms in float16/bfloat16).
    ("gpu-bound", ("float16", "bfloat16"),    8,  2048,  4096,    0,  200,    30,    True),
    ("gpu-bound", ("float32",),               8,  1024,  2048,    0,  200,    30,    True),
    ("odd",        DTYPES,                    3,    17,   333, 1001,    1,     3,    False),
]
# The kernel check under Nsight Compute (ncu replays each kernel: keep it small).
KERNEL_MATRIX = [
    # config    dtypes                   batch context width hidden warmup repeats
    ("kernels", ("float32", "bfloat16"),     2,    16,    64,    0,    0,     1),
]
KERNEL_TOOLS = ("peer", "cli")  # under ncu
PROFILER_TOOLS = ("peer", "python")  # under torch.profiler, where ncu is unusable
TOOLS = ("peer", "cli", "python")  # the peer is the reference
GPU_RATIO_BOUNDS = (0.97, 1.03)
GPU_BOUND_SECONDS = 0.005  # a GPU-bound cell's forward should take at least this (noted, not checked)
# Half-precision GEMMs at this size run at the H200's power limit, so their speed follows the
# GPU's thermal state: a process that starts after a longer idle (the peer spends ~4 s
# importing torch, the CLI ~0.2 s) runs its first forwards up to 8 % faster. Seen on the
# H200 (2026-12-03, warmup 3): the peer's warm forwards went from 6.2 ms to 6.9 ms within
# one process, and the medians of the faster-starting tools were 3-5 % slower. So each
# timed process starts after the same idle pause and times its forwards only after 200
# warm-up forwards (~1.3 s of GEMMs), once the clocks have settled.
GPU_SETTLE_SECONDS = 2.0
DEFAULT_ROUNDS = 3
# Seconds per process on the H200 (start-up dominates), for the printed estimate only.
PROCESS_SECONDS = {"peer": 3.5, "cli": 1.2, "python": 2.0}
GPU_BOUND_EXTRA_SECONDS = 3.5  # per process: the settle pause and 230 forwards of ~6-11 ms
NCU_PROCESS_SECONDS = {"peer": 25.0, "cli": 12.0}
# torch import, CUPTI, the trace: 9.0-11.6 s per profiled run on the H200 (2026-12-04).
PROFILER_PROCESS_SECONDS = {"peer": 12.0, "python": 12.0}
BUDGET_SECONDS = 330
MEASURE_TIMEOUT_SECONDS = 180
NCU_TIMEOUT_SECONDS = 300
NCU_METRIC = "gpu__time_duration.sum"
# Substrings of a kernel's base name that mark a GEMM (cuBLAS, cuBLASLt, CUTLASS, nvjet).
GEMM_MARKERS = ("gemm", "GEMM", "sm90", "cutlass", "Kernel", "nvjet")

# The allocator counters of one phase row: (name, member, sub-member or None).
COUNTERS = (
    ("allocated_bytes.baseline", "allocated_bytes", "baseline"),
    ("allocated_bytes.end", "allocated_bytes", "end"),
    ("reserved_bytes.baseline", "reserved_bytes", "baseline"),
    ("reserved_bytes.end", "reserved_bytes", "end"),
    ("peak_allocated_bytes", "peak_allocated_bytes", None),
    ("peak_reserved_bytes", "peak_reserved_bytes", None),
)

PYTHON_MEASURE_CODE = (
    "import json, sys\n"
    "import iteragpu\n"
    "iteragpu.measure(in_process=True, progress=False, **json.loads(sys.argv[1]))\n"
)

# The kernel check's fallback: one tool's run of the reduced configuration under
# torch.profiler (CUDA activity only), in a fresh --python process. argv[1] is JSON: {tool,
# kernels (the file to write), trace (the profiler's Chrome trace), argv (peer: the script and
# its arguments, run as __main__) or request (python: iteragpu.measure's keywords)}. torch is
# imported first, so that the process's LibTorch is torch's own, the one the iteragpu backend
# plugin is built against. Writes PROFILER_SCHEMA JSON: the kernels in start order (events of
# the Chrome trace with "cat": "kernel"; memcpy and memset are counted in "skipped", not
# listed; the profiler's CUDA events, Memcpy/Memset names left out, where the trace is
# unreadable or lists none).
PROFILER_SCHEMA = "iteragpu.conformance-kernels"
PROFILE_KERNELS_CODE = r'''
import json, os, runpy, sys
import torch  # first
from torch.profiler import ProfilerActivity, profile

spec = json.loads(sys.argv[1])
if spec["tool"] == "python":
    import iteragpu
torch.cuda.init()
status = 0
with profile(activities=[ProfilerActivity.CUDA]) as profiler:
    if spec["tool"] == "peer":
        sys.argv = list(spec["argv"])
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as stop:
            status = stop.code
    else:
        iteragpu.measure(in_process=True, progress=False, **spec["request"])
if status not in (0, None):
    sys.exit(status)
kernels, skipped, source, notes = [], {}, "chrome trace", []
try:
    profiler.export_chrome_trace(spec["trace"])
    with open(spec["trace"], encoding="utf-8") as trace_file:
        trace = json.load(trace_file)
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    for index, event in enumerate(events):
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        category = str(event.get("cat", "")).lower()
        if category == "kernel":
            kernels.append((float(event.get("ts", 0.0)), index, str(event.get("name", "")),
                            float(event.get("dur", 0.0))))
        elif category in ("gpu_memcpy", "gpu_memset"):
            skipped[category] = skipped.get(category, 0) + 1
except Exception as error:
    notes.append(f"chrome trace unreadable: {type(error).__name__}: {error}")
if not kernels:
    source, skipped = "profiler events", {}
    for index, event in enumerate(profiler.events()):
        device = getattr(event.device_type, "name", str(event.device_type))
        if not str(device).upper().endswith("CUDA"):
            continue
        if event.name.startswith(("Memcpy", "Memset")):
            key = "gpu_" + event.name[:6].lower()
            skipped[key] = skipped.get(key, 0) + 1
            continue
        kernels.append((float(event.time_range.start), index, event.name,
                        float(event.time_range.end - event.time_range.start)))
kernels.sort()
with open(spec["kernels"], "w", encoding="utf-8") as output:
    json.dump({"schema": "iteragpu.conformance-kernels", "tool": spec["tool"],
               "method": "torch.profiler", "source": source, "notes": notes,
               "torch": torch.__version__, "skipped": skipped,
               "kernels": [{"name": name, "start_us": start, "duration_us": duration}
                           for start, _, name, duration in kernels]}, output, indent=1)
'''


class UsageError(Exception):
    """A bad option value: exit 2."""


# --- The cells --------------------------------------------------------------------------------

def matrix_cells():
    """Every measurement cell of MATRIX, in order (dtype-major), as dicts."""
    cells = []
    for dtype in DTYPES:
        for config, dtypes, batch, context, width, hidden, warmup, repeats, gpu_timed in MATRIX:
            if dtype in dtypes:
                cells.append({"kind": "measure", "dtype": dtype, "config": config, "batch": batch,
                              "context": context, "width": width, "hidden": hidden,
                              "warmup": warmup, "repeats": repeats, "gpu_timed": gpu_timed})
    return cells


def kernel_cells():
    cells = []
    for config, dtypes, batch, context, width, hidden, warmup, repeats in KERNEL_MATRIX:
        for dtype in dtypes:
            cells.append({"kind": "kernels", "dtype": dtype, "config": config, "batch": batch,
                          "context": context, "width": width, "hidden": hidden,
                          "warmup": warmup, "repeats": repeats, "gpu_timed": False})
    return cells


def cell_key(cell):
    return f"{cell['dtype']}:{cell['config']}"


def select_cells(only):
    """The cells selected by --only values ("dtype:config"; either side may be "*", and a
    bare "dtype" or ":config" means every cell of it). Raises UsageError for a malformed
    value or one that selects nothing. Returns (measure cells, kernel cells)."""
    measure, kernels = matrix_cells(), kernel_cells()
    if not only:
        return measure, kernels
    every = measure + kernels
    chosen = set()
    for value in only:
        dtype, _, config = value.partition(":")
        dtype, config = dtype.strip() or "*", config.strip() or "*"
        known_dtypes = {cell["dtype"] for cell in every}
        known_configs = {cell["config"] for cell in every}
        if dtype != "*" and dtype not in known_dtypes:
            raise UsageError(f"--only {value}: unknown dtype {dtype!r} (one of {', '.join(DTYPES)})")
        if config != "*" and config not in known_configs:
            raise UsageError(f"--only {value}: unknown configuration {config!r} (one of "
                             f"{', '.join(sorted(known_configs))})")
        matched = [cell_key(cell) for cell in every
                   if dtype in ("*", cell["dtype"]) and config in ("*", cell["config"])]
        if not matched:
            raise UsageError(f"--only {value}: no such cell in the matrix")
        chosen.update(matched)
    return ([cell for cell in measure if cell_key(cell) in chosen],
            [cell for cell in kernels if cell_key(cell) in chosen])


def rounds_of(cell, rounds):
    return rounds if cell["gpu_timed"] else 1


def tool_order(round_index):
    """The tools in the order they run in a round: the first one rotates, so drift of the
    machine favours none."""
    shift = round_index % len(TOOLS)
    return TOOLS[shift:] + TOOLS[:shift]


def estimate_seconds(cells, kernels, rounds, ncu_found):
    """Seconds the run should take on an H200 (start-up estimates, PROCESS_SECONDS); the
    kernel checks under ncu if found, else under torch.profiler."""
    total = 0.0
    for cell in cells:
        per_round = sum(PROCESS_SECONDS.values())
        if cell["gpu_timed"]:
            per_round += GPU_BOUND_EXTRA_SECONDS * len(TOOLS)
        total += per_round * rounds_of(cell, rounds)
    if ncu_found:
        total += len(kernels) * sum(NCU_PROCESS_SECONDS.values())
    else:
        total += len(kernels) * sum(PROFILER_PROCESS_SECONDS.values())
    return total


# --- Commands ---------------------------------------------------------------------------------

def shape_arguments(cell):
    arguments = ["--batch", str(cell["batch"]), "--context", str(cell["context"]),
                 "--width", str(cell["width"])]
    if cell["hidden"]:
        arguments += ["--hidden", str(cell["hidden"])]
    return arguments + ["--dtype", cell["dtype"], "--warmup", str(cell["warmup"]),
                        "--repeats", str(cell["repeats"])]


def python_request(cell, output):
    """The keywords of iteragpu.measure() for a cell (hidden 0 in the matrix: None, 4 x width)."""
    return {"device": "cuda:0", "batch": cell["batch"], "context": cell["context"],
            "width": cell["width"], "hidden": cell["hidden"] or None, "dtype": cell["dtype"],
            "warmup": cell["warmup"], "repeats": cell["repeats"], "output": output}


def tool_command(tool, cell, output, settings, environ=None):
    """(argv, environment) of one measurement by `tool` writing `output`. settings holds
    cli, python, pythonpath and peer (absolute paths)."""
    environment = dict(os.environ if environ is None else environ)
    if tool == "peer":
        argv = [settings["python"], settings["peer"], "--device", "cuda:0"]
        argv += shape_arguments(cell) + ["--output", output]
    elif tool == "cli":
        argv = [settings["cli"], "measure", "--device", "cuda:0"]
        argv += shape_arguments(cell) + ["--output", output]
    elif tool == "python":
        argv = [settings["python"], "-c", PYTHON_MEASURE_CODE,
                json.dumps(python_request(cell, output))]
        if settings.get("pythonpath"):
            inherited = environment.get("PYTHONPATH")
            environment["PYTHONPATH"] = (settings["pythonpath"] + os.pathsep + inherited
                                         if inherited else settings["pythonpath"])
    else:
        raise ValueError(f"unknown tool {tool!r}")
    return argv, environment


def profiler_command(tool, cell, kernels_path, trace_path, output, settings, environ=None):
    """(argv, environment) of one tool's run of `cell` under torch.profiler
    (PROFILE_KERNELS_CODE), writing the kernel list to kernels_path. The peer runs its own
    script (writing `output`, as always); python runs iteragpu.measure in-process, no file."""
    if tool not in PROFILER_TOOLS:
        raise ValueError(f"{tool!r} cannot be profiled with torch.profiler (one of {PROFILER_TOOLS})")
    measure_argv, environment = tool_command(tool, cell, output, settings, environ)
    spec = {"tool": tool, "kernels": kernels_path, "trace": trace_path}
    if tool == "peer":
        spec["argv"] = measure_argv[1:]  # the script, then its arguments
    else:
        spec["request"] = python_request(cell, None)
    return [settings["python"], "-c", PROFILE_KERNELS_CODE, json.dumps(spec)], environment


def ncu_command(ncu, argv):
    return [ncu, "--clock-control", "none", "--metrics", NCU_METRIC, "--csv"] + list(argv)


def find_ncu(explicit=None):
    """Nsight Compute's command line: --ncu, else ncu on PATH, else the usual install places
    (newest version first). None when not found."""
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    found = shutil.which("ncu")
    if found:
        return found
    patterns = ("/usr/local/cuda*/bin/ncu", "/opt/nvidia/nsight-compute*/ncu",
                "/opt/nvidia/nsight-compute*/*/ncu", "/usr/local/cuda*/nsight-compute*/ncu")
    candidates = sorted({path for pattern in patterns for path in glob.glob(pattern)}, reverse=True)
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


# --- Counters ---------------------------------------------------------------------------------

def row_label(row):
    repeat = row.get("repeat")
    return f"{row.get('phase')} {repeat}" if repeat else str(row.get("phase"))


def counter_values(counters):
    """The six counters of a phase row (or of its "predicted" / "difference" object), by
    name; a missing or non-integer one is None."""
    values = {}
    for name, member, sub in COUNTERS:
        value = counters.get(member) if isinstance(counters, dict) else None
        if sub is not None:
            value = value.get(sub) if isinstance(value, dict) else None
        values[name] = value if isinstance(value, int) and not isinstance(value, bool) else None
    return values


def phase_rows(document):
    rows = document.get("phases") if isinstance(document, dict) else None
    return rows if isinstance(rows, list) else None


def compare_counters(reference, document, label):
    """Differences between two measurement documents' phase rows, counter by counter.
    Returns (differences, problems): each difference {tool, phase, counter, reference, value,
    difference}; each problem a sentence (rows that do not line up, missing counters)."""
    differences, problems = [], []
    reference_rows, rows = phase_rows(reference), phase_rows(document)
    if reference_rows is None or rows is None:
        problems.append(f"{label}: no phase rows" if rows is None else "peer: no phase rows")
        return differences, problems
    reference_labels = [row_label(row) for row in reference_rows]
    labels = [row_label(row) for row in rows]
    if reference_labels != labels:
        problems.append(f"{label}: phase rows [{', '.join(labels)}] differ from the peer's "
                        f"[{', '.join(reference_labels)}]")
    for reference_row, row in zip(reference_rows, rows):
        phase = row_label(reference_row)
        expected, actual = counter_values(reference_row), counter_values(row)
        for name, _, _ in COUNTERS:
            if expected[name] is None or actual[name] is None:
                who = "peer" if expected[name] is None else label
                problems.append(f"{who}: {phase}: counter {name} missing")
            elif expected[name] != actual[name]:
                differences.append({"tool": label, "phase": phase, "counter": name,
                                    "reference": expected[name], "value": actual[name],
                                    "difference": actual[name] - expected[name]})
    return differences, problems


def check_counters(reference, others):
    """reference: the peer's document; others: [(label, document)]. Every counter of every
    row must be equal. Returns {ok, differences, problems, compared}."""
    differences, problems = [], []
    for label, document in others:
        more_differences, more_problems = compare_counters(reference, document, label)
        differences += more_differences
        problems += more_problems
    return {"ok": not differences and not problems, "differences": differences,
            "problems": problems, "compared": [label for label, _ in others]}


def describe_difference(difference):
    return (f"{difference['tool']}: {difference['phase']} {difference['counter']} "
            f"{difference['difference']:+d} ({difference['value']} vs peer {difference['reference']})")


def describe_counters(result):
    """'yes', or which counter differs first and by how much (for the table)."""
    if result is None:
        return "-"
    if result["ok"]:
        return "yes"
    items = result["problems"] + [f"{d['tool']} {d['phase']} {d['counter']} {d['difference']:+d}"
                                  for d in result["differences"]]
    more = f" (+{len(items) - 1} more)" if len(items) > 1 else ""
    return f"NO {items[0]}{more}"


# --- Prediction -------------------------------------------------------------------------------

def check_prediction(document):
    """Every measured counter against the row's "predicted" one; "difference" must be
    measured - predicted. Returns {ok, exact, total, largest_difference, problems}."""
    exact = total = 0
    largest = None
    problems = []
    rows = phase_rows(document)
    if not rows:
        return {"ok": False, "exact": 0, "total": 0, "largest_difference": None,
                "problems": ["no phase rows"]}
    missing = []
    for row in rows:
        phase = row_label(row)
        measured = counter_values(row)
        total += len(COUNTERS)
        predicted_object = row.get("predicted")
        if not isinstance(predicted_object, dict):
            missing.append(phase)
            continue
        predicted = counter_values(predicted_object)
        difference_object = row.get("difference")
        stated = counter_values(difference_object) if isinstance(difference_object, dict) else None
        if stated is None:
            problems.append(f'{phase}: no "difference" beside "predicted"')
        for name, _, _ in COUNTERS:
            if measured[name] is None or predicted[name] is None:
                problems.append(f"{phase}: {name} missing from the "
                                f"{'measured row' if measured[name] is None else 'prediction'}")
                continue
            difference = measured[name] - predicted[name]
            if difference == 0:
                exact += 1
            elif largest is None or abs(difference) > abs(largest["value"]):
                largest = {"value": difference, "phase": phase, "counter": name,
                           "measured": measured[name], "predicted": predicted[name]}
            if stated is not None and stated[name] != difference:
                problems.append(f'{phase}: "difference" {name} is {stated[name]}, but measured '
                                f"- predicted is {difference}")
    if missing:
        problems.insert(0, f'no "predicted" in {len(missing)} of {len(rows)} phase rows '
                           f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''})")
    return {"ok": not problems and exact == total, "exact": exact, "total": total,
            "largest_difference": largest, "problems": problems}


def summarize_prediction(results_by_tool):
    """results_by_tool: {tool: [check_prediction results, one per document]}. The cell's
    figure is each tool's worst document."""
    summary = {"ok": True, "tools": {}, "problems": []}
    for tool, results in results_by_tool.items():
        if not results:
            summary["ok"] = False
            summary["problems"].append(f"{tool}: no result to check")
            summary["tools"][tool] = None
            continue
        worst = min(results, key=lambda r: (r["exact"] - r["total"], -len(r["problems"])))
        largest = None
        for result in results:
            candidate = result["largest_difference"]
            if candidate and (largest is None or abs(candidate["value"]) > abs(largest["value"])):
                largest = candidate
        ok = all(result["ok"] for result in results)
        summary["tools"][tool] = {"ok": ok, "exact": worst["exact"], "total": worst["total"],
                                  "largest_difference": largest, "documents": results}
        if not ok:
            summary["ok"] = False
            for result in results:
                for problem in result["problems"]:
                    if f"{tool}: {problem}" not in summary["problems"]:
                        summary["problems"].append(f"{tool}: {problem}")
            if largest:
                summary["problems"].append(
                    f"{tool}: {worst['exact']}/{worst['total']} exact, largest difference "
                    f"{largest['value']:+d} ({largest['phase']} {largest['counter']})")
    return summary


def describe_prediction(summary):
    if summary is None:
        return "-"
    figures = []
    for tool, figure in summary["tools"].items():
        figures.append((tool, "none" if figure is None else f"{figure['exact']}/{figure['total']}"))
    if len({text for _, text in figures}) == 1:
        text = figures[0][1]
    else:
        text = " ".join(f"{'py' if tool == 'python' else tool} {value}" for tool, value in figures)
    if not summary["ok"]:
        largest = [f["largest_difference"] for f in summary["tools"].values() if f and f["largest_difference"]]
        if largest:
            worst = max(largest, key=lambda item: abs(item["value"]))
            text += f" (max {worst['value']:+d})"
        elif any("predicted" in problem for problem in summary["problems"]):
            text += ' (no "predicted")'
        text = "NO " + text
    return text


# --- GPU time ---------------------------------------------------------------------------------

def warm_forward_times(document):
    """([gpu_event_seconds], [host_seconds]) of the warm_forward rows."""
    gpu, host = [], []
    for row in phase_rows(document) or []:
        if row.get("phase") != "warm_forward":
            continue
        if isinstance(row.get("gpu_event_seconds"), (int, float)):
            gpu.append(float(row["gpu_event_seconds"]))
        if isinstance(row.get("host_seconds"), (int, float)):
            host.append(float(row["host_seconds"]))
    return gpu, host


def back_to_back_forward_seconds(document):
    """GPU event seconds per forward of the warmup row, whose forwards are queued back to back
    with no synchronization between them; None without one."""
    for row in phase_rows(document) or []:
        if row.get("phase") == "warmup" and isinstance(row.get("gpu_event_seconds"), (int, float)):
            forwards = row.get("forwards") or 0
            if forwards > 0:
                return float(row["gpu_event_seconds"]) / forwards
    return None


def check_gpu_time(samples, bounds=GPU_RATIO_BOUNDS):
    """samples: {tool: {"gpu": [seconds], "host": [seconds], "back_to_back": [seconds]}}
    pooled over the rounds. The check: the median GPU event time per forward with the GPU
    kept busy (the warmup phase's forwards, back to back) of CLI / peer and Python / peer must
    lie within bounds (inclusive): the same ops take the same GPU time. The warm_forward GPU
    medians (one synchronized forward per phase) are reported beside it, not checked: at the
    H200's power limit they also depend on how long the host leaves the GPU idle between
    phases, which differs between a C++ and a Python host (README, Validation).
    Returns {ok, bounds, medians, ratios, warm_ratios, host_ratios, samples_count, problems}."""
    low, high = bounds
    medians, counts = {}, {}
    for tool in TOOLS:
        values = samples.get(tool) or {}
        gpu, host = values.get("gpu") or [], values.get("host") or []
        busy = values.get("back_to_back") or []
        medians[tool] = {"gpu": statistics.median(gpu) if gpu else None,
                         "host": statistics.median(host) if host else None,
                         "back_to_back": statistics.median(busy) if busy else None}
        counts[tool] = len(gpu)
    ratios, warm_ratios, host_ratios, problems = {}, {}, {}, []
    reference = medians["peer"]
    for tool in TOOLS[1:]:
        ratio = warm_ratio = host_ratio = None
        if reference["back_to_back"] and medians[tool]["back_to_back"] is not None:
            ratio = medians[tool]["back_to_back"] / reference["back_to_back"]
            if not low <= ratio <= high:
                problems.append(f"{tool}/peer back-to-back GPU median ratio {ratio:.3f} outside [{low}, {high}]")
        else:
            problems.append(f"{tool}: no warmup GPU event time" if reference["back_to_back"]
                            else "peer: no warmup GPU event time")
        if reference["gpu"] and medians[tool]["gpu"] is not None:
            warm_ratio = medians[tool]["gpu"] / reference["gpu"]
        if reference["host"] and medians[tool]["host"] is not None:
            host_ratio = medians[tool]["host"] / reference["host"]
        ratios[tool], warm_ratios[tool], host_ratios[tool] = ratio, warm_ratio, host_ratio
    return {"ok": not problems, "bounds": list(bounds), "medians": medians, "ratios": ratios,
            "warm_ratios": warm_ratios, "host_ratios": host_ratios, "samples_count": counts,
            "problems": problems}


def describe_ratio(gpu_time, tool):
    if gpu_time is None:
        return "-"
    ratio = gpu_time["ratios"].get(tool)
    if ratio is None:
        return "NO (none)"
    low, high = gpu_time["bounds"]
    return f"{ratio:.3f}" + ("" if low <= ratio <= high else " NO")


# --- Kernels (Nsight Compute) -----------------------------------------------------------------

_DURATION_SCALE_NS = {"nsecond": 1.0, "ns": 1.0, "usecond": 1e3, "us": 1e3, "msecond": 1e6,
                      "ms": 1e6, "second": 1e9, "s": 1e9}


def _number(text):
    try:
        return float(text.replace(",", "").strip())
    except (AttributeError, ValueError):
        return None


def parse_ncu_csv(text):
    """The kernels in `ncu --csv` output, one per launch ID (per process), in launch order:
    [{id, process_id, name, duration_ns}]. Lines that are not CSV rows under a header with a
    "Kernel Name" column (==PROF== / ==WARNING== / ==ERROR== lines, the application's own
    output) are skipped."""
    kernels, by_key = [], {}
    header = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith('"'):
            continue  # ==PROF== and other tool lines, the measured program's output, blanks
        try:
            fields = next(csv.reader([stripped]))
        except (csv.Error, StopIteration):
            continue
        name_column = next((name for name in ("Kernel Name", "Function Name") if name in fields), None)
        if "ID" in fields and name_column:
            header = {name: index for index, name in enumerate(fields)}
            header["__name__"] = header[name_column]
            header["__width__"] = len(fields)
            continue
        if header is None or len(fields) != header["__width__"]:
            continue
        launch = fields[header["ID"]].strip()
        if not launch.isdigit():
            continue
        process = fields[header["Process ID"]].strip() if "Process ID" in header else ""
        key = (process, int(launch))
        entry = by_key.get(key)
        if entry is None:
            entry = {"id": int(launch), "process_id": process,
                     "name": fields[header["__name__"]], "duration_ns": None}
            by_key[key] = entry
            kernels.append(entry)
        metric = fields[header["Metric Name"]] if "Metric Name" in header else None
        if metric == NCU_METRIC and "Metric Value" in header:
            value = _number(fields[header["Metric Value"]])
            unit = fields[header["Metric Unit"]].strip() if "Metric Unit" in header else "nsecond"
            if value is not None:
                entry["duration_ns"] = value * _DURATION_SCALE_NS.get(unit, 1.0)
    return kernels


def ncu_messages(text):
    """ncu's own error and warning lines, for a failure message."""
    return [line.strip() for line in text.splitlines()
            if line.startswith(("==ERROR==", "==WARNING==")) or "ERR_NVGPUCTRPERM" in line]


NCU_APPLICATION_ERROR = "The application returned an error code"


def ncu_unusable_reason(process, kernels):
    """Why one ncu run cannot decide the kernel check (torch.profiler then stands in), or None
    when it can. process: run_process's result; kernels: parse_ncu_csv's. Unusable: an
    ==ERROR== line of ncu's own (gVisor: "Failed to initialize the profiler: LibraryNotLoaded";
    ncu's note that the profiled program exited non-zero is that program's failure, not
    ncu's), or no kernel rows at all."""
    text = (process.get("stdout") or "") + "\n" + (process.get("stderr") or "")
    errors = [line.strip()[len("==ERROR=="):].strip() for line in text.splitlines()
              if line.strip().startswith("==ERROR==") and NCU_APPLICATION_ERROR not in line]
    if errors:
        return errors[0] or "==ERROR=="
    if not kernels:
        detail = process.get("error") or next(iter(ncu_messages(text)), None)
        return "no kernels in ncu's output" + (f" ({detail})" if detail else "")
    return None


def parse_profiler_kernels(text):
    """The kernel list that PROFILE_KERNELS_CODE writes, in parse_ncu_csv's shape: ([{id,
    process_id, name, duration_ns}] in start order, None), or ([], the reason it is not one)."""
    try:
        document = json.loads(text)
    except ValueError as error:
        return [], f"unreadable kernel list: {error}"
    if not isinstance(document, dict) or document.get("schema") != PROFILER_SCHEMA:
        return [], f"not a kernel list (schema {PROFILER_SCHEMA} expected)"
    entries = document.get("kernels")
    if not isinstance(entries, list):
        return [], 'no "kernels" list'
    starts = []
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name.strip():
            return [], f"kernel {index}: no name"
        start = entry.get("start_us")
        starts.append(float(start) if isinstance(start, (int, float)) and not isinstance(start, bool) else None)
    order = list(range(len(entries)))
    if None not in starts:
        order.sort(key=lambda index: starts[index])  # stable: ties keep the file's order
    kernels = []
    for position, index in enumerate(order):
        duration = entries[index].get("duration_us")
        kernels.append({"id": position, "process_id": "", "name": entries[index]["name"],
                        "duration_ns": (float(duration) * 1e3 if isinstance(duration, (int, float))
                                        and not isinstance(duration, bool) else None)})
    return kernels, None


def profiler_unusable_reason(kernel_lists, errors):
    """Why the torch.profiler fallback cannot decide the kernel check, or None. It cannot when
    the peer's profiled run failed or listed no kernel (the profiler, or torch, does not work
    here); once the peer's run has shown that it works, a failure of iteragpu's run is
    iteragpu's own and fails the check."""
    if errors.get("peer"):
        return f"peer: {errors['peer']}"
    if not kernel_lists.get("peer"):
        return "peer: no kernels listed"
    return None


def profiler_method(ncu_reason):
    """The method label of a kernel check made under torch.profiler."""
    return f"torch.profiler (ncu unusable: {ncu_reason})"


PROFILER_STANDS_FOR = ("the in-process Python measurement stands for iteragpu's backend (same plugin, "
                       "same code): the CLI, a separate C++ process, cannot be profiled this way")


def kernel_base_name(name):
    """'void at::native::foo<4, X>(int, T)' -> 'at::native::foo'."""
    anonymous = "(anonymous namespace)"
    base = name.strip().replace(anonymous, "\0")
    if base.startswith("void "):
        base = base[len("void "):]
    for stop in ("<", "("):
        index = base.find(stop)
        if index > 0:
            base = base[:index]
    return base.strip().replace("\0", anonymous)


def gemm_kernel_names(names):
    """The names that are GEMMs (by their base name: GEMM_MARKERS), in launch order."""
    return [name for name in names if any(marker in kernel_base_name(name) for marker in GEMM_MARKERS)]


def compare_kernel_sequences(reference, names, label="cli"):
    """The peer's kernel names against another tool's, launch by launch. Returns {ok,
    reference_count, count, first_difference}."""
    result = {"ok": reference == names and bool(reference), "reference_count": len(reference),
              "count": len(names), "first_difference": None}
    if reference != names:
        index = next((i for i, (a, b) in enumerate(zip(reference, names)) if a != b),
                     min(len(reference), len(names)))
        result["first_difference"] = {
            "index": index,
            "peer": reference[index] if index < len(reference) else None,
            label: names[index] if index < len(names) else None,
        }
    return result


def evaluate_kernels(cell, kernel_lists, errors, other="cli"):
    """kernel_lists: {tool: parsed kernels or None}; errors: {tool: message or None}; other:
    the tool compared with the peer ("cli" under ncu, "python" under torch.profiler)."""
    failures = [f"{tool}: {message}" for tool, message in errors.items() if message]
    names = {tool: [kernel["name"] for kernel in (kernels or [])] for tool, kernels in kernel_lists.items()}
    comparison = None
    if not failures:
        comparison = compare_kernel_sequences(names["peer"], names.get(other, []), label=other)
        if not comparison["ok"]:
            first = comparison["first_difference"]
            if first is None:
                failures.append("no kernels profiled")
            else:
                failures.append(
                    f"kernel sequences differ at launch {first['index']} "
                    f"(peer {comparison['reference_count']} kernels, {other} {comparison['count']}): "
                    f"peer {short_name(first['peer'])}, {other} {short_name(first[other])}")
    totals = {tool: sum(kernel["duration_ns"] or 0.0 for kernel in (kernels or []))
              for tool, kernels in kernel_lists.items()}
    return {"cell": cell, "status": "ok" if not failures else "failed", "ok": not failures,
            "kernels": kernel_lists, "gemm": {tool: gemm_kernel_names(n) for tool, n in names.items()},
            "comparison": comparison, "total_duration_ns": totals, "failures": failures,
            "errors": errors}


def short_name(name, limit=60):
    if name is None:
        return "(none)"
    base = kernel_base_name(name)
    return base if len(base) <= limit else base[:limit - 3] + "..."


def short_method(result):
    """"ncu" or "torch.profiler" (a summary written before the fallback existed: "ncu")."""
    return "ncu" if result.get("method", "ncu") == "ncu" else "torch.profiler"


def describe_kernels(result):
    """The kernel check's cell of its table row: the verdict and the method."""
    if result["status"] == "skipped":
        return "skipped: " + result.get("reason", "")
    if result["ok"]:
        tools = result.get("tools") or list(KERNEL_TOOLS)
        return f"same {result['comparison']['count']} kernels ({short_method(result)}: {' = '.join(tools)})"
    return "NO " + result["failures"][0]


def describe_kernel_method(result):
    """The line under a kernel check's row that names a method other than ncu (and what the
    in-process Python run stands for), or None under ncu."""
    method = result.get("method", "ncu")
    if method == "ncu":
        return None
    return f"method: {method}; {PROFILER_STANDS_FOR}"


# --- One cell ---------------------------------------------------------------------------------

def evaluate_cell(cell, runs):
    """runs: [{tool, round, error, document, ...}] of one cell. Returns the cell's checks:
    {counters, prediction, gpu_time, failures}."""
    several = any(run["round"] > 0 for run in runs)

    def label(run):
        return f"{run['tool']} round {run['round'] + 1}" if several else run["tool"]

    failures = []
    run_problems = [f"{label(run)}: no result ({run['error']})" for run in runs if run.get("document") is None]
    done = [run for run in runs if run.get("document") is not None]
    peers = [run for run in done if run["tool"] == "peer"]
    counters = None
    if peers:
        reference = peers[0]
        counters = check_counters(reference["document"],
                                  [(label(run), run["document"]) for run in done if run is not reference])
    else:
        counters = {"ok": False, "differences": [], "problems": [], "compared": []}
    if run_problems:
        counters["problems"] = run_problems + counters["problems"]
        counters["ok"] = False
    if not counters["ok"]:
        items = counters["problems"] + [describe_difference(d) for d in counters["differences"]]
        failures.append("counters: " + "; ".join(items[:3])
                        + (f" (+{len(items) - 3} more)" if len(items) > 3 else ""))

    prediction = summarize_prediction({
        tool: [check_prediction(run["document"]) for run in done if run["tool"] == tool]
        for tool in ("cli", "python")})
    if not prediction["ok"]:
        failures.append("prediction: " + "; ".join(prediction["problems"][:3]))

    gpu_time = None
    if cell["gpu_timed"]:
        samples = {tool: {"gpu": [], "host": [], "back_to_back": []} for tool in TOOLS}
        for run in done:
            gpu, host = warm_forward_times(run["document"])
            samples[run["tool"]]["gpu"] += gpu
            samples[run["tool"]]["host"] += host
            busy = back_to_back_forward_seconds(run["document"])
            if busy is not None:
                samples[run["tool"]]["back_to_back"].append(busy)
        gpu_time = check_gpu_time(samples)
        gpu_time["samples"] = samples
        for problem in gpu_time["problems"]:
            failures.append("GPU time: " + problem)
    return {"counters": counters, "prediction": prediction, "gpu_time": gpu_time, "failures": failures}


# --- Running ----------------------------------------------------------------------------------

def _text(value):
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def run_process(argv, environment, log_path, timeout, cwd):
    """Runs one process, its output in log_path. Returns {returncode (None: did not run or
    timed out), wall_seconds, stdout, stderr, error}."""
    start = time.perf_counter()
    returncode, stdout, stderr, error = None, "", "", None
    try:
        completed = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env=environment, timeout=timeout, cwd=cwd)
        returncode, stdout, stderr = completed.returncode, completed.stdout, completed.stderr
    except subprocess.TimeoutExpired as expired:
        stdout, stderr = _text(expired.stdout), _text(expired.stderr)
        error = f"timed out after {timeout} s"
    except OSError as exception:
        error = f"could not start: {exception}"
    wall = time.perf_counter() - start
    if error is None and returncode != 0:
        last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
        error = f"exit {returncode}" + (f": {last}" if last else "")
    with open(log_path, "w", encoding="utf-8") as log:
        log.write(f"$ {' '.join(argv)}\n# exit {returncode}, {wall:.2f} s, error: {error}\n")
        log.write("--- stdout ---\n" + stdout + "\n--- stderr ---\n" + stderr)
    return {"returncode": returncode, "wall_seconds": wall, "stdout": stdout, "stderr": stderr,
            "error": error}


def fresh_path(path):
    if os.path.lexists(path):
        os.remove(path)
    return path


def run_measurement(tool, cell, round_index, settings):
    if cell.get("gpu_timed"):
        time.sleep(settings.get("settle_seconds", GPU_SETTLE_SECONDS))  # the same idle before each
    name = f"{cell['dtype']}-{cell['config']}-r{round_index + 1}-{tool}"
    output = fresh_path(os.path.join(settings["work_dir"], name + ".json"))
    argv, environment = tool_command(tool, cell, output, settings)
    process = run_process(argv, environment, os.path.join(settings["work_dir"], name + ".log"),
                          MEASURE_TIMEOUT_SECONDS, settings["work_dir"])
    document, error = None, process["error"]
    if error is None:
        try:
            with open(output, encoding="utf-8") as source:
                document = json.load(source)
        except (OSError, ValueError) as exception:
            error = f"no readable result in {output}: {exception}"
    print(f"  {cell_key(cell):<20} round {round_index + 1} {tool:<6} {process['wall_seconds']:6.2f} s  "
          f"{'ok' if error is None else 'FAILED: ' + error}", flush=True)
    return {"tool": tool, "round": round_index, "argv": argv, "returncode": process["returncode"],
            "wall_seconds": process["wall_seconds"], "output": output, "error": error,
            "document": document}


def run_cell(cell, settings):
    runs = []
    for round_index in range(rounds_of(cell, settings["rounds"])):
        for tool in tool_order(round_index):
            runs.append(run_measurement(tool, cell, round_index, settings))
    result = evaluate_cell(cell, runs)
    result["cell"] = cell
    result["runs"] = [{key: value for key, value in run.items() if key != "document"} for run in runs]
    return result


def run_ncu(tool, cell, settings, ncu):
    """One tool's run of `cell` under ncu. Returns (run record, kernels, process)."""
    name = f"{cell['dtype']}-{cell['config']}-{tool}"
    output = fresh_path(os.path.join(settings["work_dir"], name + ".json"))
    argv, environment = tool_command(tool, cell, output, settings)
    command = ncu_command(ncu, argv)
    process = run_process(command, environment, os.path.join(settings["work_dir"], name + ".ncu.log"),
                          NCU_TIMEOUT_SECONDS, settings["work_dir"])
    kernels = parse_ncu_csv(process["stdout"]) or parse_ncu_csv(process["stdout"] + "\n" + process["stderr"])
    error = process["error"]
    if not kernels and error is None:
        messages = ncu_messages(process["stdout"] + "\n" + process["stderr"])
        error = "no kernels in ncu's output" + (f": {messages[0]}" if messages else "")
    elif not kernels:
        messages = ncu_messages(process["stdout"] + "\n" + process["stderr"])
        error += f" ({messages[0]})" if messages else ""
    print(f"  {cell_key(cell):<20} ncu     {tool:<6} {process['wall_seconds']:6.2f} s  "
          f"{len(kernels)} kernels{'' if error is None else '  FAILED: ' + error}", flush=True)
    return ({"tool": tool, "method": "ncu", "argv": command, "returncode": process["returncode"],
             "wall_seconds": process["wall_seconds"], "error": error, "kernel_count": len(kernels)},
            kernels, process)


def run_profiled(tool, cell, settings):
    """One tool's run of `cell` under torch.profiler. Returns (run record, kernels, error)."""
    work_dir = settings["work_dir"]
    name = f"{cell['dtype']}-{cell['config']}-{tool}"
    kernels_path = fresh_path(os.path.join(work_dir, name + ".profiler-kernels.json"))
    trace_path = fresh_path(os.path.join(work_dir, name + ".profiler-trace.json"))
    output = fresh_path(os.path.join(work_dir, name + ".profiled.json"))
    argv, environment = profiler_command(tool, cell, kernels_path, trace_path, output, settings)
    process = run_process(argv, environment, os.path.join(work_dir, name + ".profiler.log"),
                          MEASURE_TIMEOUT_SECONDS, work_dir)
    kernels, error = [], process["error"]
    if error is None:
        try:
            with open(kernels_path, encoding="utf-8") as source:
                kernels, error = parse_profiler_kernels(source.read())
        except OSError as exception:
            error = f"no kernel list in {kernels_path}: {exception}"
    if error is None and not kernels:
        error = "torch.profiler listed no kernels"
    print(f"  {cell_key(cell):<20} profile {tool:<6} {process['wall_seconds']:6.2f} s  "
          f"{len(kernels)} kernels{'' if error is None else '  FAILED: ' + error}", flush=True)
    shown = [part if part != PROFILE_KERNELS_CODE else "<PROFILE_KERNELS_CODE>" for part in argv]
    return ({"tool": tool, "method": "torch.profiler", "argv": shown, "returncode": process["returncode"],
             "wall_seconds": process["wall_seconds"], "error": error, "kernel_count": len(kernels),
             "kernel_list": kernels_path}, kernels, error)


def print_gemm_kernels(result):
    for tool in result.get("tools") or KERNEL_TOOLS:
        print(f"    forward GEMM kernels, {tool} ({short_method(result)}): "
              + (", ".join((result.get("gemm") or {}).get(tool) or []) or "(none)"))


def run_kernel_cell(cell, settings):
    """The kernel check of one cell: the peer and the CLI under ncu while ncu works; where it is
    not found or unusable (ncu_unusable_reason), the peer and Python in-process under
    torch.profiler. settings["ncu_unusable"] keeps the reason, so later cells skip ncu."""
    ncu = settings.get("ncu")
    reason = "ncu not found" if ncu is None else settings.get("ncu_unusable")
    ncu_runs = []
    if reason is None:
        kernel_lists, errors = {}, {}
        for tool in KERNEL_TOOLS:
            run, kernels, process = run_ncu(tool, cell, settings, ncu)
            ncu_runs.append(run)
            unusable = ncu_unusable_reason(process, kernels)
            if unusable is not None:
                reason = f"{tool}: {unusable}"
                break
            kernel_lists[tool], errors[tool] = kernels, run["error"]
        if reason is None:
            result = evaluate_kernels(cell, kernel_lists, errors)
            result.update(method="ncu", ncu_unusable=None, tools=list(KERNEL_TOOLS), runs=ncu_runs, ncu=ncu)
            print_gemm_kernels(result)
            return result
        settings["ncu_unusable"] = reason
        print(f"  {cell_key(cell):<20} ncu unusable ({reason}): torch.profiler instead", flush=True)
    return run_profiler_kernel_cell(cell, settings, reason, ncu_runs)


def run_profiler_kernel_cell(cell, settings, ncu_reason, ncu_runs=()):
    """The kernel check of one cell under torch.profiler: the peer against Python in-process.
    Skipped (--allow-no-ncu) or failed when the profiler cannot list the peer's kernels."""
    kernel_lists, errors, runs = {}, {}, list(ncu_runs)
    for tool in PROFILER_TOOLS:
        run, kernels, error = run_profiled(tool, cell, settings)
        runs.append(run)
        kernel_lists[tool], errors[tool] = kernels, error
    unusable = profiler_unusable_reason(kernel_lists, errors)
    if unusable is None:
        result = evaluate_kernels(cell, kernel_lists, errors, other="python")
        result["failures"] = [f"torch.profiler: {failure}" for failure in result["failures"]]
    else:
        why = f"{ncu_reason}, and the torch.profiler fallback failed ({unusable})"
        skipped = bool(settings.get("allow_no_ncu"))
        result = {"cell": cell, "status": "skipped" if skipped else "failed", "ok": skipped,
                  "reason": why + (" (--allow-no-ncu)" if skipped else ""),
                  "failures": [] if skipped else [f"kernels not checked: {why}"],
                  "kernels": kernel_lists, "gemm": {}, "comparison": None, "errors": errors}
    result.update(method=profiler_method(ncu_reason), ncu_unusable=ncu_reason, tools=list(PROFILER_TOOLS),
                  stands_for=PROFILER_STANDS_FOR, runs=runs, ncu=settings.get("ncu"))
    if unusable is None:
        print_gemm_kernels(result)
    return result


# --- Summary ----------------------------------------------------------------------------------

def build_summary(cell_results, kernel_results, settings, estimated, elapsed):
    failures = []
    for result in cell_results + kernel_results:
        failures += [f"{cell_key(result['cell'])}: {failure}" for failure in result["failures"]]
    walls = {}
    for result in cell_results:
        for run in result["runs"]:
            walls.setdefault(run["tool"], []).append(run["wall_seconds"])
    return {
        "schema": "iteragpu.gpu-conformance",
        "result": "PASS" if not failures else "FAIL",
        "mismatches": len(failures),
        "failures": failures,
        "rounds": settings["rounds"],
        "gpu_ratio_bounds": list(GPU_RATIO_BOUNDS),
        "estimated_seconds": estimated,
        "elapsed_seconds": elapsed,
        "budget_seconds": BUDGET_SECONDS,
        "process_wall_median_seconds": {tool: statistics.median(values) for tool, values in walls.items()},
        "ncu": settings.get("ncu"),
        # How each kernel check was made: "ncu" or "torch.profiler (ncu unusable: <reason>)".
        "kernel_methods": {cell_key(result["cell"]): result.get("method") for result in kernel_results},
        "ncu_unusable": next((result["ncu_unusable"] for result in kernel_results
                              if result.get("ncu_unusable")), None),
        "tools": {"cli": settings.get("cli"), "python": settings.get("python"),
                  "pythonpath": settings.get("pythonpath"), "peer": settings.get("peer")},
        "cells": cell_results,
        "kernel_checks": kernel_results,
    }


COUNTERS_WIDTH, PREDICTION_WIDTH = 52, 40


def _clip(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def render_table(summary):
    """The one table printed at the end (also by --print-summary)."""
    lines = []
    head = (f"{'dtype':<9} {'config':<11} {'counters equal':<{COUNTERS_WIDTH}} "
            f"{'prediction exact':<{PREDICTION_WIDTH}} {'GPU CLI/peer':>12} {'GPU Py/peer':>12}")
    lines.append(head)
    lines.append("-" * len(head))
    for result in summary["cells"]:
        cell = result["cell"]
        lines.append(f"{cell['dtype']:<9} {cell['config']:<11} "
                     f"{_clip(describe_counters(result['counters']), COUNTERS_WIDTH):<{COUNTERS_WIDTH}} "
                     f"{_clip(describe_prediction(result['prediction']), PREDICTION_WIDTH):<{PREDICTION_WIDTH}} "
                     f"{describe_ratio(result['gpu_time'], 'cli'):>12} "
                     f"{describe_ratio(result['gpu_time'], 'python'):>12}")
    for result in summary["kernel_checks"]:
        cell = result["cell"]
        lines.append(f"{cell['dtype']:<9} {cell['config']:<11} "
                     f"{_clip(describe_kernels(result), COUNTERS_WIDTH):<{COUNTERS_WIDTH}} "
                     f"{'-':<{PREDICTION_WIDTH}} {'-':>12} {'-':>12}")
        method = describe_kernel_method(result)
        if method:
            lines.append(f"{'':<22}{method}")
    timed = [result for result in summary["cells"] if result["gpu_time"]]
    if timed:
        lines.append("")
        lines.append("GPU ms per forward: back to back (warmup phase, checked) | warm_forward GPU event median "
                     "| host median (the last two for information; ratio to the peer in brackets):")
        for result in timed:
            medians = result["gpu_time"]["medians"]
            parts = []
            for tool in TOOLS:
                gpu, host = medians[tool]["gpu"], medians[tool]["host"]
                busy = medians[tool].get("back_to_back")
                warm_ratio = result["gpu_time"].get("warm_ratios", {}).get(tool)
                if gpu is None or host is None or busy is None:
                    parts.append(f"{tool} -")
                else:
                    parts.append(f"{tool} {busy * 1e3:.3f} | {gpu * 1e3:.3f}"
                                 + (f" [{warm_ratio:.3f}]" if warm_ratio is not None else "")
                                 + f" | {host * 1e3:.3f}")
            count = result["gpu_time"]["samples_count"].get("peer", 0)
            peer_gpu = medians["peer"]["gpu"]
            note = "" if peer_gpu is None or peer_gpu >= GPU_BOUND_SECONDS else "  (below 5 ms: not GPU-bound)"
            lines.append(f"  {cell_key(result['cell']):<20} " + "; ".join(parts)
                         + f"  ({count} samples each){note}")
    checked = [result for result in summary["kernel_checks"] if result.get("gemm")]
    if checked:
        lines.append("")
        lines.append("forward GEMM kernels (batch 2, context 16, width 64; the method after the tool):")
        for result in checked:
            for tool in result.get("tools") or KERNEL_TOOLS:
                names = result["gemm"].get(tool) or []
                lines.append(f"  {cell_key(result['cell']):<20} {tool:<6} {short_method(result):<14} "
                             + (", ".join(short_name(name, 90) for name in names) or "(none)"))
    if summary["failures"]:
        lines.append("")
        lines.append("mismatches:")
        lines += [f"  {failure}" for failure in summary["failures"]]
    lines.append("")
    elapsed, estimated = summary.get("elapsed_seconds"), summary.get("estimated_seconds")
    if elapsed is not None:
        note = " (over the budget)" if elapsed > summary.get("budget_seconds", BUDGET_SECONDS) else ""
        lines.append(f"elapsed {elapsed:.1f} s (estimated {estimated:.0f} s, budget "
                     f"{summary.get('budget_seconds', BUDGET_SECONDS)} s){note}")
    lines.append("conformance: PASS" if summary["result"] == "PASS"
                 else f"conformance: FAIL ({summary['mismatches']} mismatches)")
    return "\n".join(lines)


# --- Command line -----------------------------------------------------------------------------

def build_parser():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Matrix: " + "; ".join(
            f"{config} [{'/'.join(dtypes)}] batch {b} context {c} width {w}"
            + (f" hidden {h}" if h else "") + f" warmup {wu} repeats {r}" + (" (GPU-timed)" if timed else "")
            for config, dtypes, b, c, w, h, wu, r, timed in MATRIX)
        + "; kernels [float32/bfloat16] batch 2 context 16 width 64 warmup 0 repeats 1 under ncu "
          "(peer and CLI), or, where ncu is not found or unusable, under torch.profiler (peer and "
          "Python in-process, which stands for iteragpu's backend).")
    parser.add_argument("--cli", help="the iteragpu executable (required to run)")
    parser.add_argument("--python", default=sys.executable,
                        help="the Python interpreter holding torch (default: this one)")
    parser.add_argument("--pythonpath", help="folder holding the built iteragpu package (build/python)")
    parser.add_argument("--work-dir", default="gpu-conformance", help="measurement files and logs")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                        help=f"interleaved rounds of the GPU-bound cells (default {DEFAULT_ROUNDS})")
    parser.add_argument("--summary", default="gpu-conformance.json", help="JSON summary to write")
    parser.add_argument("--only", action="append", default=[], metavar="DTYPE:CONFIG",
                        help="run only this cell (repeatable; '*' for any side, e.g. float16:gpu-bound, "
                             "float32:kernels, '*:odd')")
    parser.add_argument("--settle-seconds", type=float, default=GPU_SETTLE_SECONDS,
                        help=f"idle pause before each GPU-timed process (default {GPU_SETTLE_SECONDS})")
    parser.add_argument("--allow-no-ncu", action="store_true",
                        help="skip the kernel check, not fail it, when neither ncu nor the torch.profiler "
                             "fallback can list kernels (the fallback runs whenever ncu is not found, "
                             "reports an ==ERROR== or lists no kernels)")
    parser.add_argument("--ncu", help="Nsight Compute's ncu (default: PATH, /usr/local/cuda*/bin, "
                                      "/opt/nvidia/nsight-compute*)")
    parser.add_argument("--peer", default=PEER, help="the PyTorch peer script (default: %(default)s)")
    parser.add_argument("--print-summary", metavar="FILE", help="print a saved summary's table and stop")
    return parser


def settings_from(arguments):
    """Checked, absolute settings; raises UsageError."""
    if not arguments.cli:
        raise UsageError("--cli is required to run the conformance check")
    cli = os.path.abspath(arguments.cli)
    if not (os.path.isfile(cli) and os.access(cli, os.X_OK)):
        raise UsageError(f"--cli {arguments.cli}: not an executable file")
    python = shutil.which(arguments.python) or arguments.python
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise UsageError(f"--python {arguments.python}: not an executable file")
    pythonpath = None
    if arguments.pythonpath:
        pythonpath = os.path.abspath(arguments.pythonpath)
        if not os.path.isdir(pythonpath):
            raise UsageError(f"--pythonpath {arguments.pythonpath}: not a folder")
    peer = os.path.abspath(arguments.peer)
    if not os.path.isfile(peer):
        raise UsageError(f"--peer {arguments.peer}: no such file")
    if arguments.rounds < 1:
        raise UsageError("--rounds: at least 1")
    if arguments.ncu and find_ncu(arguments.ncu) is None:
        raise UsageError(f"--ncu {arguments.ncu}: not an executable file")
    return {"cli": cli, "python": os.path.abspath(python), "pythonpath": pythonpath, "peer": peer,
            "work_dir": os.path.abspath(arguments.work_dir), "rounds": arguments.rounds,
            "settle_seconds": max(0.0, arguments.settle_seconds),
            "allow_no_ncu": arguments.allow_no_ncu, "ncu_option": arguments.ncu}


def main(argv=None):
    parser = build_parser()
    arguments = parser.parse_args(argv)
    if arguments.print_summary:
        try:
            with open(arguments.print_summary, encoding="utf-8") as source:
                print(render_table(json.load(source)))
        except (OSError, ValueError, KeyError) as exception:
            print(f"gpu_conformance: --print-summary {arguments.print_summary}: {exception}", file=sys.stderr)
            return 2
        return 0
    try:
        settings = settings_from(arguments)
        cells, kernels = select_cells(arguments.only)
    except UsageError as error:
        parser.print_usage(sys.stderr)
        print(f"gpu_conformance: error: {error}", file=sys.stderr)
        return 2
    os.makedirs(settings["work_dir"], exist_ok=True)
    settings["ncu"] = find_ncu(settings["ncu_option"]) if kernels else None
    estimated = estimate_seconds(cells, kernels, settings["rounds"], settings["ncu"] is not None)
    processes = sum(rounds_of(cell, settings["rounds"]) * len(TOOLS) for cell in cells)
    print(f"conformance: {len(cells)} cells ({processes} processes), {len(kernels)} kernel checks "
          f"(ncu: {settings['ncu'] or 'not found, torch.profiler instead'}), {settings['rounds']} rounds "
          f"for GPU-bound cells; "
          f"estimated {estimated:.0f} s (budget {BUDGET_SECONDS} s)", flush=True)
    start = time.monotonic()
    cell_results = [run_cell(cell, settings) for cell in cells]
    kernel_results = [run_kernel_cell(cell, settings) for cell in kernels]
    elapsed = time.monotonic() - start
    summary = build_summary(cell_results, kernel_results, settings, estimated, elapsed)
    table = render_table(summary)
    summary["table"] = table
    summary_directory = os.path.dirname(os.path.abspath(arguments.summary))
    os.makedirs(summary_directory, exist_ok=True)
    with open(arguments.summary, "w", encoding="utf-8") as output:
        json.dump(summary, output, indent=2)
    print()
    print(table)
    return 0 if summary["result"] == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
