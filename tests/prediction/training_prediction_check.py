#!/usr/bin/env python3
"""`iteragpu predict --model --train` against the fine-tuning cells measured on the H100.

    training_prediction_check.py --cli BUILD/bin/iteragpu
                                 [--record tests/conformance/recorded/training-conformance-cli-h100-2026-12-06.json]
                                 [--write-peaks]

The record holds, per cell (SHAPE:DTYPE:full|lora:BATCH:CONTEXT[:gc], 3 steps, LoRA at its
defaults), the rows `iteragpu measure --model DIR --train` measured (key "iteragpu"); the
gradient-checkpointing (:gc) cells of the Python loop's allocator traces
(training-traces-h100-2026-12-06.tar.gz, training-traces-qwen2-gc-h100-2026-12-06.tar.gz) are
checked against the loop's own rows. The predictor reads
only config.json and the safetensors headers, so each checkpoint is written here with the
recorded shape as headers over sparse data, as checkpoint_prediction_check.py writes them.
Every counter of every row of the prediction must equal the measurement's, except the known
differences listed in KNOWN below, which must stay exactly as recorded there (so a change
either way is caught), no counter may be below the measurement, and none may differ by more than
its row's caveats allow (a counter they mark, by at most the row's recorded_bound_bytes). The predicted peak reserved of each cell (the highest over its rows) is
kept in tests/data/training-predicted-peaks.json for docs/training.md's table
(tests/conformance/training_side_by_side.py); the file must equal the prediction (--write-peaks
writes it). Exit status 0 when everything matches; 1 otherwise, each difference shown.
"""

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from checkpoint_prediction_check import write_checkpoint  # noqa: E402  (standard library only at import)
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
import training_conformance  # noqa: E402  (standard library only at import)

RECORDED = training_conformance.RECORDED
# The measurements (a cell measured again after a change of the module is checked against the
# latest).
RECORDS = training_conformance.COMMAND_RECORDS
PEAKS = os.path.join(HERE, "..", "data", "training-predicted-peaks.json")
# The Python loop's allocator traces: the two-layer cells, then Qwen2 LoRA with gradient
# checkpointing (its projections' biases: the engine thread's cuBLASLt workspace), then Qwen3
# full fine-tuning at 6 x 1,024 with it (the position ids expanded to the batch).
TRACES = [os.path.join(RECORDED, "training-traces-h100-2026-12-06.tar.gz"),
          os.path.join(RECORDED, "training-traces-qwen2-gc-h100-2026-12-06.tar.gz"),
          os.path.join(RECORDED, "training-traces-qwen3-6x1024-gc-h100-2026-12-07.tar.gz")]

COUNTERS = (("allocated_bytes", "baseline", "allocated_baseline"), ("allocated_bytes", "end", "allocated_end"),
            ("reserved_bytes", "baseline", "reserved_baseline"), ("reserved_bytes", "end", "reserved_end"),
            ("peak_allocated_bytes", None, "peak_allocated"), ("peak_reserved_bytes", None, "peak_reserved"))

