"""tests/conformance/training_side_by_side.py: the rules of thumb beside the recorded training
runs (issue 35). The tables in docs/training.md must be the script's output on the recorded
files, byte for byte, so the page stays true; the formulas are checked on numbers worked out by
hand. Standard library and the recorded JSON only: no GPU, no built module."""

import copy
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

SCRIPT = os.path.join(SOURCE_DIR, "tests", "conformance", "training_side_by_side.py")
_spec = importlib.util.spec_from_file_location("training_side_by_side", SCRIPT)
side_by_side = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(side_by_side)

DOC = os.path.join(SOURCE_DIR, "docs", "training.md")
REFERENCE = side_by_side.DEFAULT_FILES[0]


def block_between(text, name):
    begin, end = f"<!-- {name}: begin -->", f"<!-- {name}: end -->"
    assert text.count(begin) == 1 and text.count(end) == 1, f"docs/training.md needs one {begin} and one {end}"
    return text[text.index(begin) + len(begin):text.index(end)].strip("\n")


# --- The page is the script's output -----------------------------------------------------------

def test_docs_table_is_the_scripts_output():
    with open(DOC, encoding="utf-8") as page:
        text = page.read()
    assert block_between(text, "side-by-side") == side_by_side.side_by_side_table(), \
        "regenerate: /usr/bin/python3 tests/conformance/training_side_by_side.py"
    assert block_between(text, "side-by-side gap") == side_by_side.gap_table(), \
        "regenerate: /usr/bin/python3 tests/conformance/training_side_by_side.py --gap"


def test_command_line_prints_the_same_table():
    printed = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, check=True).stdout
    assert printed == side_by_side.side_by_side_table() + "\n"


def test_one_row_per_cell_preferring_the_h100_reference():
    cells = side_by_side.unique_cells(side_by_side.read_records(side_by_side.DEFAULT_FILES))
    specs = [cell["spec"] for cell in cells]
    assert len(specs) == len(set(specs)) == 21
    by_spec = {cell["spec"]: cell for cell in cells}
    llama = by_spec["llama-1b:bfloat16:full:1:512"]  # the reference (twice), the H200 and the CLI's H100 files
    assert llama["file"] == REFERENCE and llama["tool_runs"] == [("H100", True), ("H200", True)]
    # The CLI's first run (one 2 MiB segment fewer), then its run after rotate_half's order was mended.
    qwen2 = by_spec["qwen2-1.5b:bfloat16:lora:2:1024"]
    assert qwen2["file"] == REFERENCE and qwen2["tool_runs"] == [("H100", False), ("H100", True)]
    qwen3 = by_spec["qwen3-0.6b:bfloat16:full:2:1024"]
    assert qwen3["file"] == REFERENCE and qwen3["tool_runs"] == [("H100", True), ("H200", True)]
    lora = by_spec["llama-2-layers:bfloat16:lora:1:128"]  # only in the conformance files: the H100's first
    assert lora["file_label"] == "conformance, H100"
    # The 8B LoRA step with gradient checkpointing: the reference loop's row, the CLI's run equal.
    assert by_spec["llama-8b:bfloat16:lora:4:2048:gc"]["tool_runs"] == [("H100", True)]
    # The two-layer LoRA step with it: one 2 MiB segment fewer, then equal once the embedding's
    # output required grad as transformers makes it.
    assert by_spec["llama-2-layers:bfloat16:lora:1:128:gc"]["tool_runs"] == [("H100", False), ("H100", True)]
    # The 2026-12-07 cells up to 8 x 4,096, each run once by the command, equal to the loop.
    assert by_spec["qwen2-1.5b:bfloat16:lora:8:4096:gc"]["tool_runs"] == [("H100", True)]
    # Measured again after the packed-sequence check took the batch: both H100 runs equal, one entry.
    assert by_spec["qwen3-0.6b:bfloat16:full:2:1024:gc"]["tool_runs"] == [("H100", True)]
    # iteragpu's prediction: every cell, gradient checkpointing included.
    for cell, row in zip(cells, side_by_side.side_by_side_rows(cells)):
        assert row[9] != "not yet", row


def test_measured_columns_come_from_the_rows():
    cells = side_by_side.unique_cells(side_by_side.read_records([REFERENCE]))
    row = side_by_side.side_by_side_rows(cells)[0]
    # llama-1b full 1 × 512: highest peak_reserved 13,006,536,704 bytes; device_used_bytes 14,458,159,104
    assert row[10] == "**12.11 GiB**" and row[11] == "13.47 GiB"
    # 20 bytes a parameter: 24,716,288,000 bytes = 23.02 GiB, 1.90 × the measured peak reserved
    assert row[6] == "23.02 GiB (1.90×)"


# --- The formulas, on numbers worked out by hand -------------------------------------------------

