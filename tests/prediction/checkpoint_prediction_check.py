#!/usr/bin/env python3
"""`iteragpu predict --model` against checkpoint measurements recorded on the H200.

    checkpoint_prediction_check.py --cli BUILD/bin/iteragpu [--data tests/data/checkpoint-measurements]
                                   [--measurement examples/results/llama-8b-bfloat16-h200.json ...]

The predictor reads only config.json and the safetensors headers, so each checkpoint is
written here with the recorded shape as headers over sparse data (no tensor data is
read). Two kinds of record:
  * whole measurement files (SHAPE-DTYPE[-BxC][-flash]-h200.json, -flash for a run with
    PyTorch's flash attention ahead of cuDNN's, or -h100.json for three cells measured on an
    H100 80GB: the same compute capability 9.0, PyTorch and cuDNN; written by `measure --model`
    in the checkpoint conformance step, whose counters equalled transformers'): every counter
    of every row of the prediction must equal the measurement's;
  * h200-peak-reserved.json: the peak reserved of each cell of the H200 checkpoint
    conformance run (README, Validation), each equal to the prediction's, or equal to the
    difference the file records for a known exception (so a change either way is caught).
The Llama-3-8B-like H200 run is shipped with the examples (examples/results/, the notebook
opens it): it is checked the same way, as a --measurement file (the default).
Exit status 0 when everything matches; 1 otherwise, each difference shown.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# config.json fields of each recorded shape: those the conformance run wrote its checkpoints with.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from decoder_conformance import SHAPES  # noqa: E402  (standard library only at import)

# The tensor list and the header-only writer are those shipped with the examples.
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "models"))
import write_checkpoint as checkpoint_writer  # noqa: E402  (standard library only)


def write_checkpoint(folder, shape, dtype):
    """config.json and one safetensors file whose data is a hole (the predictor reads headers only)."""
    checkpoint_writer.write_checkpoint(folder, dict(SHAPES[shape], torch_dtype=dtype, dtype=dtype))


def predict(cli, folder, cell):
    command = [cli, "predict", "--model", folder, "--compute-capability", "9.0", "--format", "json",
               "--batch", str(cell["batch"]), "--context", str(cell["context"]),
               "--new-tokens", str(cell["new_tokens"]), "--warmup", str(cell["warmup"]),
               "--repeats", str(cell["repeats"]), "--dtype", cell["dtype"]]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit("%s exited %d: %s" % (" ".join(command), done.returncode, done.stderr.strip()))
    return json.loads(done.stdout)


COUNTERS = (("allocated_bytes", "baseline"), ("allocated_bytes", "end"), ("reserved_bytes", "baseline"),
            ("reserved_bytes", "end"), ("peak_allocated_bytes", None), ("peak_reserved_bytes", None))


def counters(row):
    return [row[a] if b is None else row[a][b] for a, b in COUNTERS]


def compare_measurement(options, work, path, failures):
    """Every counter of every row of one recorded `measure --model` file against the prediction
    for the same checkpoint shape (named by the file) and options. Returns the counters compared."""
    measured = json.load(open(path))
    name = os.path.basename(path)
    shape = max((s for s in SHAPES if name.startswith(s + "-")), key=len)
    c = measured["configuration"]
    cell = dict(batch=c["batch"], context=c["context"], new_tokens=c["new_tokens"], warmup=c["warmup"],
                repeats=c["repeats"], dtype=c["dtype"])
    label = "%s %s %d x %d" % (shape, c["dtype"], c["batch"], c["context"])
    folder = os.path.join(work, "%s-%s" % (shape, c["dtype"]))
    if not os.path.exists(folder):
        write_checkpoint(folder, shape, c["dtype"])
    shipped = os.path.join(HERE, "..", "..", "examples", "models", shape, "config.json")
    if os.path.exists(shipped) and json.load(open(shipped)) != dict(SHAPES[shape], torch_dtype=c["dtype"], dtype=c["dtype"]):
        failures.append("%s: examples/models/%s/config.json is not the config this measurement's checkpoint was "
                        "written with (decoder_conformance.py SHAPES)" % (label, shape))
    predicted = predict(options.cli, folder, cell)
    if len(predicted["phases"]) != len(measured["phases"]):
        failures.append("%s: %d predicted rows, %d measured" % (label, len(predicted["phases"]), len(measured["phases"])))
    checked = 0
    for index, (p, m) in enumerate(zip(predicted["phases"], measured["phases"])):
        row = "%s %s %s" % (m.get("sequence", ""), m["phase"], m.get("step", ""))
        if (p["phase"], p.get("sequence"), p.get("step")) != (m["phase"], m.get("sequence"), m.get("step")):
            failures.append("%s row %d: predicted %s, measured %s" % (label, index, p["phase"], row))
        for (a, b), pv, mv in zip(COUNTERS, counters(p), counters(m)):
            checked += 1
            if pv != mv:
                failures.append("%s row %d (%s) %s%s: predicted %d, measured %d (%+d)"
                                % (label, index, row, a, "." + b if b else "", pv, mv, pv - mv))
    print("%-46s %d rows, %d counters compared with the H200 measurement" % (label, len(measured["phases"]), checked))
    return checked


def main():
    arguments = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    arguments.add_argument("--cli", required=True)
    arguments.add_argument("--data", default=os.path.join(HERE, "..", "data", "checkpoint-measurements"))
    arguments.add_argument("--measurement", action="append",
                           help="a whole measurement file outside --data, checked the same way (repeatable; "
                                "default: examples/results/llama-8b-bfloat16-h200.json)")
    options = arguments.parse_args()
    if options.measurement is None:
        options.measurement = [os.path.join(HERE, "..", "..", "examples", "results", "llama-8b-bfloat16-h200.json")]
    failures, checked = [], 0
    work = tempfile.mkdtemp(prefix="iteragpu-prediction.")
    try:
        # Every counter of every row of each whole measurement file.
        paths = [os.path.join(options.data, name) for name in sorted(os.listdir(options.data))
                 if name.endswith(("-h200.json", "-h100.json")) and name != "h200-peak-reserved.json"]
        for path in paths + options.measurement:
            checked += compare_measurement(options, work, path, failures)
        # The peak reserved of every recorded cell.
        record = json.load(open(os.path.join(options.data, "h200-peak-reserved.json")))
        for cell in record["cells"]:
            folder = os.path.join(work, "%s-%s" % (cell["shape"], cell["dtype"]))
            if not os.path.exists(folder):
                write_checkpoint(folder, cell["shape"], cell["dtype"])
            peak = max(row["peak_reserved_bytes"] for row in predicted_rows(options.cli, folder, cell))
            difference = peak - cell["peak_reserved_bytes"]
            expected = cell.get("known_difference", 0)
            label = "%s %s %d x %d, %d new tokens" % (cell["shape"], cell["dtype"], cell["batch"], cell["context"],
                                                      cell["new_tokens"])
            print("%-46s predicted %15d measured %15d difference %+d%s" % (label, peak, cell["peak_reserved_bytes"],
                                                                         difference, " (known)" if expected else ""))
            if difference != expected:
                failures.append("%s: peak reserved predicted %d, measured %d (%+d; expected %+d)"
                                % (label, peak, cell["peak_reserved_bytes"], difference, expected))
    finally:
        subprocess.run(["rm", "-rf", work])
    for failure in failures[:40]:
        print(failure)
    print("checkpoint_prediction_check: %d counters of whole measurements compared, %d differences" % (checked, len(failures)))
    return 1 if failures else 0


def predicted_rows(cli, folder, cell):
    return predict(cli, folder, dict(cell, warmup=cell.get("warmup", 1), repeats=cell.get("repeats", 2)))["phases"]


if __name__ == "__main__":
    sys.exit(main())
