#!/usr/bin/env python3
"""Whole-process time of `iteragpu estimate` and `iteragpu packages` against `python3 -S`
peers doing the same work, measured side by side: runs alternate (A, B, A, B, ...), so both
see the same machine state; medians and their ratio are reported.

Usage: /usr/bin/python3 tests/bench/cli_startup_bench.py [--runs N] [--iteragpu PATH]
Targets (issue: Foundation): ratio ≤ 0.10 for both commands.
"""
import argparse
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


DEVNULL = os.open(os.devnull, os.O_WRONLY)


def wall_seconds(argv):
    # posix_spawn + waitpid: the least harness overhead Python offers, the same for both sides.
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, DEVNULL, 1)])
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed with {os.waitstatus_to_exitcode(status)}")
    return elapsed


def compare(name, ours, peer, runs):
    for _ in range(3):  # warm the page cache for both
        wall_seconds(ours)
        wall_seconds(peer)
    our_times, peer_times = [], []
    for _ in range(runs):
        our_times.append(wall_seconds(ours))
        peer_times.append(wall_seconds(peer))
    ours_median, peer_median = statistics.median(our_times), statistics.median(peer_times)
    ratio = ours_median / peer_median
    print(f"{name:<10} iteragpu {ours_median * 1e3:7.2f} ms   python3 -S peer {peer_median * 1e3:7.2f} ms"
          f"   ratio {ratio:.3f}   target <= 0.10 {'met' if ratio <= 0.10 else 'MISSED'}")
    return ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--iteragpu", default=os.path.join(ROOT, "build", "bin", "iteragpu"))
    parser.add_argument("--python", default="/usr/bin/python3")
    args = parser.parse_args()
    catalog = os.path.join(ROOT, "data", "tarifs-forfaits.csv")
    print(f"{time.strftime('%Y-%m-%d')} {platform.machine()} {os.cpu_count()} CPUs,"
          f" {args.runs} interleaved runs each, medians of whole-process wall time")
    floor = statistics.median(wall_seconds(["/bin/true"]) for _ in range(args.runs))
    print(f"floor: /bin/true takes {floor * 1e3:.2f} ms in this harness (process creation)")
    ratios = [
        compare("estimate",
                [args.iteragpu, "estimate", "--parameters", "7000000000", "--bits", "16", "--reserve-gib", "4"],
                [args.python, "-S", os.path.join(HERE, "estimate_peer.py"), "7000000000", "16", "4"],
                args.runs),
        compare("packages",
                [args.iteragpu, "packages", "--gpu", "b200", "--days", "7", "--lots", "2"],
                [args.python, "-S", os.path.join(HERE, "packages_peer.py"), catalog, "b200", "7", "2"],
                args.runs),
    ]
    return 0 if all(r <= 0.10 for r in ratios) else 1


if __name__ == "__main__":
    sys.exit(main())
