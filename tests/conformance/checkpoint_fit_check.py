#!/usr/bin/env python3
"""`sweep --model` and `packages --model` at the boundary of a real GPU, on the GPU machine.

On a checkpoint with random weights at a real shape (default: Llama-3-8B-like, bfloat16,
written here; nothing is downloaded) it answers, with measurements:
  1. sweep: `iteragpu sweep --model --vary context --package P` finds the largest context under
     that package GPU's budget (its memory less the footprint outside the allocator) in three
     measurements: the starting point, the predictor's proposal and the value above it, each
     measured peak equal to the prediction;
  2. the footprint: `iteragpu measure --model` at that context, where the card's own figure
     (device memory in use at the end) less the peak reserved is the footprint outside the
     allocator the catalog's GPU memory table records for that GPU;
  3. the boundary: `iteragpu packages --model` says "fits" on P's GPU at that context and "does
     not fit" at the context above it, as the measurements (peak reserved + the footprint)
     say; both measured peaks lie within 1 % of the budget.
Prints one table of checks; exits 1 when any fails.

Usage:
  checkpoint_fit_check.py --cli BIN --work-dir DIR [--shape llama-8b] [--dtype bfloat16]
                          [--batch 64] [--new-tokens 16] [--package h200] [--keep DIR]
                          [--summary FILE] [--sparse --backend PLUGIN]
--sparse writes the checkpoint as headers over sparse data and --backend names a test double,
for trying the script on a machine without a GPU: the checks then fail where the test double's
counters are not the predictor's, as they should.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "prediction"))
from decoder_conformance import SHAPES  # noqa: E402  (standard library only at import)
import checkpoint_prediction_check  # noqa: E402

FIT_OUTSIDE = "outside_allocator_bytes"


def run(command, log):
    """Runs an iteragpu command; its stdout and stderr go to the log. Returns stdout."""
    started = time.monotonic()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(log, "a") as out:
        out.write("$ %s\n%s%s(exit %d, %.1f s)\n\n" % (" ".join(command), done.stdout, done.stderr,
                                                     done.returncode, time.monotonic() - started))
    if done.returncode != 0:
        raise SystemExit("%s exited %d: %s" % (command[1], done.returncode, done.stderr.strip()[-400:]))
    return done.stdout


def gpu_processes():
    """The compute processes nvidia-smi lists ("pid used_memory"), or "" (none, or no nvidia-smi)."""
    try:
        listed = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return "; ".join(line.strip() for line in listed.stdout.splitlines() if line.strip())


def package_row(cli, folder, args, context, log):
    report = json.loads(run([cli, "packages", "--model", folder, "--batch", str(args.batch), "--context",
                             str(context), "--new-tokens", str(args.new_tokens), "--format", "json"], log))
    rows = [row for row in report["packages"] if row["gpu"] == args.package]
    if not rows:
        raise SystemExit("packages --model lists no row for %s" % args.package)
    return rows[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--shape", default="llama-8b", choices=sorted(SHAPES))
    parser.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16"))
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--package", default="h200")
    parser.add_argument("--keep", help="folder for the sweep, the measurement and the commands' output")
    parser.add_argument("--summary", help="JSON file for the checks")
    parser.add_argument("--sparse", action="store_true", help="headers over sparse data (no GPU; a test double)")
    parser.add_argument("--backend", help="backend plugin for every command (a test double)")
    args = parser.parse_args()

    keep = args.keep or os.path.join(args.work_dir, "fit-check")
    os.makedirs(keep, exist_ok=True)
    log = os.path.join(keep, "commands.log")
    folder = os.path.join(args.work_dir, "%s-%s%s" % (args.shape, args.dtype, "-sparse" if args.sparse else ""))
    started = time.monotonic()
    if args.sparse:
        if not os.path.exists(os.path.join(folder, "config.json")):
            checkpoint_prediction_check.write_checkpoint(folder, args.shape, args.dtype)
    else:
        # In a child process: a CUDA context left in this one (about 600 MiB) would be memory
        # the measurements cannot have, and the card's footprint would count it.
        subprocess.run([sys.executable, os.path.join(HERE, "decoder_conformance.py"), "--write", args.shape,
                        args.dtype, folder], check=True)
    print("checkpoint %s (%s, %s) ready in %.1f s" % (folder, args.shape, args.dtype, time.monotonic() - started))
    # The budget is for a card this run has to itself: another process's memory (a CUDA
    # context left by a checkpoint writer) would make the boundary run out of memory.
    others = gpu_processes()
    if others:
        raise SystemExit("other processes hold GPU memory (%s); the boundary needs the card to itself" % others)
    backend = ["--backend", args.backend] if args.backend else []
    cheap = ["--warmup", "0", "--repeats", "1", "--new-tokens", str(args.new_tokens)]

    # 1. The sweep, from a short context, under the package GPU's budget.
    sweep_file = os.path.join(keep, "sweep-context.json")
    if os.path.exists(sweep_file):
        os.remove(sweep_file)
    print(run([args.cli, "sweep", "--model", folder, "--vary", "context", "--context", "16", "--batch",
               str(args.batch), "--package", args.package, "--output", sweep_file] + cheap + backend, log))
    sweep = json.load(open(sweep_file))
    budget = sweep["budget"]["bytes"]
    largest, above = sweep["largest_fitting"], sweep["smallest_not_fitting"]
    points = {point["value"]: point for point in sweep["points"]}
    checks = []

    def check(name, passed, detail):
        checks.append({"check": name, "passed": bool(passed), "detail": detail})

    check("sweep: three measurements", sweep["measurements"] == 3,
          "%d measurements; the predictor proposed %s, the largest context found %s, the smallest over %s"
          % (sweep["measurements"], sweep["predicted_largest"], largest, above))
    check("sweep: the proposal is the boundary", largest is not None and sweep["predicted_largest"] == largest
          and above == largest + 1, "largest %s, above %s" % (largest, above))
    for value in sorted(points):
        point = points[value]
        if point["outcome"] == "out of memory":  # a data point: nothing measured to compare
            check("sweep: context %d out of memory, above the largest that fits" % value,
                  largest is not None and value > largest, point["error"][:160])
            continue
        check("sweep: context %d measured = predicted" % value,
              point["peak_reserved_bytes"] is not None
              and point["peak_reserved_bytes"] == point["predicted_peak_reserved_bytes"],
              "peak reserved measured %s, predicted %s" % (point["peak_reserved_bytes"],
                                                         point["predicted_peak_reserved_bytes"]))
    if largest is None or above is None or largest not in points or above not in points:
        return finish(args, checks, sweep, None)
    measured_at, measured_above = points[largest]["peak_reserved_bytes"], points[above]["peak_reserved_bytes"]
    for value, peak in ((largest, measured_at), (above, measured_above)):
        if peak is not None:
            check("boundary: context %d within 1 %% of the budget" % value, abs(peak - budget) <= budget / 100,
                  "%+d bytes from the budget %d (%+.3f %%)" % (peak - budget, budget, 100.0 * (peak - budget) / budget))

    # 2. The card's own footprint at the boundary: one measurement, as a user would take it.
    fit = package_row(args.cli, folder, args, largest, log)
    measurement_file = os.path.join(keep, "measure-context-%d.json" % largest)
    if os.path.exists(measurement_file):
        os.remove(measurement_file)
    run([args.cli, "measure", "--model", folder, "--batch", str(args.batch), "--context", str(largest),
         "--output", measurement_file] + cheap + backend, log)
    measurement = json.load(open(measurement_file))
    in_use = measurement["decoder_run"].get("device_used_bytes")
    reserved_end = max(row["peak_reserved_bytes"] for row in measurement["phases"]) if measurement["phases"] else None
    outside = None if in_use is None or reserved_end is None else in_use - reserved_end
    check("footprint outside the allocator as recorded", outside == fit[FIT_OUTSIDE],
          "device in use %s − peak reserved %s = %s; the GPU memory table: %s"
          % (in_use, reserved_end, outside, fit[FIT_OUTSIDE]))
    check("the card holds the run", in_use is not None and in_use <= fit["memory_bytes"],
          "device in use %s of %s bytes" % (in_use, fit["memory_bytes"]))

    # 3. packages at the boundary, against the measurements.
    fit_above = package_row(args.cli, folder, args, above, log)
    for value, row, peak in ((largest, fit, measured_at), (above, fit_above, measured_above)):
        measured_fits = peak is not None and peak + fit[FIT_OUTSIDE] <= fit["memory_bytes"]
        check("packages: context %d says '%s'" % (value, row["verdict"]),
              row["verdict"] == ("fits" if measured_fits else "does not fit"),
              "required %s (predicted %s + outside %s) of %s; measured peak %s + outside = %s"
              % (row.get("required_bytes"), row.get("predicted_peak_reserved_bytes"), fit[FIT_OUTSIDE],
                 fit["memory_bytes"], peak, None if peak is None else peak + fit[FIT_OUTSIDE]))
    return finish(args, checks, sweep, {"device_used_bytes": in_use, "peak_reserved_bytes": reserved_end})


def finish(args, checks, sweep, measurement):
    width = max(len(c["check"]) for c in checks)
    print("%-*s  result  detail" % (width, "check"))
    for c in checks:
        print("%-*s  %-6s  %s" % (width, c["check"], "pass" if c["passed"] else "FAIL", c["detail"]))
    failed = [c for c in checks if not c["passed"]]
    print("%d checks, %d failed" % (len(checks), len(failed)))
    if args.summary:
        with open(args.summary, "w") as out:
            json.dump({"shape": args.shape, "dtype": args.dtype, "batch": args.batch, "new_tokens": args.new_tokens,
                       "package": args.package, "budget_bytes": sweep["budget"]["bytes"], "sweep": sweep,
                       "boundary_measurement": measurement, "checks": checks}, out, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
