#!/usr/bin/env python3
"""iteragpu measure --model against transformers on the same checkpoint, on the GPU machine.

For every cell (checkpoint shape × dtype × batch × context) it writes a checkpoint with random
weights at a real shape (nothing is downloaded), then runs, each in a fresh process:
  - the peer: transformers' from_pretrained(attn_implementation="sdpa") and the same phase
    protocol as iteragpu (weights_load, inputs, then per sequence a prefill with a fresh
    DynamicCache and one decode step per new token; cold, warm-up and warm sequences), every
    row bracketed the same way: synchronize, counters, reset peaks, event, work, event,
    synchronize, counters;
  - iteragpu measure --model with the same options.
Every counter of every row must be equal, the cold sequence's greedy tokens equal, the last
logits (batch row 0, cold sequence's last step) bit-identical, and the warm prefill and decode
GPU event medians no more than 3 % above transformers' (below, the peer's GPU waited for Python
to launch the same kernels: labelled launch-bound). With --kernel-trace, one more pair of
processes runs under the CUPTI tracer (kernel_trace.c): every kernel name equal in order, and
the kernels' own summed GPU time of the prefill and of the decode forwards within ±3 %, which
event time cannot show where a GPU waits on its host. Prints one table; exits 1 on any
difference.

Usage:
  decoder_conformance.py --cli BIN --work-dir DIR [--cells SPEC ...] [--rounds N] [--kernel-trace LIB]
                         [--summary FILE]
  SPEC: shape:dtype:batch:context[:flash], e.g. llama-1b:bfloat16:1:128
  A cell ending in :flash runs both processes with TORCH_CUDNN_SDPA_DEPRIORITIZED=1, PyTorch's
  own switch that puts its flash attention ahead of cuDNN's: cuDNN's decode-step attention does
  not repeat its bits run to run (decode_step_anatomy.py), so where PyTorch picks it, equal
  tokens and logits can only be asked of a run that repeats itself; with flash they can.
"""

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from gpu_conformance import parse_ncu_csv  # the one reader of ncu's CSV (standard library only at import)

SHAPES = {
    # Llama-3.2-1B: grouped-query attention, llama3 rope scaling, tied embeddings.
    "llama-1b": dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=2048,
                     intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                     num_key_value_heads=8, head_dim=64, vocab_size=128256, max_position_embeddings=131072,
                     rms_norm_eps=1e-5, tie_word_embeddings=True,
                     rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
                                      "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                      "original_max_position_embeddings": 8192}),
    # Qwen2.5-1.5B: q/k/v biases, tied embeddings.
    "qwen2-1.5b": dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", hidden_size=1536,
                       intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                       num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768,
                       rms_norm_eps=1e-6, tie_word_embeddings=True, use_sliding_window=False,
                       rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}),
    # Qwen3-0.6B: q/k norms, head_dim 128 > hidden / heads, tied embeddings.
    "qwen3-0.6b": dict(architectures=["Qwen3ForCausalLM"], model_type="qwen3", hidden_size=1024,
                       intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                       num_key_value_heads=8, head_dim=128, vocab_size=151936, max_position_embeddings=40960,
                       rms_norm_eps=1e-6, tie_word_embeddings=True, use_sliding_window=False,
                       rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}),
    # Llama-3-8B: separate lm_head, 16 GB in bfloat16.
    "llama-8b": dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=4096,
                     intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                     num_key_value_heads=8, vocab_size=128256, max_position_embeddings=8192,
                     rms_norm_eps=1e-5, tie_word_embeddings=False,
                     rope_parameters={"rope_type": "default", "rope_theta": 500000.0}),
}

# Two layers of the Llama-3.2-1B shape, for the kernel-by-kernel check: Nsight Compute
# serializes and times every kernel, and a 16-layer run took over 5 minutes under it.
SHAPES["llama-2-layers"] = dict(SHAPES["llama-1b"], num_hidden_layers=2)

COUNTERS = ("allocated_baseline", "allocated_end", "reserved_baseline", "reserved_end",
            "peak_allocated", "peak_reserved")


