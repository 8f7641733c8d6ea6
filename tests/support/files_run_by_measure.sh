#!/usr/bin/env bash
# The files of the tree that one `iteragpu measure` runs code from: a measure of how much a
# newcomer has to read to follow the command (README, "Following measure through the code").
#
#   tests/support/files_run_by_measure.sh [BUILD_DIR]      (default /tmp/iteragpu-coverage)
#
# Builds the CLI, the worker and the test plugin with gcov instrumentation into BUILD_DIR
# (no LibTorch, no Python), runs one measure on the test plugin, and prints every source
# or header file with at least one executed line, in either process, then the count.
# Headers are counted per object file (gcov -l), so an inline function run from any object
# counts its header.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-/tmp/iteragpu-coverage}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=--coverage \
    -DCMAKE_EXE_LINKER_FLAGS=--coverage -DCMAKE_MODULE_LINKER_FLAGS=--coverage \
    -DITERAGPU_WITH_TORCH=OFF -DITERAGPU_BUILD_PYTHON=OFF -DITERAGPU_BUILD_BENCHMARKS=OFF \
    -DITERAGPU_BUILD_TESTS=ON -DPython_EXECUTABLE=/usr/bin/python3 > "$build.configure.log"
fi
cmake --build "$build" --target iteragpu_cli iteragpu_measure_worker iteragpu_fake_backend > "$build.build.log"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
find "$build" -name '*.gcda' -delete
ITERAGPU_BACKEND="$build/bin/libiteragpu_fake_backend.so" "$build/bin/iteragpu" measure --device cuda:0 \
  --batch 1 --context 16 --width 64 --dtype float32 --warmup 1 --repeats 2 --output "$scratch/m.json" \
  > "$scratch/measure.log" 2>&1
cd "$scratch"
find "$build" -name '*.gcda' ! -path '*fake_backend*' | while read -r data; do
  gcov -l -p -o "$(dirname "$data")" "$data" > /dev/null 2>&1
done
for report in *.gcov; do
  if grep -qE '^ +[0-9]+\*?:' "$report"; then head -1 "$report" | sed 's/.*Source://'; fi
done | { grep "^$root/" || true; } | sed "s|^$root/||" | sort -u > files
cat files
echo "$(wc -l < files) files"
