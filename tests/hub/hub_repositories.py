#!/usr/bin/env python3
"""Model repositories for the Hub served on the loopback by tests/hub/hub_server.py, and a
Hugging Face cache laid out as huggingface_hub lays it out.

    hub_repositories.py --root DIR [--cache DIR]

writes every repository of write_hub() under DIR and, with --cache, the cache of their main
commits (and tiny-llama's v1.0) under the cache folder. Tests import the module instead
(sys.path.insert(0, SOURCE + "/tests/hub")).

A repository's tree (what hub_server.py serves):
    DIR/<org>/<name>/repo.json            {"refs": {"main": COMMIT, ...}, "gated": bool,
                                           "tokens": [...], "lfs_redirect": bool, "fault": null|NAME}
    DIR/<org>/<name>/<commit>/<path>      the files of that commit

Safetensors files are written sparse (header, then a hole), so a 70B-shaped checkpoint costs
a few megabytes of disk.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SOURCE, "tests", "support"))
from safetensors_files import BITS, write_safetensors  # noqa: E402

TEST_ORG = "iteragpu-test"
GATED_TOKEN = "hf_iteragpu_test_token"
FAULTS = ("ignore_range", "truncated", "wrong_content_range", "redirect_loop", "stall", "no_commit")

# The etag stand-in hashes this much of a safetensors file: past the header our files hold
# zeros only, so the leading bytes and the size determine the content.
_LEADING_BYTES = 1 << 20
_etags = {}
_etags_lock = threading.Lock()


def etag_of(path, relpath):
    """The etag the Hub gives the file at path (relpath: its path inside the commit), without
    quotes; it also names the file's blob in the cache.

    Other files: the git blob id (sha1 of "blob SIZE\\0" + content), as the Hub sends for
    files kept in git. Safetensors files: the Hub sends the sha256 of the content (an LFS
    oid), but hashing gigabytes of a sparse file takes too long, so this is a stand-in: the
    sha256 of relpath, the size and the first MiB. Cached by path, size and mtime."""
    stat = os.stat(path)
    key = (os.path.abspath(path), relpath, stat.st_size, stat.st_mtime_ns)
    with _etags_lock:
        if key in _etags:
            return _etags[key]
    with open(path, "rb") as f:
        if relpath.endswith(".safetensors"):
            digest = hashlib.sha256(b"safetensors stand-in\0%s\0%d\0"
                                    % (relpath.encode(), stat.st_size))
            digest.update(f.read(_LEADING_BYTES))
        else:
            content = f.read()
            digest = hashlib.sha1(b"blob %d\0" % len(content) + content)
    etag = digest.hexdigest()
    with _etags_lock:
        _etags[key] = etag
    return etag


def commit_of(repo_id, label):
    """A deterministic 40-hex commit id for a repository's revision label."""
    return hashlib.sha1(("%s@%s" % (repo_id, label)).encode()).hexdigest()


# --- checkpoints ------------------------------------------------------------------------------

def llama_tensors(layers, hidden, intermediate, heads, kv_heads, vocab, head_dim=None,
                  qkv_bias=False, dtype="BF16", tie=False):
    """[(name, dtype, shape)] of a Llama-family decoder, in the order transformers registers
    the parameters."""
    hd = head_dim if head_dim is not None else hidden // heads
    tensors = [("model.embed_tokens.weight", dtype, [vocab, hidden])]
    for i in range(layers):
        p = "model.layers.%d." % i
        for proj, rows in (("q_proj", heads * hd), ("k_proj", kv_heads * hd), ("v_proj", kv_heads * hd)):
            tensors.append((p + "self_attn.%s.weight" % proj, dtype, [rows, hidden]))
            if qkv_bias:
                tensors.append((p + "self_attn.%s.bias" % proj, dtype, [rows]))
        tensors += [
            (p + "self_attn.o_proj.weight", dtype, [hidden, heads * hd]),
            (p + "mlp.gate_proj.weight", dtype, [intermediate, hidden]),
            (p + "mlp.up_proj.weight", dtype, [intermediate, hidden]),
            (p + "mlp.down_proj.weight", dtype, [hidden, intermediate]),
            (p + "input_layernorm.weight", dtype, [hidden]),
            (p + "post_attention_layernorm.weight", dtype, [hidden]),
        ]
    tensors.append(("model.norm.weight", dtype, [hidden]))
    if not tie:
        tensors.append(("lm_head.weight", dtype, [vocab, hidden]))
    return tensors


def tensors_of_config(config, qkv_bias=False):
    """llama_tensors for a Llama-shaped config dict."""
    return llama_tensors(config["num_hidden_layers"], config["hidden_size"], config["intermediate_size"],
                         config["num_attention_heads"], config["num_key_value_heads"], config["vocab_size"],
                         head_dim=config.get("head_dim"), qkv_bias=qkv_bias,
                         tie=config.get("tie_word_embeddings", False))