class PhaseBracket:
    """A row as iteragpu brackets a phase: synchronize, counters, reset peaks, event, work,
    event, synchronize, counters; the six counters and both times."""

    def __init__(self):
        import torch
        self.torch = torch
        self.start_event = torch.cuda.Event(enable_timing=True)
        self.stop_event = torch.cuda.Event(enable_timing=True)

    def run(self, work):
        cuda = self.torch.cuda
        cuda.synchronize()
        allocated, reserved = cuda.memory_allocated(), cuda.memory_reserved()
        cuda.reset_peak_memory_stats()
        self.start_event.record()
        started = time.perf_counter()
        work()
        self.stop_event.record()
        cuda.synchronize()
        host = time.perf_counter() - started
        return dict(allocated_baseline=allocated, allocated_end=cuda.memory_allocated(),
                    reserved_baseline=reserved, reserved_end=cuda.memory_reserved(),
                    peak_allocated=cuda.max_memory_allocated(), peak_reserved=cuda.max_memory_reserved(),
                    host_seconds=host, gpu_event_seconds=self.start_event.elapsed_time(self.stop_event) / 1000)


def write_checkpoint(shape, dtype, folder):
    if os.path.exists(os.path.join(folder, "config.json")):
        return
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    fields = dict(SHAPES[shape])
    model_type = fields.pop("model_type")
    config = AutoConfig.for_model(model_type, **fields)
    torch.manual_seed(1234)
    with torch.device("cuda:0"):
        model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    model.save_pretrained(folder)
    del model
    torch.cuda.empty_cache()


def reference(folder, dtype, batch, context, new_tokens, warmup, repeats, seed):
    """The peer: transformers, the same rows as iteragpu measure --model."""
    import torch
    from transformers import AutoModelForCausalLM, DynamicCache
    device = torch.device("cuda:0")
    torch.cuda.init()
    rows = []
    bracket = PhaseBracket()

    def row(phase, sequence, repeat, step, work):
        rows.append(dict(phase=phase, sequence=sequence, repeat=repeat, step=step, **bracket.run(work)))

    state = {}

    def load():
        state["model"] = AutoModelForCausalLM.from_pretrained(
            folder, dtype=getattr(torch, dtype), device_map="cuda:0", attn_implementation="sdpa")

    row("weights_load", None, None, None, load)
    model = state["model"]
    model.eval()

    def inputs():
        torch.cuda.manual_seed(seed)
        state["ids"] = torch.randint(0, model.config.vocab_size, (batch, context), device=device)

    row("inputs", None, None, None, inputs)
    tokens, logits_bytes = [], b""
    sequences = [("cold", None)] + [("warmup", r) for r in range(1, warmup + 1)] + \
                [("warm", r) for r in range(1, repeats + 1)]
    with torch.inference_mode():
        for kind, repeat in sequences:
            state.pop("next", None)
            state.pop("cache", None)
            state["cache"] = DynamicCache(config=model.config)
            for step in range(new_tokens + 1):
                def work():
                    nonlocal logits_bytes
                    token_ids = state["ids"] if step == 0 else state["next"]
                    out = model(token_ids, past_key_values=state["cache"], use_cache=True, logits_to_keep=1)
                    state["next"] = out.logits[:, -1, :].argmax(-1, keepdim=True)
                    if kind == "cold":
                        tokens.append(state["next"][0, 0].item())
                        if step == new_tokens:
                            last = out.logits[0, -1].contiguous().cpu()
                            logits_bytes = last.view(torch.int16 if last.element_size() == 2 else torch.int32).numpy().tobytes()
                    del out

                row("prefill" if step == 0 else "decode", kind, repeat, step, work)
    return dict(rows=rows, tokens=tokens, logits_sha256=hashlib.sha256(logits_bytes).hexdigest(),
                attention=f"flash {torch.backends.cuda.flash_sdp_enabled()}")


def counters_of(r):
    """The six counters of a measured or predicted row of an iteragpu measurement file."""
    return dict(allocated_baseline=r["allocated_bytes"]["baseline"], allocated_end=r["allocated_bytes"]["end"],
                reserved_baseline=r["reserved_bytes"]["baseline"], reserved_end=r["reserved_bytes"]["end"],
                peak_allocated=r["peak_allocated_bytes"], peak_reserved=r["peak_reserved_bytes"])


