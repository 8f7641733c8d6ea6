#!/usr/bin/env python3
"""Where a checkpoint's decode step spends its host time, and where transformers stops
repeating itself: a diagnosis run on the GPU machine beside decoder_conformance.py.

Four parts, each on one cell (shape:dtype:batch:context, a checkpoint of
decoder_conformance.py's shapes written with random weights):

  repeat   transformers runs the cell's cold sequence and two warm ones in each of two fresh
           processes, every module call's input and output fingerprinted on the GPU; prints
           which sequences give the same tokens and last logits, and for two that differ the
           first module call whose output differs (and whether its input was still equal: the
           module itself is what is not deterministic).
  profile  the PyTorch profiler over warm decode steps of transformers: the ATen ops by host
           (self CPU) time per step.
  probe    attention alone at the decode shapes transformers makes, memory overwritten between
           calls, cuDNN against flash: which gives different bits on the same inputs.
  sdpa     scaled_dot_product_attention alone at the cell's decode shape, with each backend:
           the backend PyTorch picks, host time and GPU time per call, and whether 20 calls on
           the same inputs give the same bits.

Usage: decode_step_anatomy.py --work-dir DIR --cell SPEC [--new-tokens N] [--parts repeat profile sdpa probe]
       [--without-cudnn] [--summary FILE]
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder_conformance  # noqa: E402  (the shapes and the checkpoint writer)


def fingerprint(tensor):
    """A cheap fingerprint computed on the GPU: two sums of the raw bits, one weighted by position.
    Equal bits give equal fingerprints; a changed bit changes the plain sum."""
    import torch
    bits = tensor.detach().contiguous().view(-1)
    bits = bits.view(torch.int16 if bits.element_size() == 2 else torch.int32).to(torch.int64)
    weights = torch.arange(1, bits.numel() + 1, device=bits.device, dtype=torch.int64) % 1000003
    return (int(bits.sum()), int((bits * weights).sum()))


def attention_shape(cell):
    """Query heads, key/value heads and head size of the cell's checkpoint shape."""
    shape = decoder_conformance.SHAPES[cell.split(":")[0]]
    heads = shape["num_attention_heads"]
    return heads, shape["num_key_value_heads"], shape.get("head_dim", shape["hidden_size"] // heads)


def load(folder, dtype):
    import torch
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype), device_map="cuda:0",
                                                 attn_implementation="sdpa")
    model.eval()
    return model


def token_ids(model, batch, context, seed):
    import torch
    torch.cuda.manual_seed(seed)
    return torch.randint(0, model.config.vocab_size, (batch, context), device="cuda:0")


