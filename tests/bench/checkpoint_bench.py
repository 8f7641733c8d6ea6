#!/usr/bin/env python3
"""`iteragpu estimate --checkpoint` on a 100 GB checkpoint against a small one and against a
Python peer reading the same headers (checkpoint_peer.py: struct + json, as the `safetensors`
library reads metadata): whole-process wall time and peak resident memory, side by side.

The checkpoints are sparse files (a header, then a hole), so the benchmark costs no disk:
a Llama-70B-shaped bf16 checkpoint cut to 56 layers (507 tensors, 100,036,001,792 bytes), as
one file and as an index with 5 GB shards, and the same layout with every dimension divided
by 256 (1.5 MB). Runs alternate (each case's iteragpu, its peer, the next case's, ...);
medians of time; peak RSS is the largest of 5 runs under GNU time (/usr/bin/time, Debian
package `time`).

Usage: /usr/bin/python3 tests/bench/checkpoint_bench.py [--runs N] [--iteragpu PATH]
Targets (issue: weight memory from the checkpoint): the 100 GB estimate takes milliseconds
(whole process under 50 ms; the one file within 20% of the small one's time) and the same
memory as the small one (peak RSS within 1 MiB).
"""
import argparse
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEVNULL = os.open(os.devnull, os.O_WRONLY)


def llama_shaped_layout(divisor):
    hidden, kv, mlp, vocab = 8192 // divisor, 1024 // divisor, 28672 // divisor, 128256 // divisor
    tensors = [("model.embed_tokens.weight", [vocab, hidden])]
    for layer in range(56):
        p = f"model.layers.{layer}."
        tensors += [(p + "input_layernorm.weight", [hidden]),
                    (p + "self_attn.q_proj.weight", [hidden, hidden]),
                    (p + "self_attn.k_proj.weight", [kv, hidden]),
                    (p + "self_attn.v_proj.weight", [kv, hidden]),
                    (p + "self_attn.o_proj.weight", [hidden, hidden]),
                    (p + "post_attention_layernorm.weight", [hidden]),
                    (p + "mlp.gate_proj.weight", [mlp, hidden]),
                    (p + "mlp.up_proj.weight", [mlp, hidden]),
                    (p + "mlp.down_proj.weight", [hidden, mlp])]
    tensors += [("model.norm.weight", [hidden]), ("lm_head.weight", [vocab, hidden])]
    return tensors


def bf16_bytes(shape):
    size = 2
    for dimension in shape:
        size *= dimension
    return size


def write_sparse(path, tensors):
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in tensors:
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + bf16_bytes(shape)]}
        offset += bf16_bytes(shape)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + offset)  # a hole: no disk used
    if os.stat(path).st_blocks * 512 > 64 << 20:
        sys.exit(f"{path}: this filesystem does not keep sparse files; set TMPDIR to one that does")
    return offset


def write_checkpoints(folder):
    small = os.path.join(folder, "small.safetensors")
    huge = os.path.join(folder, "huge.safetensors")
    write_sparse(small, llama_shaped_layout(256))
    total = write_sparse(huge, llama_shaped_layout(1))
    shards, filled = [[]], 0
    for name, shape in llama_shaped_layout(1):  # at most 5 GB a shard, as Hugging Face saves
        if filled + bf16_bytes(shape) > 5_000_000_000 and shards[-1]:
            shards.append([])
            filled = 0
        shards[-1].append((name, shape))
        filled += bf16_bytes(shape)
    weight_map = {}
    for i, tensors in enumerate(shards):
        shard = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        write_sparse(os.path.join(folder, shard), tensors)
        weight_map.update({name: shard for name, _ in tensors})
    index = os.path.join(folder, "model.safetensors.index.json")
    with open(index, "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    return [("small, 1.5 MB", small), ("100 GB, one file", huge), (f"100 GB, {len(shards)} shards", index)]


def wall_seconds(argv):
    """Wall time of one process; posix_spawn + waitpid, as cli_startup_bench.py."""
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, DEVNULL, 1)])
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed with {os.waitstatus_to_exitcode(status)}")
    return elapsed


