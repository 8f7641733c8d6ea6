#!/usr/bin/env bash
# Records what every iteragpu command prints for a fixed list of invocations, so that the
# outputs of two builds can be compared byte for byte (the ctest `outputs_unchanged` compares
# the current build's against tests/golden/expected/).
#
#   tests/golden/record_outputs.sh BIN_DIR OUT_DIR
#
# BIN_DIR holds iteragpu, iteragpu-measure-worker, libiteragpu_fake_backend.so (the scripted
# test double of tests/cpp/fake_backend.hpp) and libiteragpu_torch_backend.so; the shipped
# data are BIN_DIR/../share/iteragpu, as for any build tree. OUT_DIR gets one file per
# invocation, NNN-name.out:
#
#   $ iteragpu ARGS            the command line (and the variables set for it)
#   exit: N
#   --- stdout                 then --- stderr, then for each file the case names,
#   --- file PATH              its content, or "--- file PATH: absent"
#
# Everything runs in a new temporary folder, with relative paths and fixed file names, with
# no iteragpu/PyTorch variable inherited. The recorded files are then put through
# mask_outputs.py (beside this script), which replaces the build's paths and the host's
# identity by placeholders and masks the measured host times; see that file for the list.
# Set ITERAGPU_GOLDEN_RAW=1 to keep the unmasked files (to check what the mask hides).
set -u -o pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BIN_DIR OUT_DIR" >&2
  exit 2
fi
BIN=$(cd "$1" && pwd -P) || exit 2
mkdir -p "$2" && OUT=$(cd "$2" && pwd -P) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd -P)
SRC=$(cd "$HERE/../.." && pwd -P)
PYTHON=${ITERAGPU_GOLDEN_PYTHON:-$(command -v python3 || echo /usr/bin/python3)}
IG=$BIN/iteragpu
FAKE=$BIN/libiteragpu_fake_backend.so
TORCH=$BIN/libiteragpu_torch_backend.so
for needed in "$IG" "$BIN/iteragpu-measure-worker" "$FAKE"; do
  [ -e "$needed" ] || { echo "$0: $needed is missing (build it first)" >&2; exit 2; }
done
if find "$OUT" -mindepth 1 -maxdepth 1 | grep -q .; then
  echo "$0: $OUT is not empty" >&2
  exit 2
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/iteragpu-golden.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
WORK=$(cd "$WORK" && pwd -P)
cd "$WORK" || exit 2

# Nothing inherited changes what is recorded: no backend or fake script, no data folder, no
# allocator or workspace variable (predict reports them as caveats), no terminal, a home
# that holds none of the paths (so none is written with ~), one locale.
unset ITERAGPU_BACKEND ITERAGPU_FAKE_BACKEND ITERAGPU_FAKE_ABI_VERSION ITERAGPU_DATA_DIR \
      PYTORCH_CUDA_ALLOC_CONF PYTORCH_ALLOC_CONF CUBLAS_WORKSPACE_CONFIG CUBLASLT_WORKSPACE_SIZE \
      DISABLE_ADDMM_CUDA_LT CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES NO_COLOR COLUMNS
export HOME=/nonexistent-iteragpu-golden-home TERM=dumb LC_ALL=C.UTF-8 TZ=UTC