def repeat_process(folder, dtype, batch, context, new_tokens, seed, sequences, without_cudnn):
    """One process: `sequences` whole sequences (the first cold), every module call fingerprinted."""
    import torch
    from transformers import DynamicCache
    if without_cudnn:
        torch.backends.cuda.enable_cudnn_sdp(False)  # PyTorch's next choice: flash attention
    model = load(folder, dtype)
    ids = token_ids(model, batch, context, seed)
    calls = []

    def hook(name):
        def record(module, inputs, output):
            first_in = next((t for t in inputs if torch.is_tensor(t)), None)
            out = output[0] if isinstance(output, tuple) else output
            if torch.is_tensor(out):
                calls.append((name, fingerprint(first_in) if first_in is not None else None, fingerprint(out)))
        return record

    for name, module in model.named_modules():
        if name:
            module.register_forward_hook(hook(name))
    runs = []
    with torch.inference_mode():
        for _ in range(sequences):
            cache, tokens, logits, steps = DynamicCache(config=model.config), [], [], []
            next_ids = ids
            for step in range(new_tokens + 1):
                calls.clear()
                out = model(next_ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
                next_ids = out.logits[:, -1, :].argmax(-1, keepdim=True)
                tokens.append(next_ids[:, 0].tolist())
                logits.append(fingerprint(out.logits[:, -1, :]))
                steps.append(list(calls))
            runs.append(dict(tokens=tokens, logits=logits, calls=steps))
    return runs


def first_difference(a, b):
    """The first step and module call where two runs' fingerprints differ."""
    for step, (calls_a, calls_b) in enumerate(zip(a["calls"], b["calls"])):
        for index, (x, y) in enumerate(zip(calls_a, calls_b)):
            if x[0] != y[0]:
                return dict(step=step, call=index, module=f"{x[0]} / {y[0]}", note="different module order")
            if x[2] != y[2]:
                return dict(step=step, call=index, module=x[0], input_equal=x[1] == y[1])
    return None


def part_repeat(args, folder, dtype, batch, context):
    runs = []
    for process in range(2):
        out = os.path.join(args.work_dir, f"anatomy-repeat-{process}.json")
        subprocess.run([sys.executable, __file__, "--repeat-process", folder, dtype, str(batch), str(context),
                        str(args.new_tokens), str(args.seed), "1" if args.without_cudnn else "0", out], check=True)
        runs += [dict(process=process, sequence=i, **r) for i, r in enumerate(json.load(open(out)))]
    report = []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            a, b = runs[i], runs[j]
            same_tokens = a["tokens"] == b["tokens"]
            same_logits = a["logits"] == b["logits"]
            entry = dict(a=f"process {a['process']} sequence {a['sequence']}",
                         b=f"process {b['process']} sequence {b['sequence']}",
                         same_tokens=same_tokens, same_logits=same_logits)
            if not same_logits:
                entry["first_difference"] = first_difference(a, b)
            report.append(entry)
            print(f"repeat: {entry['a']} vs {entry['b']}: tokens {'same' if same_tokens else 'differ'}, "
                  f"last logits of every step {'same' if same_logits else 'differ'}"
                  + (f"; first differing call: step {entry['first_difference']}" if not same_logits else ""),
                  flush=True)
    return report


def part_profile(args, folder, dtype, batch, context):
    import torch
    from torch.profiler import ProfilerActivity, profile
    from transformers import DynamicCache
    model = load(folder, dtype)
    ids = token_ids(model, batch, context, args.seed)
    steps = 8
    with torch.inference_mode():
        def sequence(profiled):
            cache = DynamicCache(config=model.config)
            out = model(ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
            next_ids = out.logits[:, -1, :].argmax(-1, keepdim=True)
            torch.cuda.synchronize()
            hosts = []
            for _ in range(steps):
                started = time.perf_counter()
                if profiled is not None:
                    with torch.profiler.record_function("decode_step"):
                        out = model(next_ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
                        next_ids = out.logits[:, -1, :].argmax(-1, keepdim=True)
                else:
                    out = model(next_ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
                    next_ids = out.logits[:, -1, :].argmax(-1, keepdim=True)
                hosts.append(time.perf_counter() - started)
                torch.cuda.synchronize()
            return hosts

        sequence(None)  # cold: graphs and caches built
        plain = sequence(None)
        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            profiled = sequence(True)
    averages = profiler.key_averages()
    ops = sorted(((e.key, e.count / steps, e.self_cpu_time_total / steps) for e in averages
                  if e.key != "decode_step"), key=lambda op: -op[2])
    total = sum(op[2] for op in ops)
    print(f"profile: warm decode step host time (launch only, no sync) median {statistics.median(plain) * 1e3:.2f} ms; "
          f"under the profiler {statistics.median(profiled) * 1e3:.2f} ms; self CPU time of all ops "
          f"{total / 1e3:.2f} ms a step", flush=True)
    for name, calls, micros in ops[:20]:
        print(f"    {name:<50} {calls:>7.1f} calls/step  {micros / 1e3:8.3f} ms/step  {micros / calls if calls else 0:8.1f} us/call",
              flush=True)
    return dict(host_step_seconds=plain, profiled_step_seconds=profiled, self_cpu_us_per_step=total,
                ops=[dict(op=n, calls_per_step=c, self_cpu_us_per_step=m) for n, c, m in ops[:40]])


def part_sdpa(args, dtype, batch, context):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    heads, kv_heads, head_dim = attention_shape(args.cell)
    kv = context + 8
    torch.manual_seed(7)
    options = dict(device="cuda:0", dtype=getattr(torch, dtype))
    q = torch.randn(batch, heads, 1, head_dim, **options)
    k = torch.randn(batch, kv_heads, kv, head_dim, **options)
    v = torch.randn(batch, kv_heads, kv, head_dim, **options)
    chosen = torch._fused_sdp_choice(q, k, v, None, 0.0, False, scale=None, enable_gqa=True)
    names = {int(value): name for name, value in SDPBackend.__members__.items()}
    results = dict(chosen=names.get(int(chosen), str(chosen)), shape=[batch, heads, kv_heads, kv, head_dim])
    print(f"sdpa: decode shape q [{batch}, {heads}, 1, {head_dim}], k/v [{batch}, {kv_heads}, {kv}, {head_dim}] {dtype}: "
          f"PyTorch picks {results['chosen']}", flush=True)
    for backend in (None, SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                    SDPBackend.MATH):
        label = "default" if backend is None else backend.name
        try:
            with torch.inference_mode(), (sdpa_kernel([backend]) if backend is not None else contextlib.nullcontext()):
                def call():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=False, enable_gqa=True)
                reference = call()
                for _ in range(20):
                    call()
                torch.cuda.synchronize()
                same = all(torch.equal(call(), reference) for _ in range(20))
                hosts, gpus = [], []
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                for _ in range(5):
                    torch.cuda.synchronize()
                    start.record()
                    began = time.perf_counter()
                    for _ in range(100):
                        call()
                    hosts.append((time.perf_counter() - began) / 100)
                    stop.record()
                    torch.cuda.synchronize()
                    gpus.append(start.elapsed_time(stop) / 1000 / 100)
            results[label] = dict(host_us=statistics.median(hosts) * 1e6, gpu_us=statistics.median(gpus) * 1e6,
                                  repeatable=same)
            print(f"    {label:<20} host {results[label]['host_us']:8.1f} us/call  GPU {results[label]['gpu_us']:8.1f} us/call  "
                  f"20 calls {'bit-identical' if same else 'NOT bit-identical'}", flush=True)
        except RuntimeError as error:
            results[label] = dict(error=str(error).splitlines()[0][:200])
            print(f"    {label:<20} not available: {results[label]['error']}", flush=True)
    return results


def part_probe(args, dtype, batch, context):
    """Attention alone at the decode step's shapes as transformers makes them (the query a
    transposed view, the keys and values grown by concatenation, KV lengths context + 1 ...),
    called 10 times on the same inputs with the caching allocator's free memory overwritten
    between calls: are the bits the same?"""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    heads, kv_heads, head_dim = attention_shape(args.cell)
    options = dict(device="cuda:0", dtype=getattr(torch, dtype))
    torch.manual_seed(11)
    results = []
    for kv in (context + 1, context + 2, context + 8):
        for layout in ("transposed", "contiguous"):
            q = torch.randn(batch, 1, heads, head_dim, **options).transpose(1, 2)
            if layout == "contiguous":
                q = q.contiguous()
            k = torch.cat([torch.randn(batch, kv_heads, kv - 1, head_dim, **options),
                           torch.randn(batch, kv_heads, 1, head_dim, **options)], dim=2)
            v = torch.cat([torch.randn(batch, kv_heads, kv - 1, head_dim, **options),
                           torch.randn(batch, kv_heads, 1, head_dim, **options)], dim=2)
            for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION):
                with torch.inference_mode(), sdpa_kernel([backend]):
                    outputs = []
                    for _ in range(10):
                        scratch = torch.empty(256 << 20, dtype=torch.uint8, device="cuda:0").random_()
                        del scratch
                        outputs.append(F.scaled_dot_product_attention(q, k, v, is_causal=False, enable_gqa=True).clone())
                    distinct = len({fingerprint(o) for o in outputs})
                results.append(dict(kv=kv, query=layout, backend=backend.name, distinct_results_of_10=distinct))
                print(f"probe: kv {kv}, query {layout}, {backend.name}: {distinct} distinct result(s) of 10", flush=True)
    return results


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--repeat-process":
        folder, dtype, batch, context, new_tokens, seed, without_cudnn, out = sys.argv[2:10]
        runs = repeat_process(folder, dtype, int(batch), int(context), int(new_tokens), int(seed), 3,
                              without_cudnn == "1")
        json.dump(runs, open(out, "w"))
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--cell", required=True)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--seed", type=int, default=20260924)
    parser.add_argument("--parts", nargs="+", default=["repeat", "profile", "sdpa"])
    parser.add_argument("--without-cudnn", action="store_true",
                        help="repeat: transformers with PyTorch's cuDNN attention disabled")
    parser.add_argument("--summary")
    args = parser.parse_args()
    shape, dtype, batch, context = args.cell.split(":")
    batch, context = int(batch), int(context)
    os.makedirs(args.work_dir, exist_ok=True)
    folder = os.path.join(args.work_dir, f"{shape}-{dtype}")
    subprocess.run([sys.executable, decoder_conformance.__file__, "--write", shape, dtype, folder], check=True)
    summary = dict(cell=args.cell)
    if "sdpa" in args.parts:
        summary["sdpa"] = part_sdpa(args, dtype, batch, context)
    if "probe" in args.parts:
        summary["probe"] = part_probe(args, dtype, batch, context)
    if "profile" in args.parts:
        summary["profile"] = part_profile(args, folder, dtype, batch, context)
    if "repeat" in args.parts:
        summary["repeat"] = part_repeat(args, folder, dtype, batch, context)
    if args.summary:
        json.dump(summary, open(args.summary, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
