#!/usr/bin/env python3
"""The caching allocator's events of one transformers cell, for explaining a prediction.

Runs the peer of decoder_conformance.py (weights_load, inputs, the cold prefill and N decode
steps) under torch.cuda.memory._record_memory_history and writes, as JSON, every event
(alloc, free, segment_alloc, ...) with its size, address and the innermost transformers/torch
Python frames, plus the phase boundaries. Replaying those events through iteragpu's allocator
model separates "the model of the allocator is wrong" from "the predicted sequence of
allocations is wrong".

Usage: allocator_trace.py SHAPE DTYPE BATCH CONTEXT NEW_TOKENS OUT.json  (on the GPU machine)
       allocator_trace.py --replay-file OUT.json TRACE.txt  (the file the replay test reads,
                                                             tests/data/allocator-traces/)
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder_conformance  # noqa: E402


def write_replay_file(trace, target):
    """The events as tests/cpp/allocator_trace_replay_test.cpp reads them: `segment ADDRESS BYTES`
    (cudaMalloc returned ADDRESS), `alloc ID BYTES` (requested bytes), `free ID`, and `row NAME`
    with the counters measured at that row's end where the row ended."""
    events, rows = trace["events"], trace["rows"]
    # Where each row starts: the token ids (the one allocation without a transformers frame),
    # then each forward at its embedding.
    starts = [next(i for i, e in enumerate(events) if e["action"] == "alloc" and not e["frames"])]
    starts += [i for i, e in enumerate(events)
               if e["action"] == "alloc" and e["frames"] and "embedding" in e["frames"][0]]
    starts.append(len(events))

    def rounded(size):
        return max(512, (size + 511) // 512 * 512)

    # Allocated bytes before each event. A row ends at the last point before the next row's start
    # where that equals its measured allocated_end: what is freed between rows (the previous
    # sequence's cache) only lowers it. A segment made for the next row's first block stays out.
    allocated = [0]
    for e in events:
        allocated.append(allocated[-1] + {"alloc": rounded(e["size"]),
                                          "free_completed": -rounded(e["size"])}.get(e["action"], 0))
    ends = []
    for row, next_start in zip(rows, starts):
        end = max(k for k in range(next_start + 1) if allocated[k] == row["allocated_end"])
        if end == next_start and end > 0 and events[end - 1]["action"] == "segment_alloc":
            end -= 1
        ends.append(end)

    lines = [f"# The CUDA caching allocator's events of one transformers run on the GPU machine ({trace['recorded']},",
             f"# torch {trace['torch']}): {trace['cell']} (shape:dtype:batch:context), {trace['new_tokens']} new tokens,",
             "# warm-up 0, repeats 1; recorded by tests/conformance/allocator_trace.py.",
             "# segment ADDRESS BYTES | alloc ID BYTES | free ID | row NAME ALLOCATED_END RESERVED_END PEAK_ALLOCATED",
             "# PEAK_RESERVED (measured at the row's end, the peaks reset at its start)"]
    ids, next_id, row_index = {}, 0, 0  # an address is reused once freed: one id per block
    for index in range(len(events) + 1):
        while row_index < len(ends) and ends[row_index] == index:
            row = rows[row_index]
            name = row["phase"] + (f"-{row['sequence']}-{row['step']}" if row["sequence"] else "")
            lines.append(f"row {name} {row['allocated_end']} {row['reserved_end']} {row['peak_allocated']} "
                         f"{row['peak_reserved']}")
            row_index += 1
        if index == len(events):
            break
        e = events[index]
        if e["action"] == "segment_alloc":
            lines.append(f"segment {e['addr']:#x} {e['size']}")
        elif e["action"] == "alloc":
            ids[e["addr"]], next_id = next_id, next_id + 1
            lines.append(f"alloc {ids[e['addr']]} {e['size']}")
        elif e["action"] == "free_completed":
            lines.append(f"free {ids.pop(e['addr'])}")
    with open(target, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def main():
    if sys.argv[1] == "--replay-file":
        write_replay_file(json.load(open(sys.argv[2])), sys.argv[3])
        return 0
    shape, dtype, batch, context, new_tokens, out = sys.argv[1:7]
    import torch
    folder = os.path.join(os.environ.get("CHECKPOINT_DIR", "/tmp/iteragpu-checkpoints"), f"{shape}-{dtype}")
    subprocess.run([sys.executable, decoder_conformance.__file__, "--write", shape, dtype, folder], check=True)
    torch.cuda.init()
    torch.cuda.memory._record_memory_history(max_entries=2_000_000, stacks="python")
    result = decoder_conformance.reference(folder, dtype, int(batch), int(context), new_tokens=int(new_tokens),
                                           warmup=0, repeats=1, seed=20260924)
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    events = []
    for trace in snapshot["device_traces"]:
        for e in trace:
            frames = [f"{os.path.basename(f['filename'])}:{f['line']}:{f['name']}" for f in e.get("frames", [])
                      if "transformers" in f["filename"] or "torch/nn" in f["filename"]][:4]
            events.append(dict(action=e["action"], addr=e["addr"], size=e["size"], frames=frames))
    json.dump(dict(cell=f"{shape}:{dtype}:{batch}:{context}", new_tokens=int(new_tokens), torch=torch.__version__,
                   recorded=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), rows=result["rows"], events=events,
                   segments=[dict(address=s["address"], total_size=s["total_size"], pool=s["segment_type"])
                             for s in snapshot["segments"]]), open(out, "w"))
    print(f"{len(events)} allocator events, {len(snapshot['segments'])} segments -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
