#!/usr/bin/env python3
"""One fine-tuning step as a user's own PyTorch loop runs it, row by row, on the GPU machine.

The reference that `iteragpu measure --model DIR --train full|lora` (issue 35) is to equal,
recorded before the C++ side exists so that its rules are read from what PyTorch, transformers
and PEFT really allocate. For every cell (checkpoint shape × dtype × full or LoRA × batch ×
sequence length × gradient checkpointing) it writes a checkpoint with random weights at a real
shape (decoder_conformance.write_checkpoint: nothing is downloaded) and runs, in a fresh
process, the loop the issue fixes:

    model = AutoModelForCausalLM.from_pretrained(DIR, dtype=..., device_map="cuda:0",
                                                 attn_implementation="sdpa")     # weights_load
    model = peft.get_peft_model(model, LoraConfig(r, lora_alpha, target_modules,
                                                  lora_dropout=0.0))            # adapters (LoRA)
    model.train(); [model.gradient_checkpointing_enable()]
    opt = torch.optim.AdamW(trainable parameters)                               # defaults
    ids = torch.randint(0, vocab, (batch, sequence))                            # inputs
    per step: out = model(input_ids=ids, labels=ids)                            # forward
              out.loss.backward(); del out                                      # backward
              opt.step(); opt.zero_grad(set_to_none=True)                       # optimizer

every row bracketed as iteragpu brackets a phase: synchronize, counters, reset peaks, event,
work, event, synchronize, counters. The loss is read in the forward row (`.item()`: a
synchronization, no allocation). Writes one JSON document: per cell the rows with their six
counters and times, the losses, the parameter counts, how many trainable parameters received a
gradient, the warm steps' tokens per second and the device memory in use at the end.

Usage:
  training_reference.py --work-dir DIR --output FILE [--cells SPEC ...] [--steps N] [--repeat-cells N]
  SPEC: shape:dtype:full|lora:batch:sequence[:gc], e.g. llama-1b:bfloat16:full:1:512:gc
"""

import argparse
import json
import os
import subprocess
import sys
import time

from decoder_conformance import SHAPES, PhaseBracket, write_checkpoint

COUNTERS = ("allocated_baseline", "allocated_end", "reserved_baseline", "reserved_end",
            "peak_allocated", "peak_reserved")
# Every linear projection of the decoder layers: the default --lora-targets.
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
DEFAULT_CELLS = [
    "llama-1b:bfloat16:full:1:512",
    "llama-1b:bfloat16:full:1:512:gc",
    "qwen2-1.5b:bfloat16:lora:2:1024",
    "qwen3-0.6b:bfloat16:full:2:1024",
    "llama-8b:bfloat16:lora:4:2048:gc",
]


def parse_cell(spec):
    parts = spec.split(":")
    if len(parts) not in (5, 6) or parts[0] not in SHAPES or parts[2] not in ("full", "lora") or \
            (len(parts) == 6 and parts[5] != "gc"):
        raise SystemExit(f"training_reference.py: cell {spec!r}: expected shape:dtype:full|lora:batch:sequence[:gc] "
                         f"with shape one of {', '.join(sorted(SHAPES))}")
    return dict(spec=spec, shape=parts[0], dtype=parts[1], mode=parts[2], batch=int(parts[3]),
                sequence=int(parts[4]), gradient_checkpointing=len(parts) == 6)