def iteragpu_rows(path):
    document = json.load(open(path))
    rows = []
    for r in document["phases"]:
        rows.append(dict(phase=r["phase"], sequence=r.get("sequence"), repeat=r["repeat"], step=r.get("step"),
                         host_seconds=r["host_seconds"], gpu_event_seconds=r["gpu_event_seconds"],
                         predicted=counters_of(r["predicted"]) if r.get("predicted") else None, **counters_of(r)))
    run = document["decoder_run"]
    return dict(rows=rows, tokens=run["first_sequence_tokens"], logits_sha256=run["last_logits_sha256"],
                attention=run["attention_backend"], document=document)


def warm_median(rows, phase, clock="gpu_event_seconds"):
    times = [r[clock] for r in rows if r["sequence"] == "warm" and r["phase"] == phase]
    return statistics.median(times) if times else None


def parse_cell(cell):
    """shape, dtype, batch, context, the cell's name for its files and the environment both
    processes run with."""
    fields = cell.split(":")
    shape, dtype, batch, context = fields[:4]
    environment = dict(os.environ)
    if fields[4:] == ["flash"]:
        environment["TORCH_CUDNN_SDPA_DEPRIORITIZED"] = "1"
    elif fields[4:]:
        raise SystemExit(f"cell {cell}: the fifth field may only be 'flash'")
    label = "-".join([shape, dtype, f"{batch}x{context}"] + fields[4:])
    return shape, dtype, batch, context, label, environment


def round_ratios(pairs):
    """iteragpu / transformers for each timing round (a pair of row lists: iteragpu's, the
    peer's): warm prefill and decode GPU event medians and warm decode host median. Returns the
    median over the rounds of each ratio, and each ratio's (lowest, highest) round."""
    per_round = {"prefill": [], "decode": [], "decode_host": []}
    for mine, peer in pairs:
        for phase in ("prefill", "decode"):
            a, b = warm_median(mine, phase), warm_median(peer, phase)
            if a and b:
                per_round[phase].append(a / b)
        a, b = warm_median(mine, "decode", "host_seconds"), warm_median(peer, "decode", "host_seconds")
        if a and b:
            per_round["decode_host"].append(a / b)
    ratios = {key: statistics.median(values) for key, values in per_round.items() if values}
    spreads = {key: (min(values), max(values)) for key, values in per_round.items() if values}
    return ratios, spreads


def read_kernel_trace(folder):
    """Every kernel the traced processes of one side ran (kernel_trace.c's files in FOLDER), in
    the order the GPU started them: (name, GPU nanoseconds). A trace that lost records, or whose
    tracer could not start, is refused rather than summed short."""
    kernels = []
    for file_name in sorted(os.listdir(folder)):
        if not file_name.startswith("kernels-"):
            continue
        with open(os.path.join(folder, file_name)) as handle:
            for line in handle:
                start, end, name = line.rstrip("\n").split(",", 2)
                if not (start.isdigit() and end.isdigit()):
                    raise RuntimeError(f"kernel trace {file_name}: {line.strip()}")
                kernels.append((int(start), int(end) - int(start), name))
    if not kernels:
        raise RuntimeError(f"kernel trace: no kernel recorded in {folder}")
    return [(name, nanoseconds) for _, nanoseconds, name in sorted(kernels)]


