#!/usr/bin/env python3
"""`iteragpu measure` (C++ and LibTorch) against the same protocol in PyTorch (measure_peer.py).

Runs both, interleaved, several rounds each, on the seed's larger configuration (batch 2,
context 128, width 1024, float32, warmup 3) with 50 repeats, and the seed's small command
as whole processes, then prints side by side:

- warm_forward host time, median over every warm repeat of every round;
- host overhead per warm forward (host time − GPU event time), median;
- whole-process wall time of the seed's small command, median over rounds;

with the ratios and the project's targets (host ≤ 0.75 × peer, overhead ≤ 1/3 of the peer's,
whole process ≤ 0.5 × peer). Also checks that both saw the same allocator counters.
Needs a GPU; used by scripts/gpu-check. The standard library only (the peer imports torch).

    python3 tests/bench/gpu_measure_bench.py --cli build/bin/iteragpu --rounds 5 \
        --work-dir /tmp/bench --summary bench.json
    python3 tests/bench/gpu_measure_bench.py --print-summary bench.json
    python3 tests/bench/gpu_measure_bench.py --phase-table mesures-petit-essai.json
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "measure_peer.py")
LARGE = ["--batch", "2", "--context", "128", "--width", "1024", "--dtype", "float32",
         "--warmup", "3", "--repeats", "50"]
SMALL = ["--batch", "1", "--context", "16", "--width", "64", "--dtype", "float32",
         "--warmup", "1", "--repeats", "2"]
TARGETS = {  # iteragpu / peer must be at most this
    "warm_forward_host_median_s": 0.75,
    "warm_forward_overhead_median_s": 1.0 / 3.0,
    "small_command_wall_median_s": 0.5,
}
LABELS = {
    "warm_forward_host_median_s": ("warm_forward host time, median", 1e6, "us"),
    "warm_forward_overhead_median_s": ("host overhead per warm forward (host - GPU event), median", 1e6, "us"),
    "small_command_wall_median_s": ("whole process, seed's small command, median", 1.0, "s"),
}


def run_measure(tool, command, arguments, output):
    """Runs one measurement as its own process; returns (wall seconds, parsed result)."""
    argv = ([command, "measure", "--device", "cuda:0"] if tool == "iteragpu"
            else [sys.executable, PEER, "--device", "cuda:0"]) + arguments + ["--output", output]
    start = time.perf_counter()
    completed = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if completed.returncode != 0:
        raise SystemExit(f"{tool} failed (exit {completed.returncode}): {' '.join(argv)}\n"
                         f"{completed.stdout}{completed.stderr}")
    with open(output, encoding="utf-8") as result:
        return wall, json.load(result)


def growth(row, name):
    return row[name]["end"] - row[name]["baseline"]


def benchmark(arguments):
    os.makedirs(arguments.work_dir, exist_ok=True)
    tools = ("iteragpu", "peer")
    warm = {tool: {"host": [], "gpu": [], "overhead": [], "round_medians": []} for tool in tools}
    walls = {tool: [] for tool in tools}
    counters = {tool: None for tool in tools}
    for round_index in range(arguments.rounds):
        # Alternate who goes first, so drift of the machine favours neither.
        order = tools if round_index % 2 == 0 else tools[::-1]
        for tool in order:
            output = os.path.join(arguments.work_dir, f"{tool}-large-{round_index}.json")
            _, result = run_measure(tool, arguments.cli, LARGE, output)
            rows = [row for row in result["phases"] if row["phase"] == "warm_forward"]
            host = [row["host_seconds"] for row in rows]
            warm[tool]["host"] += host
            warm[tool]["gpu"] += [row["gpu_event_seconds"] for row in rows]
            warm[tool]["overhead"] += [row["host_seconds"] - row["gpu_event_seconds"] for row in rows]
            warm[tool]["round_medians"].append(statistics.median(host))
            phases = result["phases"]
            counters[tool] = {
                "model_load_allocated_growth": growth(phases[0], "allocated_bytes"),
                "inputs_allocated_growth": growth(phases[1], "allocated_bytes"),
                "cold_forward_allocated_growth": growth(phases[2], "allocated_bytes"),
                "warm_forward_allocated_growth": growth(rows[-1], "allocated_bytes"),
                "warm_forward_peak_over_baseline": rows[-1]["peak_allocated_bytes"]
                                                   - rows[-1]["allocated_bytes"]["baseline"],
            }
        for tool in order:
            output = os.path.join(arguments.work_dir, f"{tool}-small-{round_index}.json")
            wall, _ = run_measure(tool, arguments.cli, SMALL, output)
            walls[tool].append(wall)

    figures = {}
    for tool in tools:
        figures[tool] = {
            "warm_forward_host_median_s": statistics.median(warm[tool]["host"]),
            "warm_forward_overhead_median_s": statistics.median(warm[tool]["overhead"]),
            "warm_forward_gpu_event_median_s": statistics.median(warm[tool]["gpu"]),
            "small_command_wall_median_s": statistics.median(walls[tool]),
            "warm_forward_round_medians_s": warm[tool]["round_medians"],
            "small_command_walls_s": walls[tool],
            "warm_forward_samples": len(warm[tool]["host"]),
        }
    comparison = {}
    for metric, target in TARGETS.items():
        ratio = figures["iteragpu"][metric] / figures["peer"][metric]
        comparison[metric] = {"ratio": ratio, "target_ratio_at_most": target, "met": ratio <= target}
    summary = {
        "schema": "iteragpu.gpu-measure-bench",
        "rounds": arguments.rounds,
        "large_configuration": " ".join(LARGE),
        "small_configuration": " ".join(SMALL),
        "figures": figures,
        "comparison": comparison,
        "allocator_counters": counters,
        "allocator_counters_agree": counters["iteragpu"] == counters["peer"],
    }
    with open(arguments.summary, "w", encoding="utf-8") as output:
        json.dump(summary, output, indent=2)
    print_summary(summary)
    return 0


def print_summary(summary):
    figures, comparison = summary["figures"], summary["comparison"]
    print(f"{'metric':<60} {'iteragpu':>12} {'peer':>12} {'ratio':>7} {'target':>7}  met")
    for metric, (label, scale, unit) in LABELS.items():
        mine, peer = figures["iteragpu"][metric] * scale, figures["peer"][metric] * scale
        row = comparison[metric]
        digits = 3 if unit == "s" else 1
        print(f"{label + ' (' + unit + ')':<60} {mine:>12.{digits}f} {peer:>12.{digits}f} {row['ratio']:>7.3f} "
              f"{row['target_ratio_at_most']:>7.3f}  {'yes' if row['met'] else 'NO'}")
    mine, peer = (figures[tool].get("warm_forward_gpu_event_median_s") for tool in ("iteragpu", "peer"))
    if mine is not None and peer is not None:
        print(f"{'warm_forward GPU event time, median (us; no target)':<60} {mine * 1e6:>12.1f} "
              f"{peer * 1e6:>12.1f} {mine / peer:>7.3f}")
    print("(The GPU events are recorded before the host launches the forward's kernels, so the "
          "GPU event time includes the launch work and host - GPU event is mostly the wake-up "
          "after the final synchronize.)")
    spread = {tool: figures[tool]["warm_forward_round_medians_s"] for tool in figures}
    print("warm_forward host medians per round (us): " + "; ".join(
        f"{tool} " + " ".join(f"{value * 1e6:.1f}" for value in values) for tool, values in spread.items()))
    mine, peer = summary["allocator_counters"]["iteragpu"], summary["allocator_counters"]["peer"]
    print("allocator counters (large configuration), iteragpu vs peer:")
    for key in mine:
        same = "same" if mine[key] == peer.get(key) else f"DIFFERENT (peer {peer.get(key)})"
        print(f"  {key:<34} {mine[key]:>12}  {same}")


def print_phase_table(path):
    with open(path, encoding="utf-8") as source:
        result = json.load(source)
    print(f"{'phase':<13} {'rep':>3} {'host ms':>9} {'GPU ms':>9} {'alloc base':>11} {'alloc end':>11} "
          f"{'peak alloc':>11} {'resv base':>11} {'resv end':>11} {'peak resv':>11}")
    for row in result["phases"]:
        gpu = row.get("gpu_event_seconds")
        print(f"{row['phase']:<13} {row['repeat'] or '-':>3} {row['host_seconds'] * 1e3:>9.3f} "
              f"{(gpu * 1e3 if gpu is not None else float('nan')):>9.3f} "
              f"{row['allocated_bytes']['baseline']:>11} {row['allocated_bytes']['end']:>11} "
              f"{row['peak_allocated_bytes']:>11} {row['reserved_bytes']['baseline']:>11} "
              f"{row['reserved_bytes']['end']:>11} {row['peak_reserved_bytes']:>11}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", help="the iteragpu executable")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--work-dir", default="gpu-measure-bench")
    parser.add_argument("--summary", default="gpu-measure-bench.json")
    parser.add_argument("--print-summary", metavar="FILE", help="print a saved summary and stop")
    parser.add_argument("--phase-table", metavar="FILE", help="print a measurement's phases and stop")
    arguments = parser.parse_args()
    if arguments.print_summary:
        with open(arguments.print_summary, encoding="utf-8") as source:
            print_summary(json.load(source))
        return 0
    if arguments.phase_table:
        print_phase_table(arguments.phase_table)
        return 0
    if not arguments.cli:
        parser.error("--cli is required to run the benchmark")
    return benchmark(arguments)


if __name__ == "__main__":
    sys.exit(main())