STAGE=$WORK/.recorded
mkdir "$STAGE" || exit 2
n=0
# run NAME [-f FILE]... [-e VAR=VALUE]... -- ARG...: one invocation of iteragpu ARG...,
# with VAR=VALUE in its environment; each FILE's content (or absence) is recorded after it.
# Only iteragpu (and cp for a FILE) is started here; the .out files are put together at the
# end (few processes: CI machines are small).
run() {
  local name=$1 files=() envs=() rc base file k=0
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
      -f) files+=("$2"); shift 2 ;;
      -e) envs+=("$2"); shift 2 ;;
      *) echo "$0: run $name: bad option $1" >&2; exit 2 ;;
    esac
  done
  shift
  n=$((n + 1))
  printf -v base '%s/%03d-%s' "$STAGE" "$n" "$name"
  if [ ${#envs[@]} -gt 0 ]; then
    env "${envs[@]}" "$IG" "$@" >"$base.stdout" 2>"$base.stderr" </dev/null
  else
    "$IG" "$@" >"$base.stdout" 2>"$base.stderr" </dev/null
  fi
  rc=$?
  # The command line as a shell reads it (quoted here rather than with printf %q, whose
  # output changes between bash versions).
  local arg line='$'
  for arg in ${envs[@]+"${envs[@]}"} iteragpu "$@"; do
    if [[ $arg =~ ^[A-Za-z0-9_./:=,%+@-]+$ ]]; then line+=" $arg"; else line+=" '${arg//\'/\'\\\'\'}'"; fi
  done
  printf '%s\nexit: %d\n' "$line" "$rc" >"$base.head"
  for file in ${files[@]+"${files[@]}"}; do
    k=$((k + 1))
    printf '%s\n' "$file" >"$base.file$k.name"
    if [ -f "$file" ]; then cp -- "$file" "$base.file$k"; fi
  done
}

# ---------------------------------------------------------------------------------------
# Inputs the commands read, written here: safetensors checkpoints (an 8-byte little-endian
# header length, the JSON header padded with spaces to a multiple of 8, zero data; as
# tests/support/safetensors_writer.hpp), a small catalog, a lab kit, measurement files.
"$PYTHON" - "$SRC/tests/support" <<'EOF' || exit 2
import hashlib, json, os, struct, sys

sys.path.insert(0, sys.argv[1])
from safetensors_files import write_safetensors as write

write("tiny.safetensors", [("embed.weight", "BF16", [32, 16]), ("norm.weight", "F32", [16]),
                           ("mlp.qweight", "U8", [16, 8]), ("mlp.scales", "F16", [2, 16])])
os.mkdir("sharded")
first = [("layers.0.weight", "BF16", [64, 32]), ("layers.0.bias", "F32", [64])]
second = [("lm_head.weight", "BF16", [100, 32]), ("lm_head.qzeros", "I32", [4, 8])]
total = write("sharded/model-00001-of-00002.safetensors", first)
total += write("sharded/model-00002-of-00002.safetensors", second)
weight_map = {t[0]: "model-00001-of-00002.safetensors" for t in first}
weight_map.update({t[0]: "model-00002-of-00002.safetensors" for t in second})
with open("sharded/model.safetensors.index.json", "w") as f:
    json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
write("cut.safetensors", [("a", "F32", [8, 8]), ("b", "F16", [4])], cut=2)
write("huge-header.safetensors", [("a", "F32", [2])], length=85966670672)
with open("not-json.safetensors", "wb") as f:
    f.write(struct.pack("<Q", 16) + b"this is not json")
os.mkdir("mismatch")
write("mismatch/model-00001-of-00001.safetensors", first)
with open("mismatch/model.safetensors.index.json", "w") as f:
    json.dump({"weight_map": {"layers.0.weight": "model-00001-of-00001.safetensors",
                              "other.weight": "model-00001-of-00001.safetensors"}}, f)

with open("my-catalog.csv", "w") as f:
    f.write("gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source,device_names\n")
    f.write("tiny,Tiny GPU,3,1000,1,2026-12-01,my own quote,Tiny GPU\n")
    f.write('tiny,Tiny GPU,7,2001,1,2026-12-01,"my own quote, with a comma",Tiny GPU\n')
    f.write("big,Big GPU,30,99999999,8,2026-12-01,my own quote,Big GPU\n")
with open("bad-catalog.csv", "w") as f:
    f.write("gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source,device_names\n")
    f.write("tiny,Tiny GPU,3,1000,1,2026-12-01,my own quote,Tiny GPU\n")
    f.write("tiny,Tiny GPU,7,not-a-price,1,2026-12-01,my own quote,Tiny GPU\n")

members = {"README.md": "A kit for the golden outputs.\n", "notes.txt": "one\ntwo\n",
           "tarifs.csv": "gpu,days\nb200,7\n"}
for kit in ("iteragpu-lab-v1", "kit-tampered"):
    os.mkdir(kit)
    entries = []
    for name, text in members.items():
        with open(os.path.join(kit, name), "w") as f:
            f.write(text)
        entries.append('    {"path": "%s", "size": %d, "sha256": "%s"}'
                       % (name, len(text.encode()), hashlib.sha256(text.encode()).hexdigest()))
    entries.append('    {"path": "MANIFEST.json", "size": null, "sha256": null}')
    with open(os.path.join(kit, "MANIFEST.json"), "w") as f:
        f.write('{\n  "schema": "iteragpu.lab-kit-manifest",\n  "schema_version": 1,\n'
                '  "kit": "iteragpu-lab-v1",\n  "note": "golden outputs",\n  "members": [\n'
                + ",\n".join(entries) + "\n  ]\n}\n")
with open("kit-tampered/notes.txt", "w") as f:
    f.write("one\nTWO\n")
os.remove("kit-tampered/tarifs.csv")
with open("kit-tampered/extra.txt", "w") as f:
    f.write("not listed\n")
EOF
# Real H200 measurements (fixed files): compare and results add on them are deterministic.
cp "$SRC/examples/results/mesures-float32.json" h200-float32.json
cp "$SRC/examples/results/mesures-bfloat16.json" h200-bfloat16.json
printf 'existing\n' >existing.json
printf 'date,measurement_file\n' >not-a-measurement.json

# ---------------------------------------------------------------------------------------
# The command itself
run help -- --help
run version -- --version
run no-command --
run unknown-command -- frobnicate
run help-estimate -- estimate --help
run help-environment -- environment --help
run help-measure -- measure --help
run help-predict -- predict --help
run help-sweep -- sweep --help
run help-compare -- compare --help
run help-packages -- packages --help
run help-results -- results --help
run help-results-add -- results add --help
run help-results-check -- results check --help
run help-results-report -- results report --help
run help-kit -- kit --help

# ---------------------------------------------------------------------------------------
# estimate
run estimate-7e9-16 -- estimate --parameters 7000000000 --bits 16 --reserve-gib 4
run estimate-7e9-16-json -- estimate --parameters 7000000000 --bits 16 --reserve-gib 4 --format json
run estimate-7b-4 -- estimate --parameters 7B --bits 4
run estimate-1.5m-3 -- estimate --parameters 1.5M --bits 3
run estimate-1.5m-3-json -- estimate --parameters 1.5M --bits 3 --format json
run estimate-70b-reserve -- estimate --parameters 70B --bits 16 --reserve-gib 2.5
run estimate-1.2t-json -- estimate --parameters 1.2T --bits 8 --format json
run estimate-2k-1 -- estimate --parameters 2K --bits 1
run estimate-whole-decimal -- estimate --parameters 7000000000.0 --bits 16
run estimate-huge-json -- estimate --parameters 123456789012345678901234567890 --bits 33 --format json
run estimate-checkpoint -- estimate --checkpoint tiny.safetensors --reserve-gib 1
run estimate-checkpoint-json -- estimate --checkpoint tiny.safetensors --format json
run estimate-checkpoint-by-tensor -- estimate --checkpoint tiny.safetensors --by-tensor
run estimate-sharded -- estimate --checkpoint sharded --by-tensor
run estimate-sharded-json -- estimate --checkpoint sharded/model.safetensors.index.json --by-tensor --format json
run estimate-bad-cut -- estimate --checkpoint cut.safetensors
run estimate-bad-header-length -- estimate --checkpoint huge-header.safetensors
run estimate-bad-not-json -- estimate --checkpoint not-json.safetensors --format json
run estimate-bad-index -- estimate --checkpoint mismatch
run estimate-bad-missing-file -- estimate --checkpoint nowhere.safetensors
run estimate-bad-no-bits -- estimate --parameters 7B
run estimate-bad-nothing -- estimate
run estimate-bad-exponent -- estimate --parameters 7e9 --bits 16
run estimate-bad-bits-decimal -- estimate --parameters 7B --bits 16.0
run estimate-bad-bits-zero -- estimate --parameters 7B --bits 0
run estimate-bad-negative -- estimate --parameters -5 --bits 8
run estimate-bad-reserve -- estimate --parameters 7B --bits 16 --reserve-gib -1
run estimate-bad-both -- estimate --parameters 7B --bits 16 --checkpoint tiny.safetensors
run estimate-bad-format -- estimate --parameters 7B --bits 16 --format xml
run estimate-bad-flag -- estimate --parameters 7B --bits 16 --frobnicate

# ---------------------------------------------------------------------------------------
# environment: the real plugin (CPU-only LibTorch where the outputs were recorded: no GPU)
# and the test double
run environment-libtorch -- environment --backend "$TORCH"
run environment-libtorch-json -- environment --backend "$TORCH" --format json
run environment-fake -e ITERAGPU_BACKEND="$FAKE" -- environment
run environment-fake-json -e ITERAGPU_BACKEND="$FAKE" -- environment --format json
run environment-fake-2gpus-output -f env.json -e ITERAGPU_FAKE_BACKEND='gpus=2' -- \
  environment --backend "$FAKE" --device cuda:1 --output env.json
run environment-fake-absent-device -e ITERAGPU_BACKEND="$FAKE" -- environment --device cuda:4
run environment-fake-no-gpu-json -e ITERAGPU_BACKEND="$FAKE" -e ITERAGPU_FAKE_BACKEND='gpus=0' -- \
  environment --format json
run environment-bad-output-exists -f existing.json -e ITERAGPU_BACKEND="$FAKE" -- environment --output existing.json
run environment-bad-device -e ITERAGPU_BACKEND="$FAKE" -- environment --device gpu0
run environment-bad-backend -- environment --backend nowhere/libnothing.so
run environment-bad-abi -e ITERAGPU_FAKE_ABI_VERSION=999 -- environment --backend "$FAKE"
run environment-bad-flag -- environment --gpus

# ---------------------------------------------------------------------------------------
# packages
run packages-list -- packages --list
run packages-list-json -- packages --list --format json
run packages-b200 -- packages --gpu b200 --days 7 --lots 2 --accepted-results 3
run packages-b200-json -- packages --gpu b200 --days 7 --lots 2 --accepted-results 3 --format json
run packages-h100-30d -- packages --gpu H100-SXM --days 30
run packages-3d-json -- packages --gpu h200 --days 3 --accepted-results 8 --format json
run packages-a100-exact -- packages --gpu a100-80gb --days 7 --lots 3 --accepted-results 40
run packages-own-catalog -- packages --catalog my-catalog.csv --gpu tiny --days 7 --accepted-results 7
run packages-own-catalog-list-json -- packages --catalog my-catalog.csv --list --format json
run packages-bad-gpu -- packages --gpu nope --days 7
run packages-bad-days -- packages --gpu b200 --days 5
run packages-bad-lots -- packages --gpu b200 --days 7 --lots 0
run packages-bad-accepted -- packages --gpu b200 --days 7 --accepted-results abc
run packages-bad-accepted-zero -- packages --gpu b200 --days 7 --accepted-results 0
run packages-bad-no-days -- packages --gpu b200
run packages-bad-nothing -- packages
run packages-bad-catalog -- packages --catalog bad-catalog.csv --gpu tiny --days 3
run packages-bad-catalog-missing -- packages --catalog nowhere.csv --list
run packages-bad-flag -- packages --gpu b200 --days 7 --weeks 1

# ---------------------------------------------------------------------------------------
# predict
run predict-cc90 -- predict --compute-capability 9.0
run predict-cc90-json -- predict --compute-capability 9.0 --format json
run predict-cc90-next-step -- predict --compute-capability 9.0 --batch 2 --context 128 --width 1024 --warmup 3 --repeats 5
run predict-cc80 -- predict --compute-capability 8.0 --batch 4 --context 64 --width 256
run predict-cc80-json -- predict --compute-capability 8.0 --batch 4 --context 64 --width 256 --format json
run predict-cc80-hidden-bf16 -- predict --compute-capability 8.0 --width 48 --hidden 100 --dtype bfloat16 --warmup 0 --repeats 1
run predict-cc90-fp16-large -- predict --compute-capability 9.0 --dtype float16 --batch 8 --context 2048 --width 4096 --warmup 0
run predict-cc90-width1 -- predict --compute-capability 9.0 --width 1 --hidden 1
run predict-alloc-conf -e PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- predict --compute-capability 9.0
run predict-fake-device -e ITERAGPU_BACKEND="$FAKE" -- predict --device cuda:0 --batch 2 --width 128
run predict-fake-device-json -- predict --backend "$FAKE" --device cuda:0 --dtype bfloat16 --format json
run predict-cc77 -- predict --compute-capability 7.7 --context 32
run predict-bad-cc -- predict --compute-capability 9
run predict-bad-neither -- predict --batch 2
run predict-bad-batch -- predict --compute-capability 9.0 --batch 0
run predict-bad-dtype -- predict --compute-capability 9.0 --dtype int8
run predict-bad-width -- predict --compute-capability 9.0 --width abc
run predict-bad-fake-absent-device -e ITERAGPU_BACKEND="$FAKE" -- predict --device cuda:3

# ---------------------------------------------------------------------------------------
# measure, through the test double (the worker loads the plugin named by --backend or
# ITERAGPU_BACKEND)
run measure-default -f m-default.json -e ITERAGPU_BACKEND="$FAKE" -- measure --output m-default.json
run measure-bf16-json -f m-bf16.json -- measure --backend "$FAKE" --batch 2 --context 8 --width 32 \
  --dtype bfloat16 --warmup 0 --repeats 3 --format json --output m-bf16.json
run measure-hidden-fp16 -f m-hidden.json -e ITERAGPU_BACKEND="$FAKE" -- measure --width 48 --hidden 100 \
  --dtype float16 --warmup 2 --repeats 5 --seed 7 --output m-hidden.json
run measure-all -f m-all.json -f m-all-cuda0.json -f m-all-cuda1.json \
  -e ITERAGPU_BACKEND="$FAKE" -e ITERAGPU_FAKE_BACKEND='gpus=2' -- measure --device all --output m-all.json
run measure-list-json -f m-list.json -f m-list-cuda1.json -f m-list-cuda2.json \
  -e ITERAGPU_BACKEND="$FAKE" -e ITERAGPU_FAKE_BACKEND='gpus=3' -- measure --device cuda:1,cuda:2 --format json --output m-list.json
run measure-all-one-oom -f m-partial.json -f m-partial-cuda0.json -f m-partial-cuda1.json \
  -e ITERAGPU_BACKEND="$FAKE" -e ITERAGPU_FAKE_BACKEND='gpus=2;fail_device=1:forward:1:oom' -- \
  measure --device all --output m-partial.json
run measure-oom -f m-oom.json -e ITERAGPU_BACKEND="$FAKE" -e ITERAGPU_FAKE_BACKEND='memory=8388608' -- \
  measure --width 1024 --output m-oom.json
run measure-oom-json -f m-oom.json -e ITERAGPU_BACKEND="$FAKE" -e ITERAGPU_FAKE_BACKEND='fail=load_model:1:oom' -- \
  measure --format json --output m-oom.json
run measure-failed-device -f m-failed.json -e ITERAGPU_BACKEND="$FAKE" -e ITERAGPU_FAKE_BACKEND='fail=synchronize:3:failed' -- \
  measure --output m-failed.json
run measure-unsupported-dtype -f m-fp16.json -e ITERAGPU_BACKEND="$FAKE" -e ITERAGPU_FAKE_BACKEND='unsupported_dtype=float16' -- \
  measure --dtype float16 --output m-fp16.json
run measure-absent-device -f m-absent.json -e ITERAGPU_BACKEND="$FAKE" -- measure --device cuda:2 --output m-absent.json
run measure-libtorch-no-gpu -f m-libtorch.json -- measure --backend "$TORCH" --output m-libtorch.json
run measure-bad-backend -f m-nobackend.json -- measure --backend nowhere/libnothing.so --output m-nobackend.json
run measure-bad-batch-zero -e ITERAGPU_BACKEND="$FAKE" -- measure --batch 0 --output m-bad.json
run measure-bad-batch-abc -e ITERAGPU_BACKEND="$FAKE" -- measure --batch abc --output m-bad.json
run measure-bad-dtype -e ITERAGPU_BACKEND="$FAKE" -- measure --dtype int8 --output m-bad.json
run measure-bad-repeats -e ITERAGPU_BACKEND="$FAKE" -- measure --repeats 0 --output m-bad.json
run measure-bad-output-exists -f m-default.json -e ITERAGPU_BACKEND="$FAKE" -- measure --output m-default.json
run measure-bad-no-output -e ITERAGPU_BACKEND="$FAKE" -- measure
run measure-bad-device -e ITERAGPU_BACKEND="$FAKE" -- measure --device cpu --output m-bad.json
run measure-bad-flag -e ITERAGPU_BACKEND="$FAKE" -- measure --output m-bad.json --layers 3

# ---------------------------------------------------------------------------------------
# sweep, through the test double with a 1 GiB GPU (few points)
sweep_env=(-e ITERAGPU_BACKEND="$FAKE" -e ITERAGPU_FAKE_BACKEND='memory=1073741824')
run sweep-batch "${sweep_env[@]}" -- sweep --vary batch --width 256
run sweep-batch-json "${sweep_env[@]}" -- sweep --vary batch --width 256 --format json
run sweep-width "${sweep_env[@]}" -- sweep --vary width --budget 268435456
run sweep-width-hidden -f sweep-width-hidden.json "${sweep_env[@]}" -- sweep --vary width --hidden 512 --output sweep-width-hidden.json
run sweep-context-bf16 "${sweep_env[@]}" -- sweep --vary context --dtype bfloat16 --batch 4 --width 128 --budget 25%
run sweep-hidden-json "${sweep_env[@]}" -- sweep --vary hidden --width 128 --format json
run sweep-start-too-big "${sweep_env[@]}" -- sweep --vary batch --width 8192 --context 4096
run sweep-bad-vary "${sweep_env[@]}" -- sweep --vary depth
run sweep-bad-no-vary "${sweep_env[@]}" -- sweep
run sweep-bad-budget "${sweep_env[@]}" -- sweep --vary batch --budget 150%
run sweep-bad-budget-abc "${sweep_env[@]}" -- sweep --vary batch --budget lots
run sweep-bad-output-exists -f existing.json "${sweep_env[@]}" -- sweep --vary batch --output existing.json
run sweep-bad-device "${sweep_env[@]}" -- sweep --vary batch --device all

# ---------------------------------------------------------------------------------------
# compare: the files measure wrote above, and the real H200 pair (whose times are fixed)
run compare-fake -- compare m-default.json m-bf16.json m-hidden.json
run compare-fake-json -- compare m-default.json m-all-cuda1.json --format json
run compare-fake-markdown -- compare m-all-cuda0.json m-all-cuda1.json --format markdown
run compare-fake-csv -- compare m-default.json m-hidden.json --format csv
run compare-h200 -- compare h200-float32.json h200-bfloat16.json
run compare-h200-json -- compare h200-float32.json h200-bfloat16.json --format json
run compare-h200-markdown -- compare h200-bfloat16.json h200-float32.json --format markdown
run compare-h200-csv -- compare h200-float32.json h200-bfloat16.json --format csv
run compare-bad-one-file -- compare m-default.json
run compare-bad-missing -- compare m-default.json nowhere.json
run compare-bad-summary -- compare m-all.json m-default.json
run compare-bad-not-measurement -- compare m-default.json not-a-measurement.json
run compare-bad-format -- compare m-default.json m-bf16.json --format yaml

# ---------------------------------------------------------------------------------------
# results: a table of our own; test-double measurements are refused
cp "$SRC/data/resultats-bruts.csv" results.csv
row=(--gpu h200 --days 7 --work-unit "translated ticket" --attempted 200 --accepted 163
     --metric "reviewer score 1-5" --threshold ">= 4" --observed "mean 4.2")
run results-report-empty -- results report --table results.csv
run results-add-fake-refused -f results.csv -- results add --table results.csv --measurement m-default.json \
  "${row[@]}" --date 2026-12-01
run results-add -f results.csv -- results add --table results.csv --measurement h200-float32.json \
  "${row[@]}" --date 2026-12-01
run results-add-json -f results.csv -- results add --table results.csv --measurement h200-bfloat16.json \
  --gpu h200 --days 30 --lots 2 --work-unit "translated ticket" --attempted 90 --accepted 90 \
  --metric "reviewer score 1-5" --threshold ">= 4" --observed "mean 4.6" --date 2026-12-03 --notes "bf16 run" --format json
run results-add-gpu-mismatch -f results.csv -- results add --table results.csv --measurement h200-float32.json \
  --gpu b200 --days 3 --work-unit "translated ticket" --attempted 10 --accepted 7 \
  --metric "reviewer score 1-5" --threshold ">= 4" --observed "mean 4.0" --date 2026-12-02
run results-add-gpu-mismatch-ok -f results.csv -- results add --table results.csv --measurement h200-float32.json \
  --gpu b200 --days 3 --work-unit "translated ticket" --attempted 10 --accepted 7 \
  --metric "reviewer score 1-5" --threshold ">= 4" --observed "mean 4.0" --date 2026-12-02 --gpu-mismatch-ok
run results-check -- results check --table results.csv
run results-check-json -- results check --table results.csv --format json
run results-report -- results report --table results.csv
run results-report-json -- results report --table results.csv --format json
run results-report-csv-cost -- results report --table results.csv --format csv --sort cost --descending
run results-report-gpu -- results report --table results.csv --sort gpu
run results-bad-accepted -f results.csv -- results add --table results.csv --measurement h200-float32.json \
  --gpu h200 --days 7 --work-unit "ticket" --attempted 5 --accepted 6 --metric score --threshold ">= 4" --observed 4 --date 2026-12-01
run results-bad-missing-options -- results add --table results.csv --measurement h200-float32.json
run results-bad-date -- results add --table results.csv --measurement h200-float32.json "${row[@]}" --date 2026-13-01
run results-bad-no-table -- results check
run results-bad-missing-table -- results report --table nowhere.csv
run results-bad-no-subcommand -- results
run results-bad-subcommand -- results remove --table results.csv
run results-bad-sort -- results report --table results.csv --sort price
printf '\n' >>h200-bfloat16.json
run results-check-changed-measurement -- results check --table results.csv
run results-check-changed-measurement-json -- results check --table results.csv --format json

# ---------------------------------------------------------------------------------------
# kit verify: a kit written above, intact and tampered with
run kit-verify -- kit verify iteragpu-lab-v1
run kit-verify-json -- kit verify --kit iteragpu-lab-v1 --format json
run kit-verify-tampered -- kit verify kit-tampered
run kit-verify-tampered-json -- kit verify kit-tampered --format json
run kit-verify-missing -- kit verify nowhere
run kit-bad-no-dir -- kit verify
run kit-bad-subcommand -- kit build iteragpu-lab-v1

# ---------------------------------------------------------------------------------------
# One file per invocation: the command line and exit status, stdout, stderr, then each file
# named with -f; a section whose last byte is not a newline says so, as diff does.
"$PYTHON" - "$STAGE" "$OUT" <<'EOF' || exit 2
import os, sys
stage, out = sys.argv[1], sys.argv[2]

def section(title, path):
    with open(path, "rb") as f:
        data = f.read()
    text = title.encode() + b"\n" + data
    if data and not data.endswith(b"\n"):
        text += b"\n\\ No newline at end of section\n"
    return text

for head in sorted(name for name in os.listdir(stage) if name.endswith(".head")):
    base = os.path.join(stage, head[:-len(".head")])
    with open(base + ".head", "rb") as f:
        text = f.read()
    text += section("--- stdout", base + ".stdout") + section("--- stderr", base + ".stderr")
    k = 1
    while os.path.exists("%s.file%d.name" % (base, k)):
        with open("%s.file%d.name" % (base, k)) as f:
            name = f.read().rstrip("\n")
        if os.path.exists("%s.file%d" % (base, k)):
            text += section("--- file " + name, "%s.file%d" % (base, k))
        else:
            text += ("--- file %s: absent\n" % name).encode()
        k += 1
    with open(os.path.join(out, head[:-len(".head")] + ".out"), "wb") as f:
        f.write(text)
EOF
if [ "${ITERAGPU_GOLDEN_RAW:-0}" != 1 ]; then
  "$PYTHON" "$HERE/mask_outputs.py" --build-dir "$(dirname "$BIN")" --bin-dir "$BIN" --work-dir "$WORK" "$OUT" || exit 2
fi
echo "recorded $n invocations of $IG into $OUT"