# (cell, row, counter): predicted - measured, for the differences the prediction is known to
# have (docs/commands/predict.md, "Fine-tuning"): 2 or 8 MiB more reserved, or a large block
# handed out unsplit. Where the recorded traces (tests/conformance/recorded/
# training-traces-*.tar.gz) show every request and free of such a cell, the model makes the same
# ones; the counters differ where a request reuses another cached block than on the GPU, whose
# segments CUDA put where the model's two layouts do not. None may be negative: the prediction is,
# counter by counter, the larger of its two layouts, and a counter below the measurement fails
# the check whatever this says.
KNOWN = {
    # Cells without gradient checkpointing: 2 or 8 MiB more reserved, or a block handed out unsplit
    # (0.75 or 1.1 MiB more allocated), where the larger of the two layouts is the other one's.
    ("qwen2-1.5b:bfloat16:lora:2:1024", "optimizer-1", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "optimizer-1", "peak_reserved"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "forward-2", "reserved_baseline"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "forward-2", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "forward-2", "peak_reserved"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "backward-2", "reserved_baseline"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "backward-2", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "backward-2", "peak_reserved"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "optimizer-2", "reserved_baseline"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "optimizer-2", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "optimizer-2", "peak_reserved"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "forward-3", "reserved_baseline"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "forward-3", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "forward-3", "peak_reserved"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "backward-3", "reserved_baseline"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "backward-3", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "backward-3", "peak_reserved"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "optimizer-3", "reserved_baseline"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "optimizer-3", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:2:1024", "optimizer-3", "peak_reserved"): +2097152,
    ("qwen3-0.6b:bfloat16:full:2:1024", "forward-1", "reserved_end"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "forward-1", "peak_reserved"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-1", "reserved_baseline"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-1", "reserved_end"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-1", "peak_reserved"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-1", "reserved_baseline"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-1", "reserved_end"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-1", "peak_reserved"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "forward-2", "reserved_baseline"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "forward-2", "reserved_end"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "forward-2", "peak_reserved"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-2", "allocated_end"): +786432,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-2", "reserved_baseline"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-2", "reserved_end"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-2", "peak_reserved"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-2", "allocated_baseline"): +786432,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-2", "reserved_baseline"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-2", "reserved_end"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-2", "peak_allocated"): +786432,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-2", "peak_reserved"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "forward-3", "reserved_baseline"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "forward-3", "reserved_end"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "forward-3", "peak_reserved"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-3", "allocated_end"): +786432,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-3", "reserved_baseline"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-3", "reserved_end"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "backward-3", "peak_reserved"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-3", "allocated_baseline"): +786432,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-3", "reserved_baseline"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-3", "reserved_end"): +8388608,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-3", "peak_allocated"): +786432,
    ("qwen3-0.6b:bfloat16:full:2:1024", "optimizer-3", "peak_reserved"): +8388608,
    ("qwen2-1.5b:bfloat16:lora:1:256", "forward-1", "allocated_end"): +1179648,
    ("qwen2-1.5b:bfloat16:lora:1:256", "forward-1", "peak_allocated"): +1179648,
    ("qwen2-1.5b:bfloat16:lora:1:256", "backward-1", "allocated_baseline"): +1179648,
    ("qwen2-1.5b:bfloat16:lora:1:256", "backward-1", "peak_allocated"): +1179648,
    ("qwen2-1.5b:bfloat16:lora:1:256", "optimizer-2", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "optimizer-2", "peak_reserved"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "forward-3", "reserved_baseline"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "forward-3", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "forward-3", "peak_reserved"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "backward-3", "reserved_baseline"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "backward-3", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "backward-3", "peak_reserved"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "optimizer-3", "reserved_baseline"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "optimizer-3", "reserved_end"): +2097152,
    ("qwen2-1.5b:bfloat16:lora:1:256", "optimizer-3", "peak_reserved"): +2097152,
    # Gradient checkpointing (measured by the module on the H100, fe5b426 and d17b743): 2 or 4 MiB
    # more reserved from the first backward or the second on; the two-layer LoRA cell as the loop's
    # own trace below (fed the segment addresses the trace records, the model equals every counter).
    ("llama-2-layers:bfloat16:lora:1:128:gc", "backward-1", "reserved_end"): +2097152,
    ("llama-2-layers:bfloat16:lora:1:128:gc", "backward-1", "peak_reserved"): +2097152,
    ("llama-2-layers:bfloat16:lora:1:128:gc", "optimizer-1", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "backward-1", "reserved_end"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "backward-1", "peak_reserved"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "optimizer-1", "reserved_baseline"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "optimizer-1", "reserved_end"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "optimizer-1", "peak_reserved"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "forward-2", "reserved_baseline"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "forward-2", "reserved_end"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "forward-2", "peak_reserved"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "backward-2", "reserved_baseline"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "backward-2", "reserved_end"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "backward-2", "peak_reserved"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "optimizer-2", "reserved_baseline"): +4194304,
    ("llama-8b:bfloat16:lora:4:2048:gc", "optimizer-2", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "optimizer-2", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "forward-3", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "forward-3", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "forward-3", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "backward-3", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "backward-3", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "backward-3", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "optimizer-3", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "optimizer-3", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:2048:gc", "optimizer-3", "peak_reserved"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "backward-2", "reserved_end"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "backward-2", "peak_reserved"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "optimizer-2", "reserved_baseline"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "optimizer-2", "reserved_end"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "optimizer-2", "peak_reserved"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "forward-3", "reserved_baseline"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "forward-3", "reserved_end"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "forward-3", "peak_reserved"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "backward-3", "reserved_baseline"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "backward-3", "reserved_end"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "backward-3", "peak_reserved"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "optimizer-3", "reserved_baseline"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "optimizer-3", "reserved_end"): +2097152,
    ("llama-1b:bfloat16:full:1:512:gc", "optimizer-3", "peak_reserved"): +2097152,
    # Measured again at 4 x 4,096 (2026-12-07): 2 MiB more reserved from the first backward on.
    ("llama-8b:bfloat16:lora:4:4096:gc", "backward-1", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "backward-1", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "optimizer-1", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "optimizer-1", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "optimizer-1", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "forward-2", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "forward-2", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "forward-2", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "backward-2", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "backward-2", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "backward-2", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "optimizer-2", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "optimizer-2", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "optimizer-2", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "forward-3", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "forward-3", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "forward-3", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "backward-3", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "backward-3", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "backward-3", "peak_reserved"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "optimizer-3", "reserved_baseline"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "optimizer-3", "reserved_end"): +2097152,
    ("llama-8b:bfloat16:lora:4:4096:gc", "optimizer-3", "peak_reserved"): +2097152,
    # Qwen3-0.6B-like full fine-tuning at 6 and 7 x 1,024 (2026-12-07, the points of a sweep): the
    # loop's trace of 6 x 1,024 makes the same requests in the same order as the model; CUDA put
    # the segments as the downward layout does, the upward one takes one MLP activation's segment
    # more (36 and 42 MiB), and the larger is kept.
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-1", "reserved_end"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-1", "peak_reserved"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-1", "reserved_baseline"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-1", "reserved_end"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-1", "peak_reserved"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-1", "reserved_baseline"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-1", "reserved_end"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-1", "peak_reserved"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-2", "reserved_baseline"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-2", "reserved_end"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-2", "peak_reserved"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-2", "reserved_baseline"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-2", "reserved_end"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-2", "peak_reserved"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-2", "reserved_baseline"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-2", "reserved_end"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-2", "peak_reserved"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-3", "reserved_baseline"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-3", "reserved_end"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-3", "peak_reserved"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-3", "reserved_baseline"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-3", "reserved_end"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-3", "peak_reserved"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-3", "reserved_baseline"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-3", "reserved_end"): +37748736,
    ("qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-3", "peak_reserved"): +37748736,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "forward-1", "reserved_end"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "forward-1", "peak_reserved"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "backward-1", "reserved_baseline"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "backward-1", "reserved_end"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "backward-1", "peak_reserved"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "optimizer-1", "reserved_baseline"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "optimizer-1", "reserved_end"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "optimizer-1", "peak_reserved"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "forward-2", "reserved_baseline"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "forward-2", "reserved_end"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "forward-2", "peak_reserved"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "backward-2", "reserved_baseline"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "backward-2", "reserved_end"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "backward-2", "peak_reserved"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "optimizer-2", "reserved_baseline"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "optimizer-2", "reserved_end"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "optimizer-2", "peak_reserved"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "forward-3", "reserved_baseline"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "forward-3", "reserved_end"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "forward-3", "peak_reserved"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "backward-3", "reserved_baseline"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "backward-3", "reserved_end"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "backward-3", "peak_reserved"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "optimizer-3", "reserved_baseline"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "optimizer-3", "reserved_end"): +44040192,
    ("qwen3-0.6b:bfloat16:full:7:1024:gc", "optimizer-3", "peak_reserved"): +44040192,
    # Llama-3.2-1B-like full fine-tuning at 8 x 1,024 (2026-12-07): after the first backward a
    # block handed out unsplit, 1 MiB more allocated until the optimizer's step.
    ("llama-1b:bfloat16:full:8:1024:gc", "backward-1", "allocated_end"): +1048576,
    ("llama-1b:bfloat16:full:8:1024:gc", "optimizer-1", "allocated_baseline"): +1048576,
    # The Python loop's own trace of that cell: the same requests and frees in the same order.
    ("loop llama-2-layers:bfloat16:lora:1:128:gc", "backward-1", "reserved_end"): +2097152,
    ("loop llama-2-layers:bfloat16:lora:1:128:gc", "backward-1", "peak_reserved"): +2097152,
    ("loop llama-2-layers:bfloat16:lora:1:128:gc", "optimizer-1", "reserved_baseline"): +2097152,
    # The loop's own trace of Qwen3-0.6B-like 6 x 1,024 (two steps): the same.
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-1", "reserved_end"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-1", "peak_reserved"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-1", "reserved_baseline"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-1", "reserved_end"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-1", "peak_reserved"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-1", "reserved_baseline"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-1", "reserved_end"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-1", "peak_reserved"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-2", "reserved_baseline"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-2", "reserved_end"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "forward-2", "peak_reserved"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-2", "reserved_baseline"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-2", "reserved_end"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "backward-2", "peak_reserved"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-2", "reserved_baseline"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-2", "reserved_end"): +37748736,
    ("loop qwen3-0.6b:bfloat16:full:6:1024:gc", "optimizer-2", "peak_reserved"): +37748736,
}


