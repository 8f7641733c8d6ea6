#!/usr/bin/env python3
"""Write a header-only copy of a decoder checkpoint: config.json and its safetensors file.

    write_checkpoint.py CONFIG_FOLDER DEST

CONFIG_FOLDER holds a config.json (examples/models/llama-8b/ holds the one the H200
checkpoint measurement examples/results/llama-8b-bfloat16-h200.json was written with).
DEST is created and receives that config.json and model.safetensors: the real safetensors
header, every tensor named as transformers names it, over sparse data (a hole: nothing is
written, the file takes a few kilobytes of disk whatever its size). The numbers of such a
copy are meaningless; its shapes and dtype are the checkpoint's, which is all
`iteragpu predict --model`, `packages --model` and `estimate --checkpoint` read. It cannot
be measured or run.

Standard library only. Architectures: llama, qwen2 (q/k/v biases), qwen3 (q/k norms).
Exit status 0 on success, 2 on bad input (one line on stderr).
"""

import json
import os
import struct
import sys

SAFETENSORS_DTYPE = {"bfloat16": ("BF16", 2), "float16": ("F16", 2), "float32": ("F32", 4)}
ARCHITECTURES = ("llama", "qwen2", "qwen3")


def tensors_of(c):
    """(name, shape) of every tensor the architecture has, as transformers names them."""
    hidden, heads, kv_heads = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    head_dim = c.get("head_dim", hidden // heads)
    bias = c["model_type"] == "qwen2"
    tensors = [("model.embed_tokens.weight", [c["vocab_size"], hidden])]
    for layer in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % layer
        for name, rows in (("q_proj", heads * head_dim), ("k_proj", kv_heads * head_dim), ("v_proj", kv_heads * head_dim)):
            tensors.append((p + "self_attn.%s.weight" % name, [rows, hidden]))
            if bias:
                tensors.append((p + "self_attn.%s.bias" % name, [rows]))
        tensors.append((p + "self_attn.o_proj.weight", [hidden, heads * head_dim]))
        if c["model_type"] == "qwen3":
            tensors += [(p + "self_attn.q_norm.weight", [head_dim]), (p + "self_attn.k_norm.weight", [head_dim])]
        tensors += [(p + "mlp.gate_proj.weight", [c["intermediate_size"], hidden]),
                    (p + "mlp.up_proj.weight", [c["intermediate_size"], hidden]),
                    (p + "mlp.down_proj.weight", [hidden, c["intermediate_size"]]),
                    (p + "input_layernorm.weight", [hidden]),
                    (p + "post_attention_layernorm.weight", [hidden])]
    tensors.append(("model.norm.weight", [hidden]))
    if not c.get("tie_word_embeddings", False):
        tensors.append(("lm_head.weight", [c["vocab_size"], hidden]))
    return tensors


def checkpoint_dtype(config):
    """The dtype the checkpoint's tensors are stored in (config.json's dtype, or torch_dtype)."""
    dtype = config.get("dtype", config.get("torch_dtype"))
    if dtype not in SAFETENSORS_DTYPE:
        raise ValueError("config.json: dtype %r is not one of %s" % (dtype, ", ".join(SAFETENSORS_DTYPE)))
    return dtype


def write_checkpoint(folder, config):
    """Create FOLDER with config.json and one safetensors file whose data is a hole."""
    if config.get("model_type") not in ARCHITECTURES:
        raise ValueError("config.json: model_type %r is not one of %s"
                         % (config.get("model_type"), ", ".join(ARCHITECTURES)))
    code, size = SAFETENSORS_DTYPE[checkpoint_dtype(config)]
    header, offset = {}, 0
    for name, dims in tensors_of(config):
        count = 1
        for d in dims:
            count *= d
        header[name] = {"dtype": code, "shape": dims, "data_offsets": [offset, offset + count * size]}
        offset += count * size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + offset)
    return offset


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) != 3:
        print("usage: write_checkpoint.py CONFIG_FOLDER DEST (--help for more)", file=sys.stderr)
        return 2
    source, dest = argv[1], argv[2]
    try:
        with open(os.path.join(source, "config.json")) as f:
            config = json.load(f)
        if os.path.exists(dest):
            raise ValueError("%s already exists: name a folder that does not" % dest)
        data_bytes = write_checkpoint(dest, config)
    except (OSError, ValueError, KeyError, TypeError) as error:
        detail = "config.json lacks %s" % error if isinstance(error, KeyError) else str(error)
        print("write_checkpoint.py: %s" % detail, file=sys.stderr)
        return 2
    print("%s: config.json and model.safetensors (%d bytes of tensor data, not written: headers only)"
          % (dest, data_bytes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