def test_deepspeed_zero2_model_states():
    assert side_by_side.deepspeed_zero2_model_states_bytes(1_000_000) == 20_000_000
    # 2 × 1,000,000 + int(18 × 1,000,000 / 4); the formula before DeepSpeed's #5099 gave 8,000,000
    assert side_by_side.deepspeed_zero2_model_states_bytes(1_000_000, num_gpus_per_node=4) == 6_500_000
    assert side_by_side.deepspeed_zero2_model_states_bytes(1_000_000, num_gpus_per_node=2, num_nodes=2) == 6_500_000


def test_deepspeed_zero3_model_states():
    assert side_by_side.deepspeed_zero3_model_states_bytes(1_000_000, 100_000) == 18_400_000
    assert side_by_side.deepspeed_zero3_model_states_bytes(1_000_000, 100_000, num_gpus_per_node=8) == 2_650_000


def test_accelerate_training_with_adam():
    float32_bytes = 4 * 1_000_000
    assert side_by_side.accelerate_training_with_adam_bytes(float32_bytes, "float32") == 16_000_000
    # max(model 4 MB, gradients 6 MB, optimizer 8 MB, step 8 MB): 4 × the 2 MB of the 16-bit model
    assert side_by_side.accelerate_training_with_adam_bytes(float32_bytes, "float16") == 8_000_000
    assert side_by_side.accelerate_training_with_adam_bytes(float32_bytes, "bfloat16") == 8_000_000
    assert side_by_side.accelerate_training_with_adam_bytes(float32_bytes, "int8") is None


def test_weights_gradients_adamw_states():
    assert side_by_side.weights_gradients_adamw_bytes(1_000_000, 1_000_000, "bfloat16", "full") == 8_000_000
    assert side_by_side.weights_gradients_adamw_bytes(1_000_000, 1_000_000, "float32", "full") == 16_000_000
    # 990,000 frozen × 2 bytes + 10,000 float32 adapters × (weight, gradient, exp_avg, exp_avg_sq) × 4 bytes
    assert side_by_side.weights_gradients_adamw_bytes(1_000_000, 10_000, "bfloat16", "lora") == 2_140_000


def test_iteragpu_prediction_comes_from_the_checked_peaks():
    with open(side_by_side.PREDICTED_PEAKS) as handle:
        peaks = json.load(handle)["cells"]
    assert side_by_side.iteragpu_prediction_bytes({"spec": "llama-1b:bfloat16:full:4:2048"}) \
        == peaks["llama-1b:bfloat16:full:4:2048"]
    assert side_by_side.iteragpu_prediction_bytes({"spec": "llama-1b:bfloat16:full:1:512:gc"}) \
        == peaks["llama-1b:bfloat16:full:1:512:gc"]
    assert side_by_side.iteragpu_prediction_bytes({"spec": "mistral:bfloat16:full:1:512"}) is None
    assert side_by_side.estimate_text(None, 1 << 30) == "not yet"
    assert side_by_side.estimate_text(1 << 29, 1 << 30) == "0.50 GiB (0.50×)"


def test_parameter_counts_of_the_shapes():
    shapes = side_by_side.SHAPES
    assert side_by_side.base_parameters(shapes["llama-1b"]) == 1_235_814_400  # tied: the embedding once
    assert side_by_side.base_parameters(shapes["llama-8b"]) == 8_030_261_248  # separate lm_head
    # accelerate sizes AutoModel: the 8B without its 128,256 × 4,096 head; a tied model unchanged
    assert side_by_side.accelerate_model_parameters(shapes["llama-8b"]) == 8_030_261_248 - 128_256 * 4_096
    assert side_by_side.accelerate_model_parameters(shapes["llama-1b"]) == 1_235_814_400
    assert side_by_side.base_parameters(shapes["qwen2-1.5b"]) == 1_543_714_304  # q, k, v biases
    assert side_by_side.base_parameters(shapes["qwen3-0.6b"]) == 596_049_920  # q and k norms
    # 28 layers × r16 × (q 1,536+1,536, k and v 1,536+256 each, o 1,536+1,536, three MLP 1,536+8,960)
    assert side_by_side.lora_parameters(shapes["qwen2-1.5b"], 16) == 28 * 16 * 41_216 == 18_464_768


def test_a_record_that_disagrees_with_its_shape_stops_the_script(tmp_path):
    with open(REFERENCE) as handle:
        document = json.load(handle)
    wrong = copy.deepcopy(document)
    wrong["cells"][0]["parameters"] += 1
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(wrong))
    with pytest.raises(SystemExit, match="llama-1b:bfloat16:full:1:512 .* gives 1,235,814,400"):
        side_by_side.side_by_side_table([str(path)])
    wrong = copy.deepcopy(document)
    wrong["lora_rank"] = 8  # the LoRA cells' trainable counts are r16's
    path.write_text(json.dumps(wrong))
    with pytest.raises(SystemExit, match="qwen2-1.5b"):
        side_by_side.side_by_side_table([str(path)])
