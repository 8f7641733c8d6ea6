#!/usr/bin/env python3
"""A checkpoint's warm decode step and its loading, `iteragpu measure --model` against
transformers, side by side as ratios in one run, on the GPU machine.

Target (issue: real checkpoints on the GPU): the decode step's host time ≤ 0.25 of
transformers' with the same kernels and no Python between them; loading is reported as bytes
per second from the files to the GPU against transformers' from_pretrained.

Each cell is the conformance step's own comparison (decoder_conformance.compare_cell: a
checkpoint with random weights written on that machine, then transformers and iteragpu each in
fresh processes) over --rounds rounds of the two processes alternating, so a change in the
machine's speed shows as spread instead of as a ratio. Printed per cell: the warm decode step's
host time (median of the warm rows, first round) on each side, the ratio's median over the
rounds with its lowest and highest round, and weights_load as the checkpoint's bytes over each
side's host seconds (page cache warm: the checkpoint was just written).

Usage: python3 tests/bench/decode_step_bench.py --cli BIN --work-dir DIR [--cells SPEC ...]
       [--rounds N] [--json FILE]      (SPEC as decoder_conformance.py: shape:dtype:batch:context)
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "conformance"))
import decoder_conformance  # noqa: E402  (the comparison this benchmark times)


def checkpoint_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder)
               if name.endswith(".safetensors"))


def timing_row(result, weight_bytes):
    """One line of the table from compare_cell's result and the checkpoint's size in bytes."""
    if "ratios" not in result:
        return f"{result['cell']:<34} failed: {'; '.join(result.get('problems', []))[:200]}"
    mine, peer = result["decode_host_seconds"]
    low, high = result["spreads"].get("decode_host", (0, 0))
    mine_rate, peer_rate = weight_bytes / result["load_seconds"], weight_bytes / result["peer_load_seconds"]
    return (f"{result['cell']:<34} {mine * 1e3:>8.2f} ms {peer * 1e3:>8.2f} ms   "
            f"{result['ratios']['decode_host']:.3f} ({low:.3f}-{high:.3f}) x{result['rounds']}   "
            f"{weight_bytes / 1e9:>6.2f} GB {mine_rate / 1e9:>6.2f} GB/s {peer_rate / 1e9:>6.2f} GB/s  "
            f"{mine_rate / peer_rate:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--cells", nargs="+", default=["llama-1b:bfloat16:1:128", "llama-1b:bfloat16:4:2048"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write every cell's result here")
    options = parser.parse_args()
    args = decoder_conformance.argument_parser().parse_args(
        ["--cli", options.cli, "--work-dir", options.work_dir, "--rounds", str(options.rounds)])
    os.makedirs(args.work_dir, exist_ok=True)
    print("cell                                decode step host, warm median   ratio iteragpu/transformers     "
          "weights_load (iteragpu, transformers, ratio)")
    print("                                   iteragpu  transformers        median (lowest-highest) x rounds")
    results = []
    for cell in options.cells:
        result = decoder_conformance.compare_cell_or_failure(args, cell)
        size = checkpoint_bytes(result["checkpoint_folder"]) if "checkpoint_folder" in result else 0
        results.append(dict(result, checkpoint_bytes=size))
        print(timing_row(result, size), flush=True)
    print("Target: decode step host time ratio <= 0.25 (same kernels, no Python between them).")
    if options.json:
        with open(options.json, "w") as out:
            json.dump(results, out, indent=1)
    return 0 if all("ratios" in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