def _data_bytes(tensor):
    _, dtype, shape = tensor
    elements = 1
    for d in shape:
        elements *= d
    return elements * BITS[dtype] // 8


def _split(tensors, shards):
    """Consecutive groups of nearly equal data size (as transformers fills shards up to a
    size), none empty."""
    if shards > len(tensors):
        raise ValueError("%d shards for %d tensors" % (shards, len(tensors)))
    total = sum(map(_data_bytes, tensors))
    groups, done = [[]], 0
    for j, tensor in enumerate(tensors):
        started = len(groups)
        if groups[-1] and started < shards and (done * shards >= started * total
                                                or len(tensors) - j == shards - started):
            groups.append([])
        groups[-1].append(tensor)
        done += _data_bytes(tensor)
    return groups


def write_checkpoint(folder, config, tensors, shards):
    """config.json and model.safetensors (shards == 1), or model-0000k-of-0000n.safetensors
    with model.safetensors.index.json."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as out:
        out.write(json.dumps(config, indent=2))
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), tensors)
        return
    weight_map, total = {}, 0
    for k, group in enumerate(_split(tensors, shards), 1):
        shard = "model-%05d-of-%05d.safetensors" % (k, shards)
        total += write_safetensors(os.path.join(folder, shard), group)
        for name, _, _ in group:
            weight_map[name] = shard
    # transformers writes the index with sorted keys.
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as out:
        out.write(json.dumps(index, indent=2, sort_keys=True))


# --- configs ----------------------------------------------------------------------------------

def tiny_llama_config(**overrides):
    """A tiny LlamaForCausalLM config; keyword arguments replace or add keys."""
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
              "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "vocab_size": 256, "torch_dtype": "bfloat16",
              "tie_word_embeddings": False, "rms_norm_eps": 1e-05, "max_position_embeddings": 4096,
              "hidden_act": "silu", "rope_theta": 10000.0}
    config.update(overrides)
    return config


def llama_70b_config():
    """meta-llama/Llama-3.1-70B's config.json values."""
    return {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
            "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "hidden_act": "silu",
            "hidden_size": 8192, "initializer_range": 0.02, "intermediate_size": 28672,
            "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "llama",
            "num_attention_heads": 64, "num_hidden_layers": 80, "num_key_value_heads": 8,
            "pretraining_tp": 1, "rms_norm_eps": 1e-05,
            "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 8192, "rope_type": "llama3"},
            "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
            "transformers_version": "4.42.3", "use_cache": True, "vocab_size": 128256}


def qwen25_7b_instruct_config():
    """Qwen/Qwen2.5-7B-Instruct's published config.json values."""
    return {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
            "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 3584, "initializer_range": 0.02,
            "intermediate_size": 18944, "max_position_embeddings": 32768, "max_window_layers": 28,
            "model_type": "qwen2", "num_attention_heads": 28, "num_hidden_layers": 28,
            "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_scaling": None,
            "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16", "transformers_version": "4.43.1", "use_cache": True,
            "use_sliding_window": False, "vocab_size": 152064}


# --- the Hub's tree ---------------------------------------------------------------------------

def _write_repo(root, repo_id, commits, gated=False, lfs_redirect=True, fault=None):
    """commits: {label: writer(folder)}; every label becomes a ref to its commit."""
    repo_dir = os.path.join(root, *repo_id.split("/"))
    shutil.rmtree(repo_dir, ignore_errors=True)
    os.makedirs(repo_dir)
    refs = {}
    for label, writer in commits.items():
        refs[label] = commit_of(repo_id, label)
        writer(os.path.join(repo_dir, refs[label]))
    meta = {"refs": refs, "gated": gated, "tokens": [GATED_TOKEN] if gated else [],
            "lfs_redirect": lfs_redirect, "fault": fault}
    with open(os.path.join(repo_dir, "repo.json"), "w") as out:
        out.write(json.dumps(meta, indent=2))
    return {"commit": refs["main"], "folder": os.path.join(repo_dir, refs["main"]), "refs": refs}


def _checkpoint(config, shards, qkv_bias=False):
    return lambda folder: write_checkpoint(folder, config, tensors_of_config(config, qkv_bias), shards)


def _shard_outside(folder):
    """tiny-llama in 3 shards whose index sends lm_head.weight to a file outside the commit."""
    _checkpoint(tiny_llama_config(), 3)(folder)
    index_path = os.path.join(folder, "model.safetensors.index.json")
    with open(index_path) as f:
        index = json.load(f)
    index["weight_map"]["lm_head.weight"] = "../gated-llama/model.safetensors"
    with open(index_path, "w") as out:
        out.write(json.dumps(index, indent=2, sort_keys=True))


