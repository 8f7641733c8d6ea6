#!/usr/bin/env bash
# The ctest `outputs_unchanged`: records every command's outputs with the build in BIN_DIR
# (record_outputs.sh: text and JSON, stdout, stderr, exit status and the files written, with
# the masks of mask_outputs.py) and compares them byte for byte with EXPECTED_DIR
# (tests/golden/expected/, recorded before the libiteragpu refactor). Prints the
# differences and exits 1 when there are any.
#
#   tests/golden/check_outputs.sh BIN_DIR [EXPECTED_DIR]
#
# The expected outputs were recorded on a machine with no NVIDIA driver and a CPU-only
# LibTorch (Debian's): where the host exposes an NVIDIA driver (every environment report
# names it) or the LibTorch plugin is missing or built against a CUDA or ROCm LibTorch (then
# `environment` lists GPUs), the comparison would only show the machine, so the test is
# skipped (exit 77) and says why.
#
# After a change of output that is intended, record the expected outputs again and review
# the difference with git diff:
#   rm -rf tests/golden/expected && tests/golden/record_outputs.sh build/bin tests/golden/expected
set -u -o pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BIN_DIR [EXPECTED_DIR]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd -P)
bin=$1
expected=${2:-$here/expected}

skip() {
  echo "SKIPPED: $*; the expected outputs were recorded with a CPU-only LibTorch and no NVIDIA driver"
  exit 77
}
for driver in /proc/driver/nvidia/version /sys/module/nvidia/version; do
  [ -e "$driver" ] && skip "this host exposes an NVIDIA driver ($driver)"
done
plugin=$bin/libiteragpu_torch_backend.so
[ -e "$plugin" ] || skip "no LibTorch backend plugin in $bin"
# The plugin's NEEDED entries name LibTorch's CUDA or HIP libraries when it was built with them.
if grep -qaE 'lib(c10|torch)_(cuda|hip)' "$plugin"; then
  skip "$plugin is built against a CUDA or ROCm LibTorch"
fi

actual=$(mktemp -d "${TMPDIR:-/tmp}/iteragpu-outputs.XXXXXX") || exit 2
trap 'rm -rf "$actual"' EXIT
start=$SECONDS
"$here/record_outputs.sh" "$bin" "$actual/outputs" || { echo "record_outputs.sh failed" >&2; exit 1; }
echo "recorded in $((SECONDS - start)) s; comparing with $expected"
if diff -ru "$expected" "$actual/outputs"; then
  echo "every output is identical to $expected ($(ls "$expected" | wc -l) invocations)"
  exit 0
fi
cat <<EOF

FAILED: the outputs above differ from $expected (- expected, + this build).
If the change is intended, record them again and review the difference with git diff:
  rm -rf tests/golden/expected && tests/golden/record_outputs.sh BUILD_DIR/bin tests/golden/expected
EOF
exit 1