def run_cell(cell, folder, steps, seed, lora_rank, lora_alpha):
    """The loop in this process: the rows, the losses and what the run says of itself."""
    import torch
    from transformers import AutoModelForCausalLM
    torch.cuda.init()
    rows = []
    bracket = PhaseBracket()

    def row(phase, step, work):
        rows.append(dict(phase=phase, step=step, **bracket.run(work)))

    state = {}

    def load():
        state["model"] = AutoModelForCausalLM.from_pretrained(
            folder, dtype=getattr(torch, cell["dtype"]), device_map="cuda:0", attn_implementation="sdpa")

    row("weights_load", None, load)
    if cell["mode"] == "lora":
        import peft

        def adapters():
            config = peft.LoraConfig(r=lora_rank, lora_alpha=lora_alpha, target_modules=LORA_TARGETS,
                                     lora_dropout=0.0)
            state["model"] = peft.get_peft_model(state["model"], config)

        row("adapters", None, adapters)
    model = state["model"]
    model.train()
    if cell["gradient_checkpointing"]:
        model.gradient_checkpointing_enable()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable)
    vocab = model.config.vocab_size

    def inputs():
        torch.cuda.manual_seed(seed)
        state["ids"] = torch.randint(0, vocab, (cell["batch"], cell["sequence"]), device="cuda:0")

    row("inputs", None, inputs)
    losses, graded = [], None
    for step in range(1, steps + 1):
        def forward():
            state["out"] = model(input_ids=state["ids"], labels=state["ids"])
            losses.append(state["out"].loss.item())

        def backward():
            state["out"].loss.backward()
            del state["out"]

        def optimizer_step():
            nonlocal graded
            if graded is None:
                graded = sum(p.numel() for p in trainable if p.grad is not None)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

        row("forward", step, forward)
        row("backward", step, backward)
        row("optimizer", step, optimizer_step)

    step_seconds = [sum(r["host_seconds"] for r in rows if r["step"] == step) for step in range(2, steps + 1)]
    step_seconds.sort()
    median = step_seconds[len(step_seconds) // 2] if step_seconds else None
    free, total = torch.cuda.mem_get_info()
    return dict(rows=rows, losses=losses,
                parameters=sum(p.numel() for p in model.parameters()),
                trainable_parameters=sum(p.numel() for p in trainable),
                trainable_parameters_with_gradient=graded,
                trained_tokens_per_second=(cell["batch"] * cell["sequence"] / median) if median else None,
                device_used_bytes=total - free,
                versions=dict(torch=torch.__version__, transformers=__import__("transformers").__version__,
                              peft=__import__("peft").__version__ if cell["mode"] == "lora" else None,
                              cuda=torch.version.cuda, gpu=torch.cuda.get_device_name(0)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--cells", nargs="*", default=DEFAULT_CELLS)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20260924)
    parser.add_argument("--lora-rank", type=int, default=16)
    parser.add_argument("--lora-alpha", type=int, default=32)
    parser.add_argument("--repeat-cells", type=int, default=0,
                        help="run the first N cells a second time, in another process, to see the counters repeat")
    parser.add_argument("--one-cell", help=argparse.SUPPRESS)  # the child process's cell
    args = parser.parse_args()

    if args.one_cell:
        cell = parse_cell(args.one_cell)
        folder = os.path.join(args.work_dir, f"{cell['shape']}-{cell['dtype']}")
        result = run_cell(cell, folder, args.steps, args.seed, args.lora_rank, args.lora_alpha)
        with open(args.output, "w") as out:
            json.dump(result, out)
        return 0

    cells = [parse_cell(spec) for spec in args.cells]
    runs = [(cell, 1) for cell in cells] + [(cell, 2) for cell in cells[:args.repeat_cells]]
    document = dict(loop="training_reference.py", steps=args.steps, seed=args.seed, lora_rank=args.lora_rank,
                    lora_alpha=args.lora_alpha, lora_targets=LORA_TARGETS, cells=[])
    failed = False
    for cell, attempt in runs:
        folder = os.path.join(args.work_dir, f"{cell['shape']}-{cell['dtype']}")
        write_checkpoint(cell["shape"], cell["dtype"], folder)
        part = os.path.join(args.work_dir, f"cell-{len(document['cells'])}.json")
        started = time.perf_counter()
        child = subprocess.run([sys.executable, __file__, "--work-dir", args.work_dir, "--output", part,
                                "--one-cell", cell["spec"], "--steps", str(args.steps), "--seed", str(args.seed),
                                "--lora-rank", str(args.lora_rank), "--lora-alpha", str(args.lora_alpha)],
                               capture_output=True, text=True)
        entry = dict(cell, attempt=attempt, wall_seconds=round(time.perf_counter() - started, 1))
        if child.returncode != 0:
            failed = True
            entry["error"] = child.stderr.strip().splitlines()[-1] if child.stderr.strip() else f"exit {child.returncode}"
        else:
            with open(part) as result:
                entry.update(json.load(result))
        document["cells"].append(entry)
        peak = max((r["peak_reserved"] for r in entry.get("rows", [])), default=0)
        print(f"{cell['spec']} (run {attempt}): " +
              (entry["error"] if "error" in entry else
               f"{len(entry['rows'])} rows, losses {', '.join(f'{x:.4f}' for x in entry['losses'])}, "
               f"peak reserved {peak:,} bytes, trainable {entry['trainable_parameters']:,} "
               f"({entry['trainable_parameters_with_gradient']:,} with a gradient), "
               f"{entry['trained_tokens_per_second'] or 0:,.0f} tokens/s"), flush=True)
    for cell in cells[:args.repeat_cells]:
        first, second = [c for c in document["cells"] if c["spec"] == cell["spec"]][:2]
        if "rows" in first and "rows" in second:
            same = all(a[k] == b[k] for a, b in zip(first["rows"], second["rows"]) for k in COUNTERS)
            print(f"{cell['spec']}: counters of the two runs {'equal' if same else 'DIFFER'}; losses "
                  f"{'equal' if first['losses'] == second['losses'] else 'differ'}", flush=True)
    with open(args.output, "w") as out:
        json.dump(document, out, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
