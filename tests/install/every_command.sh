#!/bin/sh
# Runs every command of an installed iteragpu, and `import iteragpu` from its Python package,
# checking each answer. Run by installed_copy_test.cmake from an empty environment, in a
# folder outside the source and build trees, with those trees hidden where it can.
#   every_command.sh PREFIX PYTHON PYTHON_PACKAGE_PARENT MEASUREMENT_JSON WORK_DIR
set -eu
prefix=$1 python=$2 python_dir=$3 measurement=$4 work=$5
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
cp "$measurement" measurement.json
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
step "measure (a GPU: a result file; none: exit 2 and no file)"
status=0
"$cli" measure --device cuda:0 --batch 1 --context 16 --width 64 --output m.json 2>measure.err || status=$?
cat measure.err
if [ "$status" -eq 0 ] && [ -s m.json ]; then
  echo "measured on a GPU"
elif [ "$status" -ne 2 ] || [ -e m.json ]; then
  echo "measure: exit $status, expected 0 with a file or 2 without"; exit 1
fi

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
print("python: import iteragpu from", os.path.dirname(iteragpu.__file__))
PY
echo "every command ran from $prefix"