def _huge_header(folder):
    """tiny-llama whose header length field claims 200,000,000 bytes."""
    config = tiny_llama_config()
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as out:
        out.write(json.dumps(config, indent=2))
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors_of_config(config), length=200000000)


def write_hub(root):
    """Writes every repository under root; returns {repo_id: {"commit": main's commit,
    "folder": main's commit folder, "refs": {label: commit}}}."""
    tiny = _checkpoint(tiny_llama_config(), 1)
    repos = {}

    def add(name, commits, **kwargs):
        repos[name] = _write_repo(root, name, commits, **kwargs)

    t = TEST_ORG + "/"
    add(t + "tiny-llama", {"main": tiny, "v1.0": _checkpoint(tiny_llama_config(num_hidden_layers=1), 1)})
    add(t + "tiny-llama-sharded", {"main": _checkpoint(tiny_llama_config(), 3)})
    add(t + "gated-llama", {"main": tiny}, gated=True)
    add(t + "llama-70b-shaped", {"main": _checkpoint(llama_70b_config(), 30)})
    add("Qwen/Qwen2.5-7B-Instruct", {"main": _checkpoint(qwen25_7b_instruct_config(), 4, qkv_bias=True)})
    for fault in FAULTS:
        add(t + "fault-" + fault.replace("_", "-"), {"main": tiny}, fault=fault)
    add(t + "shard-outside", {"main": _shard_outside})
    add(t + "huge-header", {"main": _huge_header})
    return repos


# --- the Hugging Face cache -------------------------------------------------------------------

def _sparse_copy(source, target):
    """Copies the data segments only, so holes stay holes."""
    with open(source, "rb") as src, open(target, "wb") as dst:
        size = os.fstat(src.fileno()).st_size
        offset = 0
        while offset < size:
            try:
                start = os.lseek(src.fileno(), offset, os.SEEK_DATA)
            except OSError:  # ENXIO: nothing but a hole to the end
                break
            end = os.lseek(src.fileno(), start, os.SEEK_HOLE)
            src.seek(start)
            dst.seek(start)
            left = end - start
            while left:
                chunk = src.read(min(left, 1 << 20))
                dst.write(chunk)
                left -= len(chunk)
            offset = end
        dst.truncate(size)


def write_cache(cache_dir, repo_id, commit, source_folder, refs=("main",)):
    """Puts the files of source_folder into a Hugging Face cache as a snapshot of commit:
    models--ORG--NAME/blobs/ETAG, snapshots/COMMIT/PATH (a relative symlink to the blob) and
    refs/REF (the commit, no newline). Returns the snapshot folder."""
    repo_cache = os.path.join(cache_dir, "models--" + repo_id.replace("/", "--"))
    blobs = os.path.join(repo_cache, "blobs")
    snapshot = os.path.join(repo_cache, "snapshots", commit)
    os.makedirs(blobs, exist_ok=True)
    for folder, _, files in os.walk(source_folder):
        for file in sorted(files):
            path = os.path.join(folder, file)
            relpath = os.path.relpath(path, source_folder).replace(os.sep, "/")
            etag = etag_of(path, relpath)
            blob = os.path.join(blobs, etag)
            if not os.path.exists(blob):
                _sparse_copy(path, blob + ".incomplete")
                os.replace(blob + ".incomplete", blob)
            link = os.path.join(snapshot, *relpath.split("/"))
            os.makedirs(os.path.dirname(link), exist_ok=True)
            if os.path.lexists(link):
                os.remove(link)
            os.symlink("../" * (relpath.count("/") + 2) + "blobs/" + etag, link)
    os.makedirs(snapshot, exist_ok=True)
    for ref in refs:
        ref_path = os.path.join(repo_cache, "refs", *ref.split("/"))
        os.makedirs(os.path.dirname(ref_path), exist_ok=True)
        with open(ref_path, "w") as out:
            out.write(commit)
    return snapshot


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="where the Hub's repositories go")
    parser.add_argument("--cache", help="a Hugging Face cache to fill with their main commits")
    args = parser.parse_args()
    repos = write_hub(args.root)
    for repo_id, repo in repos.items():
        if args.cache:
            write_cache(args.cache, repo_id, repo["commit"], repo["folder"])
        print(repo_id, repo["commit"])
    if args.cache:
        tiny = repos[TEST_ORG + "/tiny-llama"]
        commit = tiny["refs"]["v1.0"]
        write_cache(args.cache, TEST_ORG + "/tiny-llama", commit,
                    os.path.join(os.path.dirname(tiny["folder"]), commit), refs=("v1.0",))


if __name__ == "__main__":
    main()
