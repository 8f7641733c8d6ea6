#!/usr/bin/env python3
"""`iteragpu estimate --checkpoint` on a small checkpoint and on sparse 100 GiB ones (a single
file and ten shards behind an index: real headers, the data a hole in the file, so nothing
but the headers could be read quickly), against a `python3 -S` peer doing the same header
read (checkpoint_peer.py). Runs alternate; medians of whole-process wall time and each
process's peak resident memory (wait4) are reported, and the ratios.

Usage: /usr/bin/python3 tests/bench/checkpoint_bench.py [--runs N] [--iteragpu PATH]
Targets (issue: weight memory from the checkpoint): a 100 GiB checkpoint in milliseconds and
the same memory as a small one.
"""
import argparse
import json
import os
import platform
import statistics
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEVNULL = os.open(os.devnull, os.O_WRONLY)
GIB = 1 << 30


def write_checkpoint(path, tensors, sparse):
    """tensors: [(name, dtype, shape, bytes per element)]; returns the data bytes."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape, element_bytes in tensors:
        size = element_bytes
        for dimension in shape:
            size *= dimension
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(text)) + text)
        if sparse:
            file.truncate(8 + len(text) + offset)  # a hole: no data block is written
        else:
            file.write(bytes(offset))
    return offset


def layer_tensors(layers, width, prefix=""):
    """A transformer-like checkpoint: bf16 weights, fp32 norms."""
    tensors = []
    for layer in range(layers):
        base = f"{prefix}model.layers.{layer}."
        for name in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"):
            tensors.append((base + name + ".weight", "BF16", [width, width], 2))
        for name in ("mlp.gate_proj", "mlp.up_proj"):
            tensors.append((base + name + ".weight", "BF16", [4 * width, width], 2))
        tensors.append((base + "mlp.down_proj.weight", "BF16", [width, 4 * width], 2))
        tensors.append((base + "input_layernorm.weight", "F32", [width], 4))
        tensors.append((base + "post_attention_layernorm.weight", "F32", [width], 4))
    return tensors


def run(argv):
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, DEVNULL, 1)])
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed with exit code {os.waitstatus_to_exitcode(status)}")
    return elapsed, usage.ru_maxrss  # KiB


def measure(ours, peer, runs):
    for _ in range(3):
        run(ours)
        run(peer)
    samples = {"ours": [], "peer": []}
    for _ in range(runs):
        samples["ours"].append(run(ours))
        samples["peer"].append(run(peer))
    return {side: (statistics.median(t for t, _ in values), max(m for _, m in values))
            for side, values in samples.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--iteragpu", default=os.path.join(ROOT, "build", "bin", "iteragpu"))
    parser.add_argument("--python", default="/usr/bin/python3")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="iteragpu-checkpoint-bench-") as work:
        small = os.path.join(work, "small.safetensors")
        small_bytes = write_checkpoint(small, layer_tensors(2, 64), sparse=False)
        huge = os.path.join(work, "huge.safetensors")
        # 80 layers of width 6656: 720 tensors, 105.6 GiB declared.
        huge_bytes = write_checkpoint(huge, layer_tensors(80, 6656), sparse=True)
        sharded = os.path.join(work, "sharded")
        os.mkdir(sharded)
        weight_map = {}
        for shard in range(10):
            name = f"model-{shard + 1:05d}-of-00010.safetensors"
            tensors = layer_tensors(8, 6656, prefix=f"s{shard}.")
            write_checkpoint(os.path.join(sharded, name), tensors, sparse=True)
            weight_map.update({tensor[0]: name for tensor in tensors})
        index = os.path.join(sharded, "model.safetensors.index.json")
        with open(index, "w") as file:
            json.dump({"metadata": {}, "weight_map": weight_map}, file)
        allocated = sum(os.stat(os.path.join(root, f)).st_blocks * 512
                        for root, _, files in os.walk(work) for f in files)
        print(f"{time.strftime('%Y-%m-%d')} {platform.machine()} {os.cpu_count()} CPUs, {args.runs} interleaved"
              f" runs each; medians of whole-process wall time, largest peak RSS")
        print(f"checkpoints: small {small_bytes:,} data bytes; one file of {huge_bytes / GIB:.1f} GiB and ten"
              f" shards of {huge_bytes / 10 / GIB:.1f} GiB each declared, {allocated / 2**20:.1f} MiB on disk in all")
        results = {}
        for label, path in (("small", small), ("105.6 GiB file", huge), ("105.6 GiB, 10 shards", index)):
            results[label] = measure([args.iteragpu, "estimate", "--checkpoint", path],
                                     [args.python, "-S", os.path.join(HERE, "checkpoint_peer.py"), path],
                                     args.runs)
            ours, peer = results[label]["ours"], results[label]["peer"]
            print(f"{label:<20} iteragpu {ours[0] * 1e3:7.2f} ms {ours[1] / 1024:6.1f} MiB   "
                  f"python3 -S peer {peer[0] * 1e3:7.2f} ms {peer[1] / 1024:6.1f} MiB   "
                  f"time ratio {ours[0] / peer[0]:.3f}")
        small_rss = results["small"]["ours"][1]
        worst = max(results[label]["ours"] for label in results)
        same_memory = max(r["ours"][1] for r in results.values()) <= small_rss * 1.10
        milliseconds = max(r["ours"][0] for r in results.values()) < 0.1
        print(f"targets: milliseconds for 105.6 GiB {'met' if milliseconds else 'MISSED'}"
              f" (slowest {worst[0] * 1e3:.2f} ms); same memory as the small one"
              f" {'met' if same_memory else 'MISSED'} (within 10 % of {small_rss / 1024:.1f} MiB)")
        return 0 if milliseconds and same_memory else 1


if __name__ == "__main__":
    sys.exit(main())
