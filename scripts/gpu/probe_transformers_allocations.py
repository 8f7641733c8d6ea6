#!/usr/bin/env python3
"""Lists every allocation transformers makes when it loads and runs a small dense decoder on
the GPU: the ground truth the decoder workload's allocations are written from.

For each architecture it writes a checkpoint with random weights (a few MB) under WORK, loads
it with from_pretrained(attn_implementation="sdpa"), runs a prefill and decode steps under
inference mode with a DynamicCache, and records torch.cuda.memory history per phase. Output:
OUT/allocations-<arch>.txt, one line per allocator event with its size and the innermost
transformers/torch frame that caused it.

Usage: probe_transformers_allocations.py WORK OUT
"""

import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM, DynamicCache

WORK, OUT = sys.argv[1], sys.argv[2]

SHAPES = {
    "llama": dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=256,
                  intermediate_size=512, num_hidden_layers=2, num_attention_heads=8,
                  num_key_value_heads=2, vocab_size=1000, max_position_embeddings=4096,
                  rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=False,
                  rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}),
    "qwen2": dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", hidden_size=256,
                  intermediate_size=512, num_hidden_layers=2, num_attention_heads=8,
                  num_key_value_heads=2, vocab_size=1000, max_position_embeddings=4096,
                  rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True),
    "qwen3": dict(architectures=["Qwen3ForCausalLM"], model_type="qwen3", hidden_size=256,
                  intermediate_size=512, num_hidden_layers=2, num_attention_heads=8,
                  num_key_value_heads=2, head_dim=64, vocab_size=1000,
                  max_position_embeddings=4096, rms_norm_eps=1e-6, rope_theta=1000000.0,
                  tie_word_embeddings=True),
}


def frames(event):
    names = []
    for frame in event.get("frames", []):
        filename = frame.get("filename", "")
        if "transformers" in filename or "torch/nn" in filename or "probe_" in filename:
            names.append(f"{os.path.basename(filename)}:{frame.get('line')}:{frame.get('name')}")
    return " < ".join(names[:4])


def record(label, lines, work):
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    torch.cuda.memory._record_memory_history(max_entries=1000000)
    work()
    torch.cuda.synchronize()
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    after = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    lines.append(f"== {label}: allocated {before[0]} -> {after[0]}, reserved {before[1]} -> {after[1]}, "
                 f"peak {torch.cuda.max_memory_allocated()}")
    for trace in snapshot["device_traces"]:
        for event in trace:
            if event["action"] in ("alloc", "free_completed", "segment_alloc", "segment_free"):
                lines.append(f"  {event['action']:<14} {event['size']:>12} {frames(event)}")
    torch.cuda.reset_peak_memory_stats()


def main():
    os.makedirs(OUT, exist_ok=True)
    from transformers import AutoConfig
    for arch, fields in SHAPES.items():
        folder = os.path.join(WORK, arch)
        config = AutoConfig.for_model(fields["model_type"], **{k: v for k, v in fields.items() if k != "model_type"})
        config.torch_dtype = "bfloat16"
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        model.save_pretrained(folder)
        del model
        lines = [f"transformers {transformers.__version__}, torch {torch.__version__}",
                 json.dumps(json.load(open(os.path.join(folder, "config.json"))), sort_keys=True)]
        holder = {}

        def load():
            holder["model"] = AutoModelForCausalLM.from_pretrained(
                folder, dtype=torch.bfloat16, device_map="cuda:0", attn_implementation="sdpa")

        record("weights_load", lines, load)
        model = holder["model"]
        model.eval()
        for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
            lines.append(f"  tensor {name} {tuple(tensor.shape)} {tensor.dtype} {tensor.data_ptr()}")
        generator = torch.Generator(device="cuda:0").manual_seed(7)
        batch, context = 2, 8

        def inputs():
            holder["ids"] = torch.randint(0, config.vocab_size, (batch, context), device="cuda:0",
                                          generator=generator)

        record("inputs", lines, inputs)
        for sequence in range(2):
            with torch.inference_mode():
                cache = DynamicCache(config=model.config)
                state = {}

                def prefill():
                    out = model(holder["ids"], past_key_values=cache, use_cache=True, logits_to_keep=1)
                    state["next"] = out.logits[:, -1, :].argmax(-1, keepdim=True)
                    del out

                record(f"prefill sequence {sequence}", lines, prefill)
                for step in range(1, 3):
                    def decode():
                        out = model(state["next"], past_key_values=cache, use_cache=True, logits_to_keep=1)
                        state["next"] = out.logits[:, -1, :].argmax(-1, keepdim=True)
                        del out

                    record(f"decode {step} sequence {sequence}", lines, decode)
                del cache, state
        with open(os.path.join(OUT, f"allocations-{arch}.txt"), "w") as handle:
            handle.write("\n".join(lines) + "\n")
        del model, holder
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
