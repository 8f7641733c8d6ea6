#!/bin/sh
# Runs every command of an installed iteragpu, and `import iteragpu` from its Python package,
# checking each answer. Run by installed_copy_test.cmake from an empty environment, in a
# folder outside the source and build trees, with those trees hidden where it can.
#   every_command.sh PREFIX PYTHON PYTHON_PACKAGE_PARENT MEASUREMENTS_DIR WORK_DIR
# MEASUREMENTS_DIR holds copies of examples/results/mesures-*.json.
set -eu
prefix=$1 python=$2 python_dir=$3 measurements=$4 work=$5
cli=$prefix/bin/iteragpu
cd "$work"
step() { echo "---- $*"; }
expect() {  # expect WORD FILE: FILE mentions WORD
  grep -q -- "$1" "$2" || { echo "expected '$1' in:"; cat "$2"; exit 1; }
}

step version && "$cli" --version
step estimate
"$cli" estimate --parameters 7B --bits 16 --reserve-gib 4 --format json >estimate.json
expect '13.03851604461669921875' estimate.json
step environment
"$cli" environment --format json >environment.json
step packages
"$cli" packages --gpu b200 --days 7 --lots 2 --accepted-results 3 >quote.txt
expect 'illustrative' quote.txt
step predict
"$cli" predict --compute-capability 9.0 --batch 1 --context 16 --width 64 >predict.txt
step results
cp "$prefix/share/iteragpu/resultats-bruts.csv" results.csv
cp "$measurements"/mesures-petit-essai.json measurement.json
"$cli" results add --table results.csv --measurement measurement.json --gpu h200 --days 7 \
  --work-unit "labelled image" --attempted 10 --accepted 3 --metric IoU --threshold ">= 0.8" \
  --observed 0.84 --date 2026-12-01
"$cli" results check --table results.csv
"$cli" results report --table results.csv --format json >report.json
step kit
if [ -f "$prefix/share/iteragpu/iteragpu-lab-v1.zip" ] && command -v unzip >/dev/null; then
  unzip -q "$prefix/share/iteragpu/iteragpu-lab-v1.zip"
  "$cli" kit verify iteragpu-lab-v1
else
  echo "no lab kit installed (built without zip) or no unzip: skipped"
fi
# measure and sweep run in the installed worker, which loads the installed plugin: on a
# machine without a GPU its own "no GPU available" answers (exit 2, no file), which a
# missing worker or plugin would not give.
measured_or_no_gpu() {  # measured_or_no_gpu NAME OUTPUT COMMAND...
  name=$1 output=$2; shift 2
  status=0
  "$@" 2>"$name.err" || status=$?
  cat "$name.err"
  if [ "$status" -eq 0 ] && [ -s "$output" ]; then
    echo "$name: measured on a GPU"
  elif [ "$status" -ne 2 ] || [ -e "$output" ] || ! grep -q 'no GPU available' "$name.err"; then
    echo "$name: exit $status, expected 0 with a file, or 2 from the worker without one"; exit 1
  fi
}
step "measure (a GPU: a result file; none: exit 2 and no file)"
measured_or_no_gpu measure m.json "$cli" measure --device cuda:0 --batch 1 --context 16 --width 64 --output m.json
step sweep
measured_or_no_gpu sweep s.json "$cli" sweep --device cuda:0 --vary batch --width 64 --budget 1000000000 --output s.json
step compare
cp "$measurements"/mesures-float32.json "$measurements"/mesures-bfloat16.json .
"$cli" compare mesures-float32.json mesures-bfloat16.json >compare.txt
expect 'bfloat16' compare.txt

step python
PYTHONPATH=$python_dir "$python" - "$prefix" <<'PY'
import os, sys
import iteragpu
prefix = os.path.realpath(sys.argv[1])
assert os.path.realpath(iteragpu.__file__).startswith(prefix + os.sep), iteragpu.__file__
e = iteragpu.estimate(parameters="7B", bits=16, reserve_gib=4)
assert str(e.weights.gib) == "13.03851604461669921875", e.weights.gib
q = iteragpu.quote("b200", days=7, lots=2, accepted_results=3)
assert q.total_cents == 318562, q.total_cents  # read from the installed catalog
iteragpu.environment()
# A measurement from Python runs in the worker beside the installed module.
try:
    m = iteragpu.measure(device="cuda:0", batch=1, context=16, width=64, output="py.json")
    assert os.path.getsize("py.json") > 0
except iteragpu.DeviceUnavailable as error:
    assert "no GPU available" in str(error), error
    assert not os.path.exists("py.json")
c = iteragpu.compare("mesures-float32.json", "mesures-bfloat16.json")
assert "bfloat16" in str(c), str(c)
print("python: import iteragpu from", os.path.dirname(iteragpu.__file__))
PY
echo "every command ran from $prefix"