def traced_kernels(work_dir, name, kernel_trace, environment, run):
    """run(folder, env) once under the CUPTI tracer (kernel_trace.c, the library KERNEL_TRACE),
    its trace and files in WORK_DIR/trace-NAME: the kernels it ran (read_kernel_trace)."""
    folder = os.path.join(work_dir, f"trace-{name}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    run(folder, dict(environment, CUDA_INJECTION64_PATH=kernel_trace, KERNEL_TRACE_DIR=folder))
    return read_kernel_trace(folder)


def kernel_time_by_phase(kernels, new_tokens, sequences):
    """Summed kernel nanoseconds of the prefill forwards and of the decode forwards, or None
    where the run cannot be cut into its sequences × (new_tokens + 1) forwards. Every forward
    ends with its greedy token's argmax, a reduction whose mangled name holds ArgMaxOps, so the
    k-th argmax closes forward k, a prefill when k is a multiple of new_tokens + 1 (each
    sequence: a prefill, then one decode step per new token). The first prefill's share holds
    the loading's and the inputs' few kernels, the same on both sides."""
    times = {"prefill": 0, "decode": 0}
    forward = current = 0
    for name, nanoseconds in kernels:
        current += nanoseconds
        if "ArgMaxOps" in name:
            times["prefill" if forward % (new_tokens + 1) == 0 else "decode"] += current
            forward, current = forward + 1, 0
    return times if forward == sequences * (new_tokens + 1) else None


def differing_names(names_mine, names_peer):
    """Two kernel lists name by name: the positions whose names differ, and the first difference
    (where the shorter list ends, when the lists agree that far); None when they are the same."""
    differing = [i for i, (a, b) in enumerate(zip(names_mine, names_peer)) if a != b]
    first = differing[0] if differing else None
    if first is None and len(names_mine) != len(names_peer):
        first = min(len(names_mine), len(names_peer))
    return differing, first


def compare_kernel_traces(mine, peer, new_tokens, sequences):
    """iteragpu's kernels against transformers', name by name in order, and their summed GPU
    time (whole run, prefill forwards, decode forwards) as ratios iteragpu / transformers."""
    names_mine, names_peer = [name for name, _ in mine], [name for name, _ in peer]
    differing, first = differing_names(names_mine, names_peer)
    # Each pair of names that differ, with where it occurs and the two kernels' own times there.
    pairs = {}
    for i in differing:
        pairs.setdefault((names_mine[i], names_peer[i]), []).append(i)
    differences = [dict(iteragpu=a, transformers=b, positions=where[:8], count=len(where),
                        nanoseconds=(mine[where[0]][1], peer[where[0]][1])) for (a, b), where in pairs.items()]
    ratios = {"total": sum(t for _, t in mine) / sum(t for _, t in peer)}
    phases_mine = kernel_time_by_phase(mine, new_tokens, sequences)
    phases_peer = kernel_time_by_phase(peer, new_tokens, sequences)
    if phases_mine and phases_peer:
        for phase in ("prefill", "decode"):
            if phases_peer[phase]:
                ratios[phase] = phases_mine[phase] / phases_peer[phase]
    return dict(same=first is None, first_difference=first, kernels=len(mine), peer_kernels=len(peer),
                differences=differences, ratios=ratios,
                seconds={"iteragpu": phases_mine, "transformers": phases_peer})


def describe_kernel_trace(trace):
    """The table's kernels column: '1,234 same 1.001/0.999x', or where they part."""
    if trace is None:
        return "-"
    ratios = trace["ratios"]
    times = (f"{ratios['prefill']:.3f}/{ratios['decode']:.3f}x" if "prefill" in ratios and "decode" in ratios
             else f"total {ratios['total']:.3f}x")
    if trace["same"]:
        return f"{trace['kernels']:,} same {times}"
    return f"DIFFER at {trace['first_difference']:,} {times}"


def trace_cell(args, label, environment, run_peer, run_iteragpu):
    """One more pair of processes, each under the CUPTI tracer (kernel_trace.c), apart from the
    timed rounds: the kernels' names in order and their own GPU time, without the gaps a
    waiting GPU adds. Returns the comparison (None when a trace could not be read) and the
    problems it shows."""
    traces = {}
    try:
        for side, run in (("transformers", run_peer), ("iteragpu", run_iteragpu)):
            traces[side] = traced_kernels(args.work_dir, f"{label}-{side}", args.kernel_trace, environment,
                                          lambda folder, env: run(os.path.join(folder, "measurement.json"), env=env))
    except (RuntimeError, OSError, subprocess.CalledProcessError) as error:
        return None, [f"kernel trace: {error}"]
    trace = compare_kernel_traces(traces["iteragpu"], traces["transformers"], args.new_tokens,
                                  sequences=1 + args.warmup + args.repeats)
    problems = []
    if not trace["same"]:
        problems.append(f"kernels: iteragpu {trace['kernels']}, transformers {trace['peer_kernels']}, "
                        f"first difference at {trace['first_difference']}")
        for difference in trace["differences"][:4]:
            mine_ns, peer_ns = difference["nanoseconds"]
            problems.append(f"    {difference['count']} time(s), at {difference['positions']}: iteragpu "
                            f"{difference['iteragpu'][:90]} ({mine_ns / 1e3:.1f} us), transformers "
                            f"{difference['transformers'][:90]} ({peer_ns / 1e3:.1f} us)")
    for part, ratio in sorted(trace["ratios"].items()):
        if abs(ratio - 1) > 0.03:
            problems.append(f"summed kernel GPU time ({part}) {ratio:.3f}x transformers'")
    if set(trace["ratios"]) == {"total"}:
        problems.append("kernel trace: the run could not be cut into forwards at its argmax kernels")
    return trace, problems


def compare_cell(args, cell):
    shape, dtype, batch, context, label, environment = parse_cell(cell)
    batch, context = int(batch), int(context)
    folder = os.path.join(args.work_dir, f"{shape}-{dtype}")
    write_start = time.time()
    subprocess.run([sys.executable, __file__, "--write", shape, dtype, folder], check=True)
    written = time.time() - write_start
    options = dict(new_tokens=args.new_tokens, warmup=args.warmup, repeats=args.repeats, seed=args.seed)

    def run_peer(path, env=environment):
        subprocess.run([sys.executable, __file__, "--peer", folder, dtype, str(batch), str(context),
                        json.dumps(options), path], check=True, env=env)
        return json.load(open(path))

    def run_iteragpu(path, env=environment):
        if os.path.exists(path):
            os.remove(path)
        command = [args.cli, "measure", "--device", "cuda:0", "--model", folder, "--dtype", dtype,
                   "--batch", str(batch), "--context", str(context), "--new-tokens", str(args.new_tokens),
                   "--warmup", str(args.warmup), "--repeats", str(args.repeats), "--seed", str(args.seed),
                   "--output", path]
        result = subprocess.run(command, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            raise RuntimeError(f"iteragpu exit {result.returncode}: {result.stderr.strip()[-400:]}")
        return iteragpu_rows(path)

    peer_file = os.path.join(args.work_dir, f"peer-{label}.json")
    peer = run_peer(peer_file)
    measured_file = os.path.join(args.work_dir, f"iteragpu-{label}.json")
    try:
        mine = run_iteragpu(measured_file)
    except RuntimeError as error:
        return dict(cell=cell, ok=False, problems=[str(error)])
    problems = []
    if len(mine["rows"]) != len(peer["rows"]):
        problems.append(f"{len(mine['rows'])} rows, peer {len(peer['rows'])}")
    equal_counters = total_counters = 0
    # predict --model (recorded by measure --model beside each row) against transformers' counters:
    # reported, not a failure of the measurement's conformance.
    predicted_equal = predicted_total = 0
    prediction_differences = []
    for index, (a, b) in enumerate(zip(mine["rows"], peer["rows"])):
        for counter in COUNTERS if a["predicted"] else ():
            predicted_total += 1
            if a["predicted"][counter] == b[counter]:
                predicted_equal += 1
            elif len(prediction_differences) < 6:
                prediction_differences.append(f"row {index} {a['phase']} {a['sequence'] or ''} {a['step'] or ''} {counter}: "
                                              f"predicted {a['predicted'][counter]}, transformers {b[counter]} "
                                              f"({a['predicted'][counter] - b[counter]:+d})")
    for index, (a, b) in enumerate(zip(mine["rows"], peer["rows"])):
        name = f"{a['phase']}" + (f" {a['sequence']}/{a['repeat']}/{a['step']}" if a["sequence"] else "")
        if (a["phase"], a["sequence"], a["step"]) != (b["phase"], b["sequence"], b["step"]):
            problems.append(f"row {index}: {name} where the peer has {b['phase']} {b['sequence']} {b['step']}")
            continue
        for counter in COUNTERS:
            total_counters += 1
            if a[counter] == b[counter]:
                equal_counters += 1
            elif len(problems) < 12:
                problems.append(f"row {index} {name} {counter}: iteragpu {a[counter]}, transformers {b[counter]} "
                                f"({a[counter] - b[counter]:+d})")
    same_output = mine["tokens"] == peer["tokens"] and mine["logits_sha256"] == peer["logits_sha256"]
    peer_repeatable = None
    if not same_output:
        # Is transformers itself repeatable here? A second peer process on the same cell.
        again = run_peer(peer_file.replace("peer-", "peer-again-"))
        peer_repeatable = again["tokens"] == peer["tokens"] and again["logits_sha256"] == peer["logits_sha256"]
        where = next((i for i, (x, y) in enumerate(zip(mine["tokens"], peer["tokens"])) if x != y), None)
        problems.append(f"tokens {'equal' if where is None else f'differ from step {where}'}, last logits differ; "
                        f"transformers run twice {'gives the same output' if peer_repeatable else 'differs from itself too'}")
    # Timing rounds: the first pair, then (--rounds) more pairs alternating transformers and
    # iteragpu, so a change in the machine's speed between two processes shows as spread
    # instead of a ratio; the ratios are the medians over the rounds.
    pairs = [(mine["rows"], peer["rows"])]
    for round_number in range(2, args.rounds + 1):
        peer_round = run_peer(os.path.join(args.work_dir, f"peer-{label}-round{round_number}.json"))
        try:
            mine_round = run_iteragpu(os.path.join(args.work_dir, f"iteragpu-{label}-round{round_number}.json"))
        except RuntimeError as error:
            problems.append(f"round {round_number}: {error}")
            break
        pairs.append((mine_round["rows"], peer_round["rows"]))
    ratios, spreads = round_ratios(pairs)
    for phase in ("prefill", "decode"):
        # The same kernels take the same GPU time; where transformers' time is longer, its GPU
        # waited for Python to launch them (event time includes those gaps): that cell is
        # labelled launch-bound, not failed. Slower than the peer fails.
        if phase in ratios and ratios[phase] > 1.03:
            a, b = warm_median(mine["rows"], phase), warm_median(peer["rows"], phase)
            problems.append(f"warm {phase} GPU time {ratios[phase]:.3f}x transformers' (median of {len(pairs)} "
                            f"round(s), {spreads[phase][0]:.3f}-{spreads[phase][1]:.3f}; first round "
                            f"{a * 1e3:.3f} ms vs {b * 1e3:.3f} ms)")
    kernel_trace = None
    if args.kernel_trace:
        kernel_trace, trace_problems = trace_cell(args, label, environment, run_peer, run_iteragpu)
        problems += trace_problems
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        for source in (measured_file, peer_file):
            with open(source) as handle, open(os.path.join(args.keep, os.path.basename(source)), "w") as copy:
                copy.write(handle.read())
    weights = mine["rows"][0]
    return dict(cell=cell, ok=not problems, same_output=same_output, peer_repeatable=peer_repeatable, problems=problems, equal_counters=equal_counters,
                counters=total_counters, predicted_equal=predicted_equal, predicted_counters=predicted_total,
                prediction_differences=prediction_differences, ratios=ratios, attention=mine["attention"],
                decode_host_ratio=ratios.get("decode_host"), rounds=len(pairs), spreads=spreads,
                kernel_trace=kernel_trace,
                load_seconds=weights["host_seconds"], peer_load_seconds=peer["rows"][0]["host_seconds"],
                decode_host_seconds=(warm_median(mine["rows"], "decode", "host_seconds"),
                                     warm_median(peer["rows"], "decode", "host_seconds")),
                checkpoint_folder=folder,
                peak_reserved=max(r["peak_reserved"] for r in mine["rows"]),
                device_used=mine["document"]["decoder_run"]["device_used_bytes"], write_seconds=written)


def kernels_of(csv_path):
    """(name, GPU nanoseconds or None) of every kernel in launch order, from ncu --csv (one
    line per kernel and metric; gpu__time_duration.sum is each kernel's own time, replayed alone)."""
    with open(csv_path) as handle:
        return [(kernel["name"], kernel["duration_ns"]) for kernel in parse_ncu_csv(handle.read())]


def compare_kernels(args, cell):
    """The same cell, short (2 new tokens, no warm-up, 1 repeat), under Nsight Compute: the
    kernels iteragpu launches against transformers', name by name, in order."""
    shape, dtype, batch, context, _, environment = parse_cell(cell)
    folder = os.path.join(args.work_dir, f"{shape}-{dtype}")
    subprocess.run([sys.executable, __file__, "--write", shape, dtype, folder], check=True)
    options = dict(new_tokens=2, warmup=0, repeats=1, seed=args.seed)
    ncu = ["ncu", "--clock-control", "none", "--target-processes", "all", "--metrics", "gpu__time_duration.sum", "--csv"]
    peer_csv = os.path.join(args.work_dir, "kernels-peer.csv")
    mine_csv = os.path.join(args.work_dir, "kernels-iteragpu.csv")
    measured = os.path.join(args.work_dir, "kernels-iteragpu.json")
    if os.path.exists(measured):
        os.remove(measured)
    subprocess.run(ncu + ["--log-file", peer_csv, sys.executable, __file__, "--peer", folder, dtype, batch, context,
                          json.dumps(options), os.path.join(args.work_dir, "kernels-peer.json")], check=True, env=environment)
    subprocess.run(ncu + ["--log-file", mine_csv, args.cli, "measure", "--model", folder, "--dtype", dtype,
                          "--batch", batch, "--context", context, "--new-tokens", "2", "--warmup", "0",
                          "--repeats", "1", "--output", measured], check=True, env=environment)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        for source in (peer_csv, mine_csv):
            with open(source) as handle, open(os.path.join(args.keep, os.path.basename(source)), "w") as copy:
                copy.write(handle.read())
    peer_kernels, mine_kernels = kernels_of(peer_csv), kernels_of(mine_csv)
    peer, mine = [name for name, _ in peer_kernels], [name for name, _ in mine_kernels]
    _, first = differing_names(mine, peer)
    same = first is None
    # The GPU time the kernels themselves take (no launch gaps): the sum of their durations.
    # A kernel without its duration (the metric missing from ncu's output) leaves no ratio.
    timed = all(t is not None for _, t in mine_kernels + peer_kernels)
    mine_ns = sum(t for _, t in mine_kernels) if timed else None
    peer_ns = sum(t for _, t in peer_kernels) if timed else None
    ratio = mine_ns / peer_ns if timed and peer_ns else None
    print(f"kernels {cell} (2 new tokens, 2 sequences): iteragpu {len(mine)}, transformers {len(peer)}: "
          + ("the same names in the same order" if same else
             f"first difference at {first}: iteragpu {mine[first] if first is not None and first < len(mine) else '-'}"
             f" / transformers {peer[first] if first is not None and first < len(peer) else '-'}")
          + (f"; summed kernel time {mine_ns / 1e6:.3f} ms vs {peer_ns / 1e6:.3f} ms ({ratio:.3f}x)" if ratio else
             "; no summed kernel time (a kernel without its gpu__time_duration.sum): FAIL"),
          flush=True)
    return dict(cell=cell, same=same, iteragpu=len(mine), transformers=len(peer), first_difference=first,
                kernel_ns=mine_ns, peer_kernel_ns=peer_ns, kernel_time_ratio=ratio)


def argument_parser():
    """The step's options, also read by tests/bench/decode_step_bench.py (one set of defaults)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--cells", nargs="+", default=["llama-1b:bfloat16:1:128"])
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20260924)
    parser.add_argument("--summary")
    parser.add_argument("--keep", help="copy both measurement files of every cell here")
    parser.add_argument("--kernels", help="a cell to compare kernel by kernel under ncu")
    parser.add_argument("--kernel-trace", help="kernel_trace.c built as a library: every cell gets one more pair "
                                               "of processes traced, and its kernels' names and GPU time compared")
    parser.add_argument("--rounds", type=int, default=1,
                        help="timing rounds: pairs of processes, transformers and iteragpu alternating")
    return parser


def compare_cell_or_failure(args, cell):
    """compare_cell, or the cell marked failed with why when one of its processes failed."""
    try:
        return compare_cell(args, cell)
    except subprocess.CalledProcessError as error:
        return dict(cell=cell, ok=False, problems=[f"{error}"])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--write":
        write_checkpoint(sys.argv[2], sys.argv[3], sys.argv[4])
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--peer":
        folder, dtype, batch, context, options, out = sys.argv[2:8]
        result = reference(folder, dtype, int(batch), int(context), **json.loads(options))
        json.dump(result, open(out, "w"))
        return 0
    args = argument_parser().parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    results = []
    for cell in args.cells:
        results.append(compare_cell_or_failure(args, cell))
        r = results[-1]
        print(f"{cell}: {'equal' if r['ok'] else 'DIFFERENT'}", flush=True)
        for problem in r["problems"]:
            print(f"    {problem}", flush=True)
        for difference in r.get("prediction_differences", []):
            print(f"    prediction: {difference}", flush=True)
    print("\nTokens and logits: 'DIFFER, peer too' means transformers run twice on the cell differs from itself"
          " (a kernel that is not deterministic run to run); equality is decided only where it repeats itself.")
    print("GPU time: iteragpu / transformers, warm medians of GPU event time; below 0.97 the peer's GPU waited"
          " for Python to launch the same kernels (launch-bound)." +
          (f" Each ratio is the median of {args.rounds} rounds of the two processes alternating; the"
           " spread of the rounds is printed after the table." if args.rounds > 1 else ""))
    if args.kernel_trace:
        print("Kernels: one more pair of processes under the CUPTI tracer (kernel_trace.c): 'same' when every kernel"
              " name matches in order; then the kernels' own summed GPU time, iteragpu / transformers, of the prefill"
              " and of the decode forwards (no launch gaps), which must lie within ±3 %.")
    print("cell                          counters equal   predicted equal  tokens+logits  GPU time prefill/decode  decode host  load s (peer)  peak reserved  device used  kernels (time prefill/decode)  attention")
    for r in results:
        if "counters" not in r:
            print(f"{r['cell']:<30} failed")
            continue
        ratios = r["ratios"]
        print(f"{r['cell']:<30} {r['equal_counters']:>6}/{r['counters']:<8} "
              f"{r['predicted_equal']:>7}/{r['predicted_counters']:<8} "
              f"{'same' if r['same_output'] else ('DIFFER' if r['peer_repeatable'] else 'DIFFER, peer too'):<14} "
              f"{ratios.get('prefill', 0):.3f}/{ratios.get('decode', 0):.3f}x          "
              f"{r['decode_host_ratio'] or 0:.3f}x      {r['load_seconds']:.2f} ({r['peer_load_seconds']:.2f})   "
              f"{r['peak_reserved']:>13,} {r['device_used']:>13,}  {describe_kernel_trace(r['kernel_trace']):<29}  "
              f"{r['attention']}")
    for r in results:
        if r.get("rounds", 1) > 1:
            print(f"{r['cell']}: lowest-highest of {r['rounds']} rounds: " +
                  ", ".join(f"{key} {low:.3f}-{high:.3f}" for key, (low, high) in sorted(r["spreads"].items())))
    kernels_same = True
    if args.kernels:
        kernels = compare_kernels(args, args.kernels)
        # The same kernels take the same GPU time: their summed durations within ±3 %.
        ratio = kernels["kernel_time_ratio"]
        kernels_same = kernels["same"] and ratio is not None and abs(ratio - 1) <= 0.03
        results.append(dict(kernels=kernels))
    if args.summary:
        json.dump(results, open(args.summary, "w"), indent=1)
    # Output equality is decidable only where transformers repeats itself.
    return 0 if kernels_same and all(r.get("ok", True) or (r.get("peer_repeatable") is False and
                                                         all("logits" in p for p in r["problems"]))
                                     for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
