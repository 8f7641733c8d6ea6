#!/usr/bin/env python3
"""The work bound of a request, as whole commands: the time and peak memory of
`iteragpu predict` and `iteragpu packages` refusing warmup 100,000 × repeats 100,000 ×
new tokens 4,000 (800,204,003 rows), side by side with the largest request the bound accepts
on the same checkpoint (a Llama-3-8B-shaped one, 32 layers, written sparse: 1,000,000 layer
steps) and a one-sequence prediction. Runs alternate, so all see the same machine state;
medians of wall time and the largest peak resident memory (ru_maxrss) are reported.

Usage: /usr/bin/python3 tests/bench/request_bound_bench.py [--runs N] [--iteragpu PATH]
Targets (issue: Nothing false): the refusal in under 100 ms using under 50 MB.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from safetensors_files import write_safetensors  # noqa: E402
DEVNULL = os.open(os.devnull, os.O_WRONLY)


def write_llama_8b_shape(folder):
    os.mkdir(folder)
    layers, hidden, intermediate, heads, kv_heads, vocab = 32, 4096, 14336, 32, 8, 128256
    head_dim = hidden // heads
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
              "intermediate_size": intermediate, "num_hidden_layers": layers, "num_attention_heads": heads,
              "num_key_value_heads": kv_heads, "vocab_size": vocab, "torch_dtype": "bfloat16",
              "max_position_embeddings": 131072}
    with open(os.path.join(folder, "config.json"), "w") as out:
        json.dump(config, out)
    shapes = [("model.embed_tokens.weight", [vocab, hidden])]
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes += [(p + "self_attn.q_proj.weight", [heads * head_dim, hidden]),
                   (p + "self_attn.k_proj.weight", [kv_heads * head_dim, hidden]),
                   (p + "self_attn.v_proj.weight", [kv_heads * head_dim, hidden]),
                   (p + "self_attn.o_proj.weight", [hidden, heads * head_dim]),
                   (p + "mlp.gate_proj.weight", [intermediate, hidden]),
                   (p + "mlp.up_proj.weight", [intermediate, hidden]),
                   (p + "mlp.down_proj.weight", [hidden, intermediate]),
                   (p + "input_layernorm.weight", [hidden]), (p + "post_attention_layernorm.weight", [hidden])]
    shapes += [("model.norm.weight", [hidden]), ("lm_head.weight", [vocab, hidden])]
    write_safetensors(os.path.join(folder, "model.safetensors"), [(name, "BF16", shape) for name, shape in shapes])


def run(argv, expected_status):
    """Wall seconds and peak resident kilobytes of one run."""
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, DEVNULL, 1), (os.POSIX_SPAWN_DUP2, DEVNULL, 2)])
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != expected_status:
        sys.exit(f"{' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}, expected {expected_status}")
    return elapsed, usage.ru_maxrss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--iteragpu", default=os.path.join(ROOT, "build", "bin", "iteragpu"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        model = os.path.join(scratch, "llama-3-8b-shape")
        write_llama_8b_shape(model)
        predict = [args.iteragpu, "predict", "--compute-capability", "9.0", "--model", model]
        refused = ["--warmup", "100000", "--repeats", "100000", "--new-tokens", "4000"]
        # 2 sequences of 1 + 15,624 steps: 31,250 forwards × 32 layers = 1,000,000 layer steps.
        largest = ["--warmup", "0", "--repeats", "1", "--new-tokens", "15624", "--context", "16"]
        cases = [
            ("predict, refused (800,204,003 rows)", predict + refused, 2, args.runs),
            ("packages, refused (800,204,003 rows)",
             [args.iteragpu, "packages", "--model", model] + refused, 2, args.runs),
            ("predict, one sequence of 16 new tokens", predict + ["--warmup", "0", "--repeats", "1"], 0, args.runs),
            ("predict, the largest accepted (1,000,000 layer steps)", predict + largest, 0, max(2, args.runs // 5)),
        ]
        results = {name: ([], []) for name, *_ in cases}
        for name, argv, status, _ in cases:  # warm the page cache
            run(argv, status)
        for round_index in range(args.runs):
            for name, argv, status, runs in cases:
                if round_index < runs:
                    seconds, kilobytes = run(argv, status)
                    results[name][0].append(seconds)
                    results[name][1].append(kilobytes)
    print(f"{datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores, {platform.platform()}")
    print(f"{'command':58} {'median ms':>10} {'max ms':>9} {'peak MB':>8} runs")
    for name, *_ in cases:
        seconds, kilobytes = results[name]
        print(f"{name:58} {statistics.median(seconds) * 1e3:10.1f} {max(seconds) * 1e3:9.1f} "
              f"{max(kilobytes) / 1024:8.1f} {len(seconds)}")
    refusals = [results[name] for name, *_ in cases[:2]]
    met = all(max(s) < 0.1 and max(k) < 50 * 1024 for s, k in refusals)
    print("target (refusal under 100 ms and 50 MB, every run):", "met" if met else "NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
