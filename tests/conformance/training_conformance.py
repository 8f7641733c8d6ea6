#!/usr/bin/env python3
"""`iteragpu measure --model DIR --train` against the Python loop, cell by cell, on the GPU machine.

For every cell (training_reference.py's SPEC: shape:dtype:full|lora:batch:sequence) it writes
the checkpoint (random weights at a real shape), runs the loop in Python
(training_reference.py, a fresh process) and `iteragpu measure --train` (a fresh process,
its measurement file read back), and compares: every counter of every row, the rows' names,
each step's loss, the parameter counts. Losses are compared as far as the loop repeats itself:
where they differ, the Python loop runs again (up to --reference-repeats times, since two runs
may agree by chance on a step where a third does not), and from the earliest step at which a
run differs from the first (a kernel not deterministic run to run, which AdamW's first step
amplifies into ±lr) the losses cannot be equalled and are reported, not counted. Prints one
line per cell and each difference; writes both sides and the verdicts as JSON. Exit status 1
when any cell differs.

With --kernel-trace LIB (tests/conformance/kernel_trace.c built against CUPTI, as gpu-check builds
it), the cells named by --kernel-cells (default: the first) run once more on each side under the
tracer: every kernel name equal in order, and the kernels' own summed GPU time within ±3 % (the
loop's event time also counts the gaps in which its GPU waits for Python to launch the next
kernel; the kernels' own time does not).

Usage: training_conformance.py --cli BIN --work-dir DIR --summary FILE [--keep DIR] [--cells SPEC ...]
                               [--kernel-trace LIB [--kernel-cells SPEC ...]] [--reference-repeats N]
  --keep DIR: keep each cell's `measure --train` file there, named after the cell (a measured
  training rate for `packages --train --measurement`)
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder_conformance  # noqa: E402
import training_reference  # noqa: E402

COUNTERS = training_reference.COUNTERS
# This script's runs kept as records (`iteragpu measure --train` beside the loop), oldest first:
# where a cell was measured again after a change of the module, the latest counts. Read by the
# prediction check (tests/prediction/training_prediction_check.py) and the side-by-side table.
RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recorded")
COMMAND_RECORDS = [os.path.join(RECORDED, name) for name in (
    "training-conformance-cli-h100-2026-12-06.json",
    "training-conformance-cli-h100-2026-12-06-d17b743.json",
    "training-conformance-cli-h100-2026-12-06-fe5b426.json",
    "training-conformance-cli-h100-2026-12-07-bb09e19.json",
    "training-conformance-cli-h100-2026-12-07-e584a97.json",
    "training-conformance-cli-h100-2026-12-07-91c043d.json",
    "training-conformance-cli-h100-2026-12-07-09ffe91.json")]
DEFAULT_CELLS = ["llama-2-layers:bfloat16:full:1:128", "llama-2-layers:bfloat16:lora:1:128",
                 "llama-2-layers:bfloat16:full:1:128:gc", "llama-2-layers:bfloat16:lora:1:128:gc",
                 "llama-1b:bfloat16:full:1:512", "llama-1b:bfloat16:full:1:512:gc",
                 "qwen2-1.5b:bfloat16:lora:2:1024", "qwen3-0.6b:bfloat16:full:2:1024",
                 "llama-8b:bfloat16:lora:4:2048:gc"]


def compare(reference, measured):
    """The differences, one line each: rows, counters, losses, parameter counts."""
    problems = []
    names = [(r["phase"], r["step"]) for r in reference["rows"]]
    if names != [(r["phase"], r["step"]) for r in measured["rows"]]:
        return [f"rows differ: {names} against {[(r['phase'], r['step']) for r in measured['rows']]}"]
    for ref, got in zip(reference["rows"], measured["rows"]):
        for counter in COUNTERS:
            if ref[counter] != got[counter]:
                problems.append(f"{ref['phase']}{'' if ref['step'] is None else '-' + str(ref['step'])} {counter}: "
                                f"Python {ref[counter]:,}, iteragpu {got[counter]:,} ({got[counter] - ref[counter]:+,})")
    repeatable = reference.get("repeatable_steps", len(reference["losses"]))
    if reference["losses"][:repeatable] != measured["losses"][:repeatable]:
        problems.append(f"losses: Python {reference['losses']}, iteragpu {measured['losses']}")
    for key in ("parameters", "trainable_parameters"):
        if reference[key] != measured[key]:
            problems.append(f"{key}: Python {reference[key]:,}, iteragpu {measured[key]:,}")
    return problems


def iteragpu_run(path):
    """The rows, losses and parameter counts of an iteragpu measurement file, as the loop writes them."""
    document = json.load(open(path))
    rows = [dict(phase=r["phase"], step=r.get("step"), host_seconds=r["host_seconds"],
                 gpu_event_seconds=r["gpu_event_seconds"], **decoder_conformance.counters_of(r))
            for r in document["phases"]]
    run = document["training_run"]
    return dict(rows=rows, losses=[step["loss"] for step in run["losses"]], parameters=run["parameters"],
                trainable_parameters=run["trainable_parameters"], attention_backend=run["attention_backend"],
                device_used_bytes=run["device_used_bytes"],
                trained_tokens_per_second=run["trained_tokens_per_second"])


def trace_kernels(args, spec, run_reference, run_iteragpu):
    """The cell once more on each side under the CUPTI tracer: the comparison of their kernels
    (names in order, summed GPU time as iteragpu / the loop) and the problems it shows."""
    traces = {}
    try:
        for side, run in (("python", run_reference), ("iteragpu", run_iteragpu)):
            def run_checked(_, env, side=side, run=run):
                done = run(env)
                if done.returncode != 0:
                    raise RuntimeError(f"{side} exit {done.returncode} under the tracer: "
                                       + (done.stderr.strip().splitlines() or ["?"])[-1])
            traces[side] = decoder_conformance.traced_kernels(args.work_dir, f"{spec.replace(':', '_')}-{side}",
                                                              args.kernel_trace, os.environ, run_checked)
    except (RuntimeError, OSError) as error:
        return None, [f"kernel trace: {error}"]
    mine, peer = traces["iteragpu"], traces["python"]
    differing, first = decoder_conformance.differing_names([n for n, _ in mine], [n for n, _ in peer])
    ratio = sum(t for _, t in mine) / sum(t for _, t in peer)
    trace = dict(same=first is None, first_difference=first, kernels=len(mine), peer_kernels=len(peer),
                 differing=len(differing), kernel_time_ratio=ratio,
                 differences=[dict(position=i, iteragpu=mine[i][0], python=peer[i][0]) for i in differing[:8]])
    problems = []
    if first is not None:
        problems.append(f"kernels: iteragpu {len(mine):,}, Python {len(peer):,}, {len(differing):,} names differ, "
                        f"the first at {first:,}")
        for difference in trace["differences"][:4]:
            problems.append(f"    at {difference['position']:,}: iteragpu {difference['iteragpu'][:90]}, "
                            f"Python {difference['python'][:90]}")
    if abs(ratio - 1) > 0.03:
        problems.append(f"summed kernel GPU time {ratio:.3f}x the Python loop's")
    return trace, problems


def first_difference(losses, others):
    """The index of the first step whose losses differ; len(losses) when none does."""
    return next((step for step, (a, b) in enumerate(zip(losses, others)) if a != b), len(losses))


def repeatable_steps(first, measured, run_reference, reference_file, repeats):
    """How many of the loop's losses it repeats, as far as iteragpu's `measured` losses need: the
    loop runs again, up to `repeats` times, until a run differs from the first at or before the
    first step where `measured` does (atomics in a backward make later steps vary run to run, and
    two runs may agree by chance on a step where a third does not). Returns (the earliest step at
    which a run differed, that run's losses), or (len(first), the last run's losses) when every
    run agreed; (None, None) when no run finished."""
    needed = first_difference(first, measured)
    earliest, shown = len(first), None
    for _ in range(repeats):
        if run_reference().returncode != 0:
            break
        again = json.load(open(reference_file))["losses"]
        differing = first_difference(first, again)
        if shown is None or differing < earliest:
            earliest, shown = differing, again
        if earliest <= needed:
            break
    return (earliest, shown) if shown is not None else (None, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--cells", nargs="*", default=DEFAULT_CELLS)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20260924)
    parser.add_argument("--keep")
    parser.add_argument("--kernel-trace")
    parser.add_argument("--kernel-cells", nargs="*")
    parser.add_argument("--reference-repeats", type=int, default=3,
                        help="where iteragpu's losses differ from the loop's: how many more runs of the loop, "
                             "at most, look for a step where the loop differs from itself")
    args = parser.parse_args()
    kernel_cells = set(args.kernel_cells if args.kernel_cells is not None else args.cells[:1])
    # What training_side_by_side.py names the record by (a record's machine is added by hand).
    summary = dict(steps=args.steps, seed=args.seed, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   driver=f"iteragpu measure --model DIR --train (the CLI, {args.cli}) against training_reference.py's "
                          "loop", cells=[])
    failed = False
    for spec in args.cells:
        cell = training_reference.parse_cell(spec)
        folder = os.path.join(args.work_dir, f"{cell['shape']}-{cell['dtype']}")
        subprocess.run([sys.executable, decoder_conformance.__file__, "--write", cell["shape"], cell["dtype"], folder],
                       check=True, capture_output=True)
        reference_file = os.path.join(args.work_dir, "reference.json")
        measured_file = os.path.join(args.work_dir, "measured.json")
        for stale in (reference_file, measured_file):
            if os.path.exists(stale):
                os.remove(stale)

        def run_reference(env=None):
            return subprocess.run([sys.executable, training_reference.__file__, "--work-dir", args.work_dir,
                                   "--output", reference_file, "--one-cell", spec, "--steps", str(args.steps),
                                   "--seed", str(args.seed)], capture_output=True, text=True, env=env)

        def run_iteragpu(env=None):
            # The loop's defaults: LoRA r16, alpha 32, every projection (training_reference.LORA_TARGETS).
            if os.path.exists(measured_file):
                os.remove(measured_file)
            return subprocess.run([args.cli, "measure", "--device", "cuda:0", "--model", folder, "--dtype",
                                   cell["dtype"], "--train", cell["mode"], "--batch", str(cell["batch"]), "--context",
                                   str(cell["sequence"]), "--steps", str(args.steps), "--seed", str(args.seed),
                                   "--output", measured_file]
                                  + (["--gradient-checkpointing"] if cell["gradient_checkpointing"] else []),
                                  capture_output=True, text=True, env=env)

        python = run_reference()
        iteragpu = run_iteragpu()
        entry = dict(cell=spec)
        if python.returncode != 0 or iteragpu.returncode != 0:
            entry["error"] = (python.stderr.strip().splitlines() or ["?"])[-1] if python.returncode else \
                f"iteragpu exit {iteragpu.returncode}: " + (iteragpu.stderr.strip().splitlines() or ["?"])[-1]
            problems = [entry["error"]]
        else:
            entry["python"] = json.load(open(reference_file))
            entry["iteragpu"] = iteragpu_run(measured_file)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                shutil.copyfile(measured_file, os.path.join(args.keep, spec.replace(":", "_") + ".json"))
            if entry["python"]["losses"] != entry["iteragpu"]["losses"]:
                repeatable, again = repeatable_steps(entry["python"]["losses"], entry["iteragpu"]["losses"],
                                                     run_reference, reference_file, args.reference_repeats)
                if again is not None:
                    entry["python_again_losses"] = again
                    entry["python"]["repeatable_steps"] = repeatable
            problems = compare(entry["python"], entry["iteragpu"])
            if args.kernel_trace and spec in kernel_cells:
                entry["kernel_trace"], trace_problems = trace_kernels(args, spec, run_reference, run_iteragpu)
                problems += trace_problems
        entry["differences"] = problems
        summary["cells"].append(entry)
        failed = failed or bool(problems)
        rows = len(entry.get("python", {}).get("rows", []))
        counters = rows * len(COUNTERS)
        unequal = sum(1 for p in problems if ": Python " in p and not p.startswith(("losses", "parameters",
                                                                                      "trainable")))
        repeatable = entry.get("python", {}).get("repeatable_steps")
        losses = "differ" if any(p.startswith("losses") for p in problems) else "equal"
        if repeatable is not None and repeatable < len(entry["python"]["losses"]):
            losses += (f" up to step {repeatable} (the Python loop run again differs from itself from step "
                       f"{repeatable + 1}: {entry['python']['losses']} then {entry['python_again_losses']}; "
                       f"iteragpu {entry['iteragpu']['losses']})")
        trace = entry.get("kernel_trace")
        kernels = "" if trace is None else (
            f", kernels {trace['kernels']:,} " + ("same in order" if trace["same"] else "DIFFER") +
            f" (summed kernel GPU time {trace['kernel_time_ratio']:.3f}x the loop's)")
        print(f"{spec}: " + ("EQUAL" if not problems else "DIFFERENT") +
              f" — {counters - unequal}/{counters} counters equal, losses {losses}{kernels}", flush=True)
        for problem in problems[:40]:
            print(f"  {problem}", flush=True)
        # Written after every cell: a run stopped part-way keeps the cells it finished.
        with open(args.summary, "w") as out:
            json.dump(summary, out, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
