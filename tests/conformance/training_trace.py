#!/usr/bin/env python3
"""The caching allocator's events of one fine-tuning cell of training_reference.py.

Runs training_reference.run_cell (the loop `measure --train` is to equal) under
torch.cuda.memory._record_memory_history and writes, as JSON, every event (alloc, free,
segment_alloc, ...) with its size, address and frames, plus where each row's events begin and
end. The C++ module's order of requests and frees is read against it: a counter that differs
is found at the first event that differs, not guessed from six totals.

Usage: training_trace.py SPEC OUT.json [--stacks python|all] [--steps N]   (on the GPU machine)
       training_trace.py --show TRACE.json[.gz] [ROW ...]   (anywhere: one line per event)
  SPEC as training_reference.py's: shape:dtype:full|lora:batch:sequence[:gc]
  ROW: a row's name as the table prints it (weights_load, forward-1, ...); all rows when none
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder_conformance  # noqa: E402
import training_reference  # noqa: E402


def show(path, rows):
    """Each row's allocator events, one line each: action, size, the innermost frames that name
    the library code (transformers, PEFT, torch) that made it."""
    import gzip
    trace = json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))
    events = trace["events"]
    for row in trace["result"]["rows"]:
        name = row["phase"] + ("" if row["step"] is None else f"-{row['step']}")
        if rows and name not in rows:
            continue
        start, end = row["events"]
        print(f"== {name}: events {start}..{end}, peak_reserved {row['peak_reserved']:,}, "
              f"allocated {row['allocated_baseline']:,} -> {row['allocated_end']:,}")
        for index in range(start, end):
            e = events[index]
            where = " < ".join(e["frames"][:3])
            print(f"{index:7d} {e['action']:<15} {e['size']:>14,} {where}")


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--show":
        show(sys.argv[2], sys.argv[3:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec")
    parser.add_argument("output")
    parser.add_argument("--stacks", choices=("python", "all"), default="python")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20260924)
    args = parser.parse_args()
    cell = training_reference.parse_cell(args.spec)
    folder = os.path.join(os.environ.get("CHECKPOINT_DIR", "/tmp/iteragpu-checkpoints"),
                          f"{cell['shape']}-{cell['dtype']}")
    subprocess.run([sys.executable, decoder_conformance.__file__, "--write", cell["shape"], cell["dtype"], folder],
                   check=True)
    import torch
    torch.cuda.init()

    def event_count():
        return len(torch.cuda.memory._snapshot()["device_traces"][0])

    bounds = []
    bracket_run = training_reference.PhaseBracket.run

    def marked_run(self, work):
        start = event_count()
        result = bracket_run(self, work)
        bounds.append((start, event_count()))
        return result

    training_reference.PhaseBracket.run = marked_run
    torch.cuda.memory._record_memory_history(max_entries=4_000_000, stacks=args.stacks)
    result = training_reference.run_cell(cell, folder, args.steps, args.seed, 16, 32)
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    events = []
    for e in snapshot["device_traces"][0]:
        frames = [f"{os.path.basename(f['filename'])}:{f['line']}:{f['name']}" for f in e.get("frames", [])
                  if not f["filename"].endswith(("training_trace.py", "decoder_conformance.py"))][:16]
        events.append(dict(action=e["action"], addr=e["addr"], size=e["size"], frames=frames))
    for row, (start, end) in zip(result["rows"], bounds):
        row["events"] = [start, end]
    json.dump(dict(cell=args.spec, steps=args.steps, torch=torch.__version__, stacks=args.stacks,
                   recorded=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), result=result, events=events),
              open(args.output, "w"))
    print(f"{args.spec}: {len(events)} allocator events, losses {result['losses']} -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
