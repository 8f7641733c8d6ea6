#!/usr/bin/env python3
"""The `iteragpu measure` protocol written directly in PyTorch: the performance peer.

Same model (Linear(width→hidden) → GELU → Linear(hidden→width), seeded default
initialisation on the CPU, converted to the dtype, then moved to the GPU), same seeded input
created on the GPU, same phases and the same order of calls inside each phase as
libiteragpu/src/phase_measurer.cpp (synchronize, baseline counters, reset peaks, start event,
host clock, work, stop event, synchronize, host clock, end counters), same caching-allocator
counters. It writes a JSON file of roughly the same shape as the CLI's, so
tests/bench/gpu_measure_bench.py can compare the two. Not a product: no schema, few checks.

    python3 tests/bench/measure_peer.py --device cuda:0 --batch 2 --context 128 \
        --width 1024 --dtype float32 --warmup 3 --repeats 50 --output peer.json
"""

import argparse
import json
import os
import sys
import time


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--context", type=int, default=16)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=0, help="0 = 4 × width")
    parser.add_argument("--dtype", choices=["float32", "float16", "bfloat16"], default="float32")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20260924)  # the CLI's default
    parser.add_argument("--output", required=True)
    return parser.parse_args()


def main():
    args = parse_arguments()
    if os.path.exists(args.output):
        sys.exit(f"measure_peer: --output: {args.output} already exists")
    import torch  # after the argument checks, as the CLI loads LibTorch only when needed
    from torch import nn

    if not torch.cuda.is_available():
        print(f"measure_peer: no GPU runtime available (torch {torch.__version__})", file=sys.stderr)
        return 2
    device = torch.device(args.device)
    if device.index is None or device.index >= torch.cuda.device_count():
        print(f"measure_peer: {args.device} does not exist", file=sys.stderr)
        return 2
    dtype = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[args.dtype]
    hidden = args.hidden or 4 * args.width

    # Device selection, as the plugin's open(): the caching allocator is set up, nothing counted.
    torch.cuda.set_device(device)
    torch.empty(0, device=device)
    start_event = torch.cuda.Event(enable_timing=True)
    stop_event = torch.cuda.Event(enable_timing=True)

    def counters():
        stats = torch.cuda.memory_stats(device)
        return {
            "allocated": stats.get("allocated_bytes.all.current", 0),
            "reserved": stats.get("reserved_bytes.all.current", 0),
            "peak_allocated": stats.get("allocated_bytes.all.peak", 0),
            "peak_reserved": stats.get("reserved_bytes.all.peak", 0),
        }

    rows = []

    def phase(name, repeat, forwards, work):
        torch.cuda.synchronize(device)
        baseline = counters()
        torch.cuda.reset_peak_memory_stats(device)
        start_event.record()
        start = time.perf_counter()
        work()
        stop_event.record()
        torch.cuda.synchronize(device)
        stop = time.perf_counter()
        end = counters()
        rows.append({
            "phase": name,
            "repeat": repeat,
            "forwards": forwards,
            "host_seconds": stop - start,
            "gpu_event_seconds": start_event.elapsed_time(stop_event) / 1000.0,
            "allocated_bytes": {"baseline": baseline["allocated"], "end": end["allocated"]},
            "reserved_bytes": {"baseline": baseline["reserved"], "end": end["reserved"]},
            "peak_allocated_bytes": end["peak_allocated"],
            "peak_reserved_bytes": end["peak_reserved"],
        })

    state = {}

    def load_model():
        torch.manual_seed(args.seed)
        model = nn.Sequential(nn.Linear(args.width, hidden), nn.GELU(), nn.Linear(hidden, args.width))
        model.eval()
        model.to(dtype)
        model.to(device)
        state["model"] = model

    def create_inputs():
        generator = torch.Generator(device=device)
        generator.manual_seed(args.seed)
        state["input"] = torch.randn((args.batch, args.context, args.width), generator=generator,
                                     device=device, dtype=dtype)

    def forward():
        with torch.inference_mode():
            state["output"] = state["model"](state["input"])

    def warmup():
        for _ in range(args.warmup):
            state.pop("output", None)
            forward()

    phase("model_load", None, 0, load_model)
    phase("inputs", None, 0, create_inputs)
    phase("cold_forward", None, 1, forward)
    if args.warmup > 0:
        state.pop("output", None)
        phase("warmup", None, args.warmup, warmup)
    for repeat in range(1, args.repeats + 1):
        state.pop("output", None)
        phase("warm_forward", repeat, 1, forward)

    element_bytes = torch.empty(0, dtype=dtype).element_size()
    parameter_count = 2 * args.width * hidden + hidden + args.width
    result = {
        "schema": "iteragpu.measurement-peer",
        "environment": {
            "torch_version": torch.__version__,
            "cuda_build_version": torch.version.cuda,
            "gpu": torch.cuda.get_device_name(device),
        },
        "configuration": {
            "device": args.device, "batch": args.batch, "context": args.context,
            "width": args.width, "hidden": hidden, "dtype": args.dtype, "warmup": args.warmup,
            "repeats": args.repeats, "seed": args.seed,
        },
        "synthetic_model": {
            "dtype_bytes": element_bytes,
            "parameter_count": parameter_count,
            "parameter_bytes": parameter_count * element_bytes,
            "input_bytes": args.batch * args.context * args.width * element_bytes,
        },
        "phases": rows,
    }
    with open(args.output, "x", encoding="utf-8") as output:  # never overwrite
        json.dump(result, output, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
