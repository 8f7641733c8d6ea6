#!/usr/bin/env python3
"""iteragpu against huggingface_hub itself, where it is installed (the GPU machine's Python
has it; Debian does not package it): huggingface_hub downloads repositories (hf_hub_download) from the loopback
Hub (hub_server.py) into a Hugging Face cache of its own making, then iteragpu reads that
cache with the network forbidden; and iteragpu's reading of the headers over HTTP agrees with
huggingface_hub's get_safetensors_metadata on every shard's tensor count and every dtype's
parameter count.

Usage: python3 tests/hub/huggingface_hub_check.py --iteragpu BUILD/bin/iteragpu
Prints one line per check and exits 1 on the first disagreement."""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hub_repositories as hub  # noqa: E402

REPOSITORIES = ("iteragpu-test/tiny-llama", "iteragpu-test/tiny-llama-sharded", "Qwen/Qwen2.5-7B-Instruct")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iteragpu", required=True)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="iteragpu-hf-check-")
    root, cache = os.path.join(work, "root"), os.path.join(work, "cache")
    repositories = hub.write_hub(root)
    port_file = os.path.join(work, "port")
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "hub_server.py"), "--root", root,
                               "--port-file", port_file])
    while not os.path.exists(port_file):
        time.sleep(0.05)
    endpoint = "http://127.0.0.1:%d" % int(open(port_file).read())
    # huggingface_hub reads its endpoint when it is imported.
    os.environ.update(HF_ENDPOINT=endpoint, HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_XET="1")
    import huggingface_hub
    print("huggingface_hub %s against the loopback Hub at %s" % (huggingface_hub.__version__, endpoint))
    failures = 0
    try:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
        for repo_id in REPOSITORIES:
            # Its headers over HTTP: iteragpu and huggingface_hub, tensor by tensor count.
            metadata = huggingface_hub.get_safetensors_metadata(repo_id)
            estimate = subprocess.run([args.iteragpu, "estimate", "--checkpoint", repo_id, "--format", "json"],
                                      env=dict(base, HF_ENDPOINT=endpoint, HF_HUB_CACHE=os.path.join(work, "none")),
                                      capture_output=True, text=True)
            if estimate.returncode != 0:
                print("FAIL %s: iteragpu estimate: %s" % (repo_id, estimate.stderr.strip()))
                failures += 1
                continue
            document = json.loads(estimate.stdout)
            ours = {shard["name"]: shard["tensors"] for shard in document["shards"]}
            theirs = {name: len(m.tensors) for name, m in metadata.files_metadata.items()}
            ours_dtypes = {d["dtype"]: int(d["parameters"]) for d in document["dtypes"]}
            same = ours == theirs and ours_dtypes == dict(metadata.parameter_count)
            print("%s %s: shards and tensors %s, parameters per dtype %s (iteragpu) / %s (huggingface_hub)" % (
                "ok  " if same else "FAIL", repo_id, ours, ours_dtypes, dict(metadata.parameter_count)))
            failures += not same
            if repo_id == "Qwen/Qwen2.5-7B-Instruct":
                continue  # its sparse shards are 15 GB to download: headers only
            # A cache of huggingface_hub's own making, read with the network forbidden.
            # hf_hub_download file by file: the loopback Hub has no /api to list a repository.
            folder_of_commit = repositories[repo_id]["folder"]
            for name in sorted(os.listdir(folder_of_commit)):
                path = huggingface_hub.hf_hub_download(repo_id, name, cache_dir=cache)
            snapshot = os.path.dirname(path)
            predict = [args.iteragpu, "predict", "--model", repo_id, "--compute-capability", "9.0", "--format",
                       "json"]
            cached = subprocess.run(predict, env=dict(base, HF_HUB_CACHE=cache, HF_HUB_OFFLINE="1"),
                                    capture_output=True, text=True)
            folder = subprocess.run(predict[:3] + [snapshot] + predict[4:], env=base, capture_output=True, text=True)
            ok = cached.returncode == 0 and folder.returncode == 0
            if ok:
                source = json.loads(cached.stdout)["configuration"].pop("model_source")
                a, b = json.loads(cached.stdout), json.loads(folder.stdout)
                a["configuration"].pop("model_source"), a["configuration"].pop("model"), b["configuration"].pop("model")
                ok = source["read_from"] == "huggingface_cache" and source["location"] == snapshot and a == b
            print("%s %s: hf_hub_download's cache read offline, %s" % (
                "ok  " if ok else "FAIL", repo_id,
                "the same prediction as its snapshot folder" if ok else (cached.stderr + folder.stderr).strip()))
            failures += not ok
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    print("huggingface_hub_check: %s" % ("every check agrees" if not failures else "%d failed" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
