#!/usr/bin/env python3
"""The caching allocator's events of one transformers cell, for explaining a prediction.

Runs the peer of decoder_conformance.py (weights_load, inputs, the cold prefill and N decode
steps) under torch.cuda.memory._record_memory_history and writes, as JSON, every event
(alloc, free, segment_alloc, ...) with its size, address and the innermost transformers/torch
Python frames, plus the phase boundaries. Replaying those events through iteragpu's allocator
model separates "the model of the allocator is wrong" from "the predicted sequence of
allocations is wrong".

Usage: allocator_trace.py SHAPE DTYPE BATCH CONTEXT NEW_TOKENS OUT.json  (on the GPU machine)
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder_conformance  # noqa: E402


def main():
    shape, dtype, batch, context, new_tokens, out = sys.argv[1:7]
    import torch
    folder = os.path.join(os.environ.get("CHECKPOINT_DIR", "/tmp/iteragpu-checkpoints"), f"{shape}-{dtype}")
    import subprocess
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
    json.dump(dict(rows=result["rows"], events=events,
                   segments=[dict(address=s["address"], total_size=s["total_size"], pool=s["segment_type"])
                             for s in snapshot["segments"]]), open(out, "w"))
    print(f"{len(events)} allocator events, {len(snapshot['segments'])} segments -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
