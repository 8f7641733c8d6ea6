#!/usr/bin/env python3
"""`iteragpu predict --model org/name` for a Llama-3.1-70B-shaped repository of 30 shards,
served on the loopback by tests/hub/hub_server.py with 50 ms added to every answer (as a
network would), then from a Hugging Face cache holding the same snapshot (HF_HUB_OFFLINE=1),
the same snapshot as a plain folder (what the prediction itself costs), and, where
huggingface_hub is installed, side by side with its get_safetensors_metadata on the
same server (the peer: headers only, no prediction). Runs alternate; medians of wall time;
the requests and bytes come from iteragpu's --verbose line.

Usage: python3 tests/bench/hub_bench.py [--runs N] [--latency-ms 50] [--iteragpu PATH]
Targets (issue: Any Hub model without downloading it): under 1 s from the Hub with 50 ms of
latency, under 50 ms from the cache.
"""
import argparse
import datetime
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "hub"))
import hub_repositories as hub  # noqa: E402

REPOSITORY = "iteragpu-test/llama-70b-shaped"
PREDICT = ["predict", "--model", REPOSITORY, "--compute-capability", "9.0", "--batch", "4", "--context", "8192"]


def start_server(root, work, latency_ms):
    port_file = os.path.join(work, "port")
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "hub", "hub_server.py"), "--root", root,
                               "--port-file", port_file, "--latency-ms", str(latency_ms)])
    while not os.path.exists(port_file):
        time.sleep(0.05)
    with open(port_file) as f:
        return server, int(f.read())


def timed(command, env):
    start = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(command), result.stderr))
    return elapsed, result.stderr.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--iteragpu", default=os.path.join(ROOT, "build", "bin", "iteragpu"))
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="iteragpu-hub-bench-")
    try:
        root, cache = os.path.join(work, "root"), os.path.join(work, "cache")
        repositories = hub.write_hub(root)
        hub.write_cache(cache, REPOSITORY, repositories[REPOSITORY]["commit"], repositories[REPOSITORY]["folder"])
        server, port = start_server(root, work, args.latency_ms)
        endpoint = "http://127.0.0.1:%d" % port
        base = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
        from_hub = dict(base, HF_ENDPOINT=endpoint, HF_HUB_CACHE=os.path.join(work, "empty"),
                        HF_HOME=os.path.join(work, "home"))
        from_cache = dict(base, HF_ENDPOINT=endpoint, HF_HUB_CACHE=cache, HF_HUB_OFFLINE="1")
        try:
            import huggingface_hub  # noqa: F401
            peer = [sys.executable, "-c",
                    "import sys; from huggingface_hub import get_safetensors_metadata as m; "
                    "m(sys.argv[1], revision='main')", REPOSITORY]
            peer_name = "huggingface_hub %s get_safetensors_metadata" % huggingface_hub.__version__
        except ImportError:
            peer, peer_name = None, None

        snapshot_folder = repositories[REPOSITORY]["folder"]
        times = {"hub": [], "cache": [], "folder": [], "peer": []}
        verbose = ""
        for _ in range(args.runs):
            elapsed, verbose = timed([args.iteragpu, *PREDICT, "--verbose"], from_hub)
            times["hub"].append(elapsed)
            times["cache"].append(timed([args.iteragpu, *PREDICT], from_cache)[0])
            times["folder"].append(timed([args.iteragpu, *PREDICT[:2], snapshot_folder, *PREDICT[3:]], base)[0])
            if peer:
                times["peer"].append(timed(peer, dict(from_hub, HF_HUB_DISABLE_TELEMETRY="1"))[0])
        server.send_signal(signal.SIGTERM)
        server.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    median = {k: statistics.median(v) for k, v in times.items() if v}
    print("hub_bench: %s, %s, Python %s, %s UTC" % (platform.node(), platform.processor() or platform.machine(),
                                                     platform.python_version(),
                                                     datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")))
    print("%d runs each, alternating; %d ms added to every answer of the loopback Hub" % (args.runs, args.latency_ms))
    print("  iteragpu predict --model %s, from the Hub:   median %.3f s (%s)" % (REPOSITORY, median["hub"], verbose))
    print("  iteragpu predict --model %s, from the cache: median %.3f s" % (REPOSITORY, median["cache"]))
    print("  iteragpu predict --model FOLDER (the same snapshot as a folder):   median %.3f s" % median["folder"])
    if peer:
        print("  %s, same server:       median %.3f s; iteragpu/peer %.2f" %
              (peer_name, median["peer"], median["hub"] / median["peer"]))
    else:
        print("  huggingface_hub is not installed here: no side-by-side figure (Debian does not package it)")
    print("targets: Hub < 1 s: %s; cache < 0.05 s: %s" % ("met" if median["hub"] < 1 else "NOT MET",
                                                          "met" if median["cache"] < 0.05 else "NOT MET"))


if __name__ == "__main__":
    main()
