#!/usr/bin/env python3
"""What `import iteragpu` adds to a Python start-up: whole-process wall time of
`python3 -c 'import iteragpu'` against `python3 -c 'pass'`, measured side by side: runs
alternate (A, B, A, B, ...), so both see the same machine state; the difference of the
medians is reported, and whether LibTorch stayed out of the process.

Usage: /usr/bin/python3 tests/bench/python_import_bench.py [--runs N] [--package-dir DIR]
Target (issue: Python module): import cost <= 100 ms, LibTorch not loaded.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGET_MS = 100.0


def wall_seconds(argv, environment):
    start = time.perf_counter()
    completed = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment)
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        sys.exit(f"{argv} failed ({completed.returncode}): {completed.stderr.decode().strip()}")
    return elapsed


def libtorch_loaded_after_import(python, environment):
    check = (
        "import iteragpu\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('libtorch' in maps or 'libc10' in maps)\n"
    )
    completed = subprocess.run([python, "-c", check], capture_output=True, text=True, env=environment)
    if completed.returncode != 0:
        sys.exit(f"import iteragpu failed: {completed.stderr.strip()}")
    return completed.stdout.strip() == "True"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--package-dir", default=os.path.join(ROOT, "build", "python"),
                        help="the folder holding the iteragpu package (default build/python)")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    environment = dict(os.environ, PYTHONPATH=os.path.abspath(args.package_dir))
    importing = [args.python, "-c", "import iteragpu"]
    baseline = [args.python, "-c", "pass"]
    for _ in range(3):  # warm the page cache for both
        wall_seconds(importing, environment)
        wall_seconds(baseline, environment)
    import_times, pass_times = [], []
    for _ in range(args.runs):
        import_times.append(wall_seconds(importing, environment))
        pass_times.append(wall_seconds(baseline, environment))
    import_median = statistics.median(import_times) * 1e3
    pass_median = statistics.median(pass_times) * 1e3
    cost = import_median - pass_median
    torch_loaded = libtorch_loaded_after_import(args.python, environment)
    print(f"{time.strftime('%Y-%m-%d')} {platform.machine()} {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, {args.runs} interleaved runs each, medians of whole-process wall time")
    print(f"python3 -c 'import iteragpu' {import_median:7.2f} ms   python3 -c 'pass' {pass_median:7.2f} ms"
          f"   import cost {cost:6.2f} ms   target <= {TARGET_MS:.0f} ms {'met' if cost <= TARGET_MS else 'MISSED'}")
    print(f"LibTorch loaded by the import: {'YES (wrong)' if torch_loaded else 'no'}")
    return 0 if cost <= TARGET_MS and not torch_loaded else 1


if __name__ == "__main__":
    sys.exit(main())
