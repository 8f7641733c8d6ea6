"""One validation for both faces: every request the command line refuses (an empty model, the
synthetic MLP's sizes beside a checkpoint, new tokens without one, an empty dtype, a product of
counts past the work bound, a shape whose bytes pass 2^62) is refused the same way by the
Python keywords, naming the same option with the same reason; and text from a file reaches
a Python exception escaped, as the command line shows it."""

import json
import os
import sys

import pytest

import iteragpu
from conftest import SOURCE_DIR
from test_measure import write_tiny_llama

sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "support"))
from safetensors_files import write_safetensors  # noqa: E402


def write_wide_mistral(folder):
    """A 1-layer Mistral of hidden 2 with 512 query and KV heads of head_dim 2^24, its
    tensors a hole in the file (sparse): a KV cache of 2^62 bytes at batch 128 × 2^22."""
    folder.mkdir()
    hidden, heads, head_dim = 2, 512, 1 << 24
    config = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": hidden,
              "intermediate_size": 2, "num_hidden_layers": 1, "num_attention_heads": heads,
              "num_key_value_heads": heads, "head_dim": head_dim, "vocab_size": 2,
              "max_position_embeddings": 1 << 24, "sliding_window": None, "torch_dtype": "bfloat16"}
    (folder / "config.json").write_text(json.dumps(config))
    p = "model.layers.0."
    shapes = [("model.embed_tokens.weight", [2, hidden]),
              (p + "self_attn.q_proj.weight", [heads * head_dim, hidden]),
              (p + "self_attn.k_proj.weight", [heads * head_dim, hidden]),
              (p + "self_attn.v_proj.weight", [heads * head_dim, hidden]),
              (p + "self_attn.o_proj.weight", [hidden, heads * head_dim]),
              (p + "mlp.gate_proj.weight", [2, hidden]), (p + "mlp.up_proj.weight", [2, hidden]),
              (p + "mlp.down_proj.weight", [hidden, 2]), (p + "input_layernorm.weight", [hidden]),
              (p + "post_attention_layernorm.weight", [hidden]), ("model.norm.weight", [hidden]),
              ("lm_head.weight", [2, hidden])]
    write_safetensors(str(folder / "model.safetensors"), [(name, "BF16", shape) for name, shape in shapes])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity")
    write_tiny_llama(root / "tiny")
    write_wide_mistral(root / "wide")
    return {"tiny": str(root / "tiny"), "wide": str(root / "wide"), "out": str(root / "never-written.json")}


# (command line, the same request in Python). {tiny}, {wide} and {out} are filled in.
CASES = [
    ("empty model, predict", ["predict", "--compute-capability", "9.0", "--model", ""],
     lambda m: iteragpu.predict(compute_capability="9.0", model="")),
    ("empty model, measure", ["measure", "--model", "", "--output", "{out}"],
     lambda m: iteragpu.measure(model="", output=m["out"], progress=False)),
    ("empty model, sweep", ["sweep", "--vary", "batch", "--model", ""],
     lambda m: iteragpu.sweep("batch", model="", progress=False)),
    ("empty model, packages", ["packages", "--model", ""],
     lambda m: iteragpu.packages(model="")),
    ("width beside a model, predict", ["predict", "--compute-capability", "9.0", "--model", "{tiny}", "--width", "8"],
     lambda m: iteragpu.predict(compute_capability="9.0", model=m["tiny"], width=8)),
    ("hidden beside a model, predict", ["predict", "--compute-capability", "9.0", "--model", "{tiny}", "--hidden", "8"],
     lambda m: iteragpu.predict(compute_capability="9.0", model=m["tiny"], hidden=8)),
    ("width beside a model, sweep", ["sweep", "--vary", "batch", "--model", "{tiny}", "--width", "8"],
     lambda m: iteragpu.sweep("batch", model=m["tiny"], width=8, progress=False)),
    ("width beside a model, measure", ["measure", "--model", "{tiny}", "--width", "8", "--output", "{out}"],
     lambda m: iteragpu.measure(model=m["tiny"], width=8, output=m["out"], progress=False)),
    ("new tokens without a model, predict", ["predict", "--compute-capability", "9.0", "--new-tokens", "4"],
     lambda m: iteragpu.predict(compute_capability="9.0", new_tokens=4)),
    ("new tokens without a model, measure", ["measure", "--new-tokens", "4", "--output", "{out}"],
     lambda m: iteragpu.measure(new_tokens=4, output=m["out"], progress=False)),
    ("new tokens without a model, sweep", ["sweep", "--vary", "batch", "--new-tokens", "4"],
     lambda m: iteragpu.sweep("batch", new_tokens=4, progress=False)),
    ("empty dtype, predict", ["predict", "--compute-capability", "9.0", "--dtype", ""],
     lambda m: iteragpu.predict(compute_capability="9.0", dtype="")),
    ("empty dtype with a model, packages", ["packages", "--model", "{tiny}", "--dtype", ""],
     lambda m: iteragpu.packages(model=m["tiny"], dtype="")),
    ("empty hidden, predict", ["predict", "--compute-capability", "9.0", "--hidden", ""],
     lambda m: iteragpu.predict(compute_capability="9.0", hidden="")),
    ("work past the bound, predict",
     ["predict", "--compute-capability", "9.0", "--model", "{tiny}", "--warmup", "100000", "--repeats", "100000",
      "--new-tokens", "4000"],
     lambda m: iteragpu.predict(compute_capability="9.0", model=m["tiny"], warmup=100000, repeats=100000,
                                new_tokens=4000)),
    ("work past the bound, packages",
     ["packages", "--model", "{tiny}", "--warmup", "100000", "--repeats", "100000", "--new-tokens", "4000"],
     lambda m: iteragpu.packages(model=m["tiny"], warmup=100000, repeats=100000, new_tokens=4000)),
    ("bytes past 2^62, predict",
     ["predict", "--compute-capability", "9.0", "--model", "{wide}", "--batch", "128", "--context", "8388608",
      "--new-tokens", "1", "--warmup", "0", "--repeats", "1"],
     lambda m: iteragpu.predict(compute_capability="9.0", model=m["wide"], batch=128, context=8388608,
                                new_tokens=1, warmup=0, repeats=1)),
    ("bytes past 2^62, packages",
     ["packages", "--model", "{wide}", "--batch", "128", "--context", "4194304", "--new-tokens", "1", "--warmup",
      "0", "--repeats", "1"],
     lambda m: iteragpu.packages(model=m["wide"], batch=128, context=4194304, new_tokens=1, warmup=0, repeats=1)),
]