def predict(cli, folder, method, batch, context, dtype, steps, gc=False):
    command = [cli, "predict", "--model", folder, "--train", method, "--steps", str(steps),
               "--compute-capability", "9.0", "--format", "json", "--batch", str(batch), "--context", str(context),
               "--dtype", dtype] + (["--gradient-checkpointing"] if gc else [])
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit("%s exited %d: %s" % (" ".join(command), done.returncode, done.stderr.strip()))
    return json.loads(done.stdout)


def row_name(row):
    return row["phase"] + ("" if row.get("step") is None else "-%d" % row["step"])


def main():
    arguments = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    arguments.add_argument("--cli", required=True)
    arguments.add_argument("--record", action="append", help="a measurement record (default: %s)"
                           % ", ".join(os.path.basename(r) for r in RECORDS))
    arguments.add_argument("--write-peaks", action="store_true", help="write %s" % os.path.relpath(PEAKS, HERE))
    options = arguments.parse_args()
    peaks = {}
    measured_cells = {}  # name -> (rows, steps), the latest record's
    for path in options.record or RECORDS:
        record = json.load(open(path))
        for cell in record["cells"]:
            measured_cells[cell["cell"]] = (cell["iteragpu"]["rows"], record["steps"])
    failures, checked, exact_cells = [], 0, 0
    seen_known = set()
    work = tempfile.mkdtemp(prefix="iteragpu-training-prediction.")
    # The recorded measurements, then the Python loop's rows of the traced gradient-checkpointing
    # cells (the loop is the peer the measurements equal).
    cells = [(name, name, rows, steps) for name, (rows, steps) in measured_cells.items()]
    for traces in TRACES:
        with tarfile.open(traces) as archive:
            for member in archive.getmembers():
                if member.name.endswith("_gc.json"):
                    traced = json.load(archive.extractfile(member))
                    cells.append(("loop " + traced["cell"], traced["cell"], traced["result"]["rows"], traced["steps"]))
    try:
        for label, name, measured, steps in cells:
            shape, dtype, method, batch, context = name.split(":")[:5]
            gc = name.endswith(":gc")  # gradient checkpointing
            folder = os.path.join(work, "%s-%s" % (shape, dtype))
            if not os.path.exists(folder):
                write_checkpoint(folder, shape, dtype)
            predicted = predict(options.cli, folder, method, int(batch), int(context), dtype, steps, gc)["phases"]
            if label == name:
                peaks[name] = max(p["peak_reserved_bytes"] for p in predicted)
            if [row_name(p) for p in predicted] != [row_name(m) for m in measured]:
                failures.append("%s: predicted rows %s, measured %s" % (label, [row_name(p) for p in predicted],
                                                                        [row_name(m) for m in measured]))
                continue
            differences = 0
            for p, m in zip(predicted, measured):
                for group, member, counter in COUNTERS:
                    checked += 1
                    value = p[group] if member is None else p[group][member]
                    difference = value - m[counter]
                    key = (label, row_name(m), counter)
                    expected = KNOWN.get(key, 0)
                    if key in KNOWN:
                        seen_known.add(key)
                    if difference:
                        differences += 1
                    json_name = group if member is None else group + "." + member
                    if difference < 0:
                        failures.append("%s %s %s: predicted %d, below the measured %d"
                                        % (label, row_name(m), counter, value, m[counter]))
                    elif difference and (json_name not in p["uncertain_counters"]
                                         or difference > p["recorded_bound_bytes"]):
                        # The caveats reaching a row say how far its counters may be off.
                        failures.append("%s %s %s: %+d, beyond what the row's caveats allow (%s, at most %d)"
                                        % (label, row_name(m), counter, difference,
                                           "marked" if json_name in p["uncertain_counters"] else "not marked",
                                           p["recorded_bound_bytes"]))
                    elif difference != expected:
                        failures.append("%s %s %s: predicted %d, measured %d (%+d%s)"
                                        % (label, row_name(m), counter, value, m[counter], difference,
                                           "; known %+d" % expected if expected else ""))
            exact_cells += differences == 0
            print("%-40s %2d rows, %3d counters, %d differ from the measurement"
                  % (label, len(measured), 6 * len(measured), differences))
    finally:
        subprocess.run(["rm", "-rf", work])
    document = {"about": "iteragpu predict --model --train ... --compute-capability 9.0: the highest predicted "
                         "peak_reserved_bytes of each cell of %s (tests/prediction/training_prediction_check.py "
                         "--write-peaks)" % ", ".join(os.path.basename(r) for r in options.record or RECORDS),
                "cells": peaks}
    if options.write_peaks:
        with open(PEAKS, "w") as handle:
            json.dump(document, handle, indent=1)
            handle.write("\n")
    elif json.load(open(PEAKS)) != document:
        failures.append("%s is not the prediction's peaks: regenerate with --write-peaks" % os.path.relpath(PEAKS))
    for key in sorted(set(KNOWN) - seen_known):
        failures.append("%s %s %s: a known difference of a row the record does not have" % key)
    for failure in failures:
        print(failure)
    print("training_prediction_check: %d cells, %d equal in every counter; %d counters compared, %d unexpected "
          "differences" % (len(cells), exact_cells, checked, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