def peak_rss_kib(argv):
    """Peak resident memory of one process, through GNU time (ru_maxrss). Not wait4 from here:
    a child spawned by this Python inherits its memory high-water mark at exec (about 14 MiB),
    which would hide the figure; GNU time's own floor is about 1 MiB (/bin/true's is printed)."""
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name] + argv, check=True, stdout=DEVNULL)
        return int(out.read().split()[-1])


def weight_bytes(args, path):
    """Both sides' totals, which must agree before their times are compared."""
    ours = json.loads(subprocess.run([args.iteragpu, "estimate", "--checkpoint", path, "--format", "json"],
                                     check=True, capture_output=True, text=True).stdout)["weights"]["bytes"]
    peer = subprocess.run([args.python, "-S", os.path.join(HERE, "checkpoint_peer.py"), path],
                          check=True, capture_output=True, text=True).stdout.splitlines()[-1].split()[1]
    if str(ours) != peer:
        sys.exit(f"{path}: iteragpu says {ours} bytes, the peer {peer}")
    return int(peer)


def measure(args, cases):
    """Every command of every case in one interleaved loop, so that all see the same machine."""
    commands = []
    for _, path in cases:
        commands += [[args.iteragpu, "estimate", "--checkpoint", path],
                     [args.python, "-S", os.path.join(HERE, "checkpoint_peer.py"), path]]
    for _ in range(3):  # warm the page cache
        for command in commands:
            wall_seconds(command)
    times = [[] for _ in commands]
    for _ in range(args.runs):
        for command, samples in zip(commands, times):
            samples.append(wall_seconds(command))
    return [(statistics.median(samples), max(peak_rss_kib(command) for _ in range(5)))
            for command, samples in zip(commands, times)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--iteragpu", default=os.path.join(ROOT, "build", "bin", "iteragpu"))
    parser.add_argument("--python", default="/usr/bin/python3")
    args = parser.parse_args()
    print(f"{time.strftime('%Y-%m-%d')} {platform.machine()} {os.cpu_count()} CPUs, {args.runs} interleaved"
          f" runs each: median whole-process wall time; peak RSS, largest of 5")
    floor = statistics.median(wall_seconds(["/bin/true"]) for _ in range(args.runs))
    print(f"floor: /bin/true takes {floor * 1e3:.2f} ms in this harness and peaks at"
          f" {peak_rss_kib(['/bin/true']) / 1024:.2f} MiB under GNU time")
    with tempfile.TemporaryDirectory(prefix="iteragpu-checkpoint-bench-") as folder:
        cases = write_checkpoints(folder)
        totals = [weight_bytes(args, path) for _, path in cases]
        figures = measure(args, cases)
    results = []
    for i, (label, _) in enumerate(cases):
        (t, rss), (pt, prss) = figures[2 * i], figures[2 * i + 1]
        results.append((t, rss))
        print(f"{label:<18} {totals[i]:>15,} bytes   iteragpu {t * 1e3:6.2f} ms {rss / 1024:5.2f} MiB"
              f"   peer {pt * 1e3:6.2f} ms {prss / 1024:5.2f} MiB   time ratio {t / pt:.3f}")
    # Size-independence compares the two single files (same tensors, 65,000 times the data);
    # the 21 shards add 21 opens and the index, so they are held to "milliseconds" only.
    (small_t, small_rss), (huge_t, _) = results[0], results[1]
    met = huge_t <= 1.2 * small_t and all(t <= 0.050 and rss - small_rss <= 1024 for t, rss in results[1:])
    print(f"target: 100 GB one file within 20% of the small one's time; every 100 GB case under 50 ms"
          f" and within 1 MiB of the small one's peak RSS: {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