@pytest.mark.parametrize("name, arguments, call", CASES, ids=[case[0] for case in CASES])
def test_python_refuses_what_the_command_line_refuses(name, arguments, call, models, cli, fake_backend):
    completed = cli(*[argument.format(**models) for argument in arguments],
                    env={"ITERAGPU_BACKEND": fake_backend, "PATH": "/usr/bin:/bin"})
    assert completed.returncode == 2, completed.stderr
    assert completed.stdout == ""
    line = completed.stderr.strip()
    assert "\n" not in line
    option, reason = line.split(": error: --", 1)[1].split(": ", 1)
    with pytest.raises(iteragpu.UsageError) as raised:
        call(models)
    assert raised.value.field == option.replace("-", "_")
    # Python names the keyword ("new_tokens: needs --model ..."), with the command line's reason.
    assert str(raised.value) == f"{raised.value.field}: {reason}"


def test_an_escape_and_an_override_from_a_file_reach_the_exception_escaped(tmp_path):
    model = tmp_path / "hostile"
    write_tiny_llama(model)
    config = json.loads((model / "config.json").read_text())
    config["architectures"] = ["Llama\u202eForCausalLM\x1b[31m"]
    (model / "config.json").write_text(json.dumps(config))
    with pytest.raises(iteragpu.UsageError) as raised:
        iteragpu.predict(compute_capability="9.0", model=model)
    message = str(raised.value)
    assert "\u202e" not in message and "\x1b" not in message
    assert "Llama\\u202eForCausalLM\\x1b[31m" in message


def test_a_shard_name_holding_an_escape_reaches_the_exception_escaped(tmp_path):
    model = tmp_path / "sharded"
    write_tiny_llama(model)
    index = {"metadata": {}, "weight_map": {"model.embed_tokens.weight": "shard\x1b[2J.safetensors"}}
    (model / "model.safetensors").unlink()
    (model / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(iteragpu.DataFileError) as raised:
        iteragpu.predict(compute_capability="9.0", model=model)
    message = str(raised.value)
    assert "\x1b" not in message
    assert "shard\\x1b[2J.safetensors" in message


def test_a_safetensors_file_whose_name_holds_an_escape_reaches_the_exception_escaped(tmp_path):
    broken = tmp_path / "weights\x1b]0;owned\x07.safetensors"
    broken.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00not json")
    with pytest.raises(iteragpu.DataFileError) as raised:
        iteragpu.estimate(checkpoint=broken)
    message = str(raised.value)
    assert "\x1b" not in message and "\x07" not in message
    assert "weights\\x1b]0;owned\\x07.safetensors" in message


def test_a_keyword_no_workload_declares_is_refused_as_python_refuses_one():
    """The workloads' own keywords (new_tokens, lora_rank) come from their declarations; any other is a
    TypeError, as for a function's unknown keyword."""
    for call in (lambda: iteragpu.MeasureRequest(draft_model=8),
                 lambda: iteragpu.predict(compute_capability="9.0", draft_model=8)):
        with pytest.raises(TypeError, match="unexpected keyword argument 'draft_model'"):
            call()
    assert iteragpu.MeasureRequest(new_tokens=None).new_tokens is None  # None: left out
    assert iteragpu.MeasureRequest(new_tokens=4).new_tokens == "4"
