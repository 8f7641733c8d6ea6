#!/usr/bin/env python3
"""Fine-tuning memory rules of thumb beside what was measured (issue 35), as Markdown.

Reads the recorded training runs (training_reference.py's document, and
training_conformance.py's summaries, whose `python` side is the same loop and whose `iteragpu`
side is the tool's training module) and prints one row per recorded cell: the checkpoint-like
shape and configuration, DeepSpeed's ZeRO-2 model-states estimate for one GPU, what `accelerate
estimate-memory` prints as "Training using Adam", weights + gradients + AdamW states, iteragpu's
prediction (`iteragpu predict --model --train`), the measured peak reserved and the card's memory in use, each estimate
with its ratio to the measured peak reserved. A cell recorded in several files is shown once,
from the first file in this order: the reference loop before the conformance summaries, an H100
before an H200, then the order given. Parameter counts come from the records and are checked
against the checkpoint shapes (decoder_conformance.SHAPES); any disagreement stops the script.

With --gap it prints the second table of docs/training.md instead: where the measured peak
goes beyond the weights, gradients and optimizer states.

Standard library only; no GPU. docs/training.md holds the output verbatim between its marker
comments, and tests/python/test_training_side_by_side.py keeps the two equal.

Usage: training_side_by_side.py [--gap] [FILE ...]   (default: the recorded files of 2026-12-06 and 07)
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from decoder_conformance import SHAPES  # noqa: E402  (standard library only at import)
from training_conformance import COMMAND_RECORDS, RECORDED  # noqa: E402
from training_reference import COUNTERS, LORA_TARGETS, parse_cell  # noqa: E402

SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_FILES = [
    os.path.join(RECORDED, "training-reference-h100-2026-12-06.json"),
    os.path.join(RECORDED, "training-conformance-h100-2026-12-06.json"),
    os.path.join(RECORDED, "training-conformance-h200-2026-12-06.json"),
] + COMMAND_RECORDS
# training_reference.py's --lora-rank default; training_conformance.py runs the loop and the
# tool with their defaults, so its summaries do not record the rank. The parameter check
# below confirms it from the trainable count.
LOOP_DEFAULT_LORA_RANK = 16
GiB = 1 << 30
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
# PEFT's get_peft_model(autocast_adapter_dtype=True), its default, keeps 16-bit models'
# adapters in float32 (the recorded adapters rows allocate 4 bytes per trainable parameter).
LORA_ADAPTER_BYTES = 4

CHECKPOINT_LIKE = {
    "llama-1b": "Llama-3.2-1B-like",
    "qwen2-1.5b": "Qwen2.5-1.5B-like",
    "qwen3-0.6b": "Qwen3-0.6B-like",
    "llama-8b": "Llama-3-8B-like",
    "llama-2-layers": "Llama-3.2-1B-like, 2 of 16 layers",
}


# --- Parameter counts from the checkpoint shapes ----------------------------------------------

def _projection_shapes(shape):
    """(in, out) of every linear projection of one decoder layer, by module name."""
    hidden, intermediate = shape["hidden_size"], shape["intermediate_size"]
    head_dim = shape.get("head_dim", hidden // shape["num_attention_heads"])
    query, key_value = shape["num_attention_heads"] * head_dim, shape["num_key_value_heads"] * head_dim
    return {"q_proj": (hidden, query), "k_proj": (hidden, key_value), "v_proj": (hidden, key_value),
            "o_proj": (query, hidden), "gate_proj": (hidden, intermediate), "up_proj": (hidden, intermediate),
            "down_proj": (intermediate, hidden)}


def base_parameters(shape, with_output_head=True):
    """Parameters of the decoder (transformers' *ForCausalLM), tied embeddings counted once;
    without the output head it is the base model (transformers' AutoModel) alone."""
    model_type = shape["model_type"]
    if model_type not in ("llama", "qwen2", "qwen3") or shape.get("attention_bias") or shape.get("mlp_bias"):
        raise ValueError(f"no parameter count for a {model_type} shape with {shape}")
    hidden = shape["hidden_size"]
    head_dim = shape.get("head_dim", hidden // shape["num_attention_heads"])
    projections = _projection_shapes(shape)
    layer = sum(inputs * outputs for inputs, outputs in projections.values()) + 2 * hidden  # two RMSNorms
    if model_type == "qwen2":  # Qwen2's q, k and v projections always carry a bias
        layer += projections["q_proj"][1] + 2 * projections["k_proj"][1]
    if model_type == "qwen3":  # Qwen3's per-head q and k RMSNorms
        layer += 2 * head_dim
    embedding = shape["vocab_size"] * hidden
    total = embedding + shape["num_hidden_layers"] * layer + hidden  # the final norm
    if with_output_head and not shape.get("tie_word_embeddings", True):
        total += embedding
    return total


def lora_parameters(shape, rank, targets=LORA_TARGETS):
    """LoRA's A (rank × in) and B (out × rank) for every targeted projection of every layer."""
    projections = _projection_shapes(shape)
    return shape["num_hidden_layers"] * sum(rank * (projections[name][0] + projections[name][1]) for name in targets)


def largest_layer_parameters(shape):
    """The most parameters one module holds itself (DeepSpeed's stage3.model_to_params): here the
    embedding, or the output head of the same size."""
    hidden = shape["hidden_size"]
    return max(shape["vocab_size"] * hidden, *(i * o for i, o in _projection_shapes(shape).values()))


def check_parameters(cell):
    """The record's counts against the shape's; stops the script on any difference."""
    shape = SHAPES[cell["shape"]]
    expected_trainable = lora_parameters(shape, cell["lora_rank"]) if cell["mode"] == "lora" else base_parameters(shape)
    expected_total = base_parameters(shape) + (expected_trainable if cell["mode"] == "lora" else 0)
    run = cell["run"]
    if (run["parameters"], run["trainable_parameters"]) != (expected_total, expected_trainable):
        raise SystemExit(f"training_side_by_side.py: {cell['spec']} in {cell['file_label']}: the record has "
                         f"{run['parameters']:,} parameters, {run['trainable_parameters']:,} trainable; the shape "
                         f"{cell['shape']} gives {expected_total:,} and {expected_trainable:,}")


# --- The estimates --------------------------------------------------------------------------

def deepspeed_zero2_model_states_bytes(total_params, num_gpus_per_node=1, num_nodes=1):
    """DeepSpeed's ZeRO-2 GPU estimate without offload, as written in
    deepspeed/runtime/zero/stage_1_and_2.py, estimate_zero2_model_states_mem_needs
    (deepspeedai/DeepSpeed since v0.14.3, PR #5099; read at edaa722, 2026-08-22):
        gpu_mem = 2 * total_params + int(18 * total_params / total_gpus)
    (16-bit parameters; 16-bit and 32-bit gradients, 32-bit master weights, Adam's two 32-bit
    states). Before #5099 it was 4 * total_params + int(16 * total_params / total_gpus): the same
    20 bytes per parameter on one GPU. total_params is model_to_params(model): every parameter
    of the model handed over, shared ones once, frozen ones included."""
    total_gpus = num_nodes * num_gpus_per_node
    return int(2 * total_params + int(18 * total_params / total_gpus))


def deepspeed_zero3_model_states_bytes(total_params, largest_layer_params, num_gpus_per_node=1, num_nodes=1):
    """DeepSpeed's ZeRO-3 GPU estimate without offload (deepspeed/runtime/zero/stage3.py,
    estimate_zero3_model_states_mem_needs, cpu_offload=False):
        gpu_mem = 4 * largest_layer_params + int(18 * total_params / total_gpus)
    Not a column: on one GPU it partitions nothing either (docs/training.md says how far it is
    from ZeRO-2's)."""
    total_gpus = num_nodes * num_gpus_per_node
    return int(4 * largest_layer_params + int(18 * total_params / total_gpus))


def accelerate_training_with_adam_bytes(float32_model_bytes, dtype):
    """What `accelerate estimate-memory` prints under "Training using Adam" for `dtype`:
    src/accelerate/commands/estimate.py (huggingface/accelerate since v0.29.0, PR #2581; read at
    16cb6eb, 2026-07-24), estimate_command prints max(estimate_training_usage(total_size, dtype)
    .values()), total_size being the model's size in float32 (create_empty_model builds it with
    torch_dtype=torch.float32). float32: "step" = 4 × the float32 size. float16 and bfloat16:
    max(model 1×, gradients 1.5×, optimizer 2×, step 2×) = 2 × the float32 size, that is 4 × the
    16-bit size. So it is 4× the model's size in the dtype asked for. int8 and int4 print "N/A"
    (None here)."""
    fp32_size = float32_model_bytes
    fp16_size = fp32_size // 2
    if dtype == "float32":
        sizes = dict(model=fp32_size, gradients=fp32_size, optimizer=fp32_size * 2, step=fp32_size * 4)
    elif dtype in ("float16", "bfloat16"):
        sizes = dict(model=fp32_size, gradients=fp32_size + fp16_size, optimizer=fp32_size * 2, step=fp32_size * 2)
    else:
        return None
    return max(sizes.values())


def accelerate_model_parameters(shape):
    """The parameters accelerate sizes: create_empty_model builds transformers' AutoModel (no
    auto_map in these configs), the decoder without its output head; an untied head is left out.
    Its total also counts buffers (in transformers 5 the rotary inverse frequencies, at most
    head_dim float32 values, under 1 KiB), left out here: they change no digit shown."""
    return base_parameters(shape, with_output_head=False)


def weights_gradients_adamw_bytes(parameters, trainable, dtype, mode):
    """Every parameter once in its dtype, and each trainable one three more times (its gradient,
    AdamW's exp_avg and exp_avg_sq, which torch.optim.AdamW creates with zeros_like of the
    parameter); LoRA's trainable adapters are float32, frozen weights keep the checkpoint's dtype."""
    trainable_bytes = LORA_ADAPTER_BYTES if mode == "lora" else DTYPE_BYTES[dtype]
    return (parameters - trainable) * DTYPE_BYTES[dtype] + trainable * trainable_bytes * 4


PREDICTED_PEAKS = os.path.join(SOURCE_ROOT, "tests", "data", "training-predicted-peaks.json")


def iteragpu_prediction_bytes(cell):
    """iteragpu's predicted peak reserved for the cell (`iteragpu predict --model --train`, the
    highest over its rows), as tests/prediction/training_prediction_check.py keeps it in
    tests/data/training-predicted-peaks.json; None for a cell it does not predict."""
    with open(PREDICTED_PEAKS) as handle:
        return json.load(handle)["cells"].get(cell.get("spec"))


# --- Reading the records ----------------------------------------------------------------------

def short_gpu(run):
    return run["versions"]["gpu"].replace("NVIDIA ", "").split()[0]


def counters_equal(python, tool):
    return len(python["rows"]) == len(tool["rows"]) and \
        all(a[k] == b[k] for a, b in zip(python["rows"], tool["rows"]) for k in COUNTERS)


def read_records(paths):
    """Every cell with rows, in the order of preference: training_reference.parse_cell's dict with
    `run` (the Python loop's result), `file`, `file_label` ("reference, H100") and, from a
    conformance summary, `tool_run` (GPU, counters equal)."""
    cells = []
    for order, path in enumerate(paths):
        with open(path) as handle:
            document = json.load(handle)
        for entry in document["cells"]:
            conformance = "python" in entry or "iteragpu" in entry
            run = entry.get("python") if conformance else entry
            if not run or "rows" not in run:
                continue  # a cell that failed to run has no counters to show
            cell = parse_cell(entry["cell"] if conformance else entry["spec"])
            cell.update(run=run, file=path, conformance=conformance, order=order,
                        lora_rank=document.get("lora_rank", LOOP_DEFAULT_LORA_RANK),
                        file_label=f"{'conformance' if conformance else 'reference'}, {short_gpu(run)}",
                        tool_run=(short_gpu(run), counters_equal(run, entry["iteragpu"]))
                        if conformance and "iteragpu" in entry else None)
            cells.append(cell)
    cells.sort(key=lambda c: (c["conformance"], not short_gpu(c["run"]).startswith("H100"), c["order"]))
    return cells


def unique_cells(cells):
    """One cell per spec, the first in the order of preference, with every GPU on which the tool
    ran it (from any file) attached."""
    chosen = {}
    for cell in cells:
        first = chosen.setdefault(cell["spec"], dict(cell, tool_runs=[]))
        if cell["tool_run"] and cell["tool_run"] not in first["tool_runs"]:
            first["tool_runs"].append(cell["tool_run"])
    for cell in chosen.values():
        check_parameters(cell)
    return list(chosen.values())


def display_path(path):
    relative = os.path.relpath(os.path.abspath(path), SOURCE_ROOT)
    return path if relative.startswith("..") else relative


# --- The tables -------------------------------------------------------------------------------

def gib(value):
    return f"{value / GiB:.2f} GiB"


def estimate_text(estimate, measured):
    if estimate is None:
        return "not yet"
    return f"{gib(estimate)} ({estimate / measured:.2f}×)"


def cell_label(cell):
    return (f"{CHECKPOINT_LIKE.get(cell['shape'], cell['shape'])} (`{cell['shape']}`)",
            "full" if cell["mode"] == "full" else f"LoRA r{cell['lora_rank']}",
            f"{cell['batch']} × {cell['sequence']:,}",
            "yes" if cell["gradient_checkpointing"] else "no")


def peak_reserved(run):
    return max(row["peak_reserved"] for row in run["rows"])


def tool_text(cell):
    if not cell["tool_runs"]:
        return "no"
    return ", ".join(f"{gpu}{'' if equal else ' (counters differ)'}" for gpu, equal in cell["tool_runs"])


def side_by_side_rows(cells):
    """The table's cells as text, one list per record."""
    rows = []
    for cell in cells:
        run, shape = cell["run"], SHAPES[cell["shape"]]
        measured = peak_reserved(run)
        estimates = [
            deepspeed_zero2_model_states_bytes(run["parameters"]),
            accelerate_training_with_adam_bytes(4 * accelerate_model_parameters(shape), cell["dtype"]),
            weights_gradients_adamw_bytes(run["parameters"], run["trainable_parameters"], cell["dtype"], cell["mode"]),
            iteragpu_prediction_bytes(cell),
        ]
        rows.append([*cell_label(cell), f"{run['parameters']:,}", f"{run['trainable_parameters']:,}",
                     *(estimate_text(e, measured) for e in estimates),
                     f"**{gib(measured)}**", gib(run["device_used_bytes"]), cell["file_label"], tool_text(cell)])
    return rows


SIDE_BY_SIDE_HEADER = [
    "checkpoint", "method", "batch × sequence", "gradient checkpointing", "parameters", "trainable",
    "DeepSpeed ZeRO-2 model states, 1 GPU", "accelerate estimate-memory, Training using Adam",
    "weights + gradients + AdamW states", "iteragpu's prediction", "measured peak reserved",
    "card in use (cudaMemGetInfo)", "record", "run by iteragpu too (conformance)",
]


def markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def records_legend(paths):
    """One line per file read: what it is, its GPU and the versions of its loop."""
    lines = ["Records:"]
    for path in paths:
        with open(path) as handle:
            document = json.load(handle)
        runs = [entry.get("python", entry) for entry in document["cells"] if "rows" in entry.get("python", entry)]
        conformance = any("python" in entry for entry in document["cells"])
        gpus = sorted({run["versions"]["gpu"] for run in runs})
        versions = runs[0]["versions"] if runs else {}
        peft = sorted({run["versions"]["peft"] for run in runs if run["versions"].get("peft")})
        lines.append(f"- `{display_path(path)}`: "
                     + (("the Python loop and `iteragpu measure --train`" if document.get("driver", "").startswith(
                         "iteragpu measure") else "the Python loop and iteragpu's training module")
                        + ", cell by cell (training_conformance.py)" if conformance
                        else "the Python loop (training_reference.py)")
                     + f", {', '.join(gpus)}; torch {versions.get('torch')}, transformers "
                       f"{versions.get('transformers')}, "
                     + (f"PEFT {', '.join(peft)}" if peft else "no PEFT (full fine-tuning only)")
                     + f", CUDA {versions.get('cuda')}.")
    return "\n".join(lines)


def side_by_side_table(paths=None):
    """The Markdown block docs/training.md holds between `<!-- side-by-side: begin -->` and
    `<!-- side-by-side: end -->`."""
    paths = paths or DEFAULT_FILES
    cells = unique_cells(read_records(paths))
    return markdown(SIDE_BY_SIDE_HEADER, side_by_side_rows(cells)) + "\n\n" + records_legend(paths)


GAP_HEADER = [
    "checkpoint", "method", "batch × sequence", "gradient checkpointing",
    "weights + gradients + AdamW states", "largest growth in a forward row", "one float32 copy of the logits",
    "highest peak allocated (row)", "peak reserved − peak allocated", "card in use − peak reserved",
]


def gap_rows(cells):
    rows = []
    for cell in cells:
        run, shape = cell["run"], SHAPES[cell["shape"]]
        states = weights_gradients_adamw_bytes(run["parameters"], run["trainable_parameters"], cell["dtype"],
                                               cell["mode"])
        forward_growth = max(r["peak_allocated"] - r["allocated_baseline"] for r in run["rows"]
                             if r["phase"] == "forward")
        # transformers' ForCausalLMLoss upcasts the logits with .float() before the cross-entropy
        logits = cell["batch"] * cell["sequence"] * shape["vocab_size"] * 4
        top = max(run["rows"], key=lambda r: r["peak_allocated"])  # the first row reaching the highest
        rows.append([*cell_label(cell), gib(states), gib(forward_growth), gib(logits),
                     f"{gib(top['peak_allocated'])} ({top['phase']} {top['step']})",
                     gib(peak_reserved(run) - top["peak_allocated"]),
                     gib(run["device_used_bytes"] - peak_reserved(run))])
    return rows


def gap_table(paths=None):
    """The Markdown block docs/training.md holds between `<!-- side-by-side gap: begin -->` and
    `<!-- side-by-side gap: end -->`."""
    cells = unique_cells(read_records(paths or DEFAULT_FILES))
    return markdown(GAP_HEADER, gap_rows(cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", default=DEFAULT_FILES,
                        help="recorded training files (training_reference.py or training_conformance.py output)")
    parser.add_argument("--gap", action="store_true", help="print the table of where the peak goes instead")
    args = parser.parse_args()
    print(gap_table(args.files) if args.gap else side_by_side_table(args.files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
