"""Details of the Jupyter views a user reported from a browser: a byte amount written once
with its MiB, a count that gets no MiB, the timing's own view, the quote's exact fraction in
its own row, the environment's reason for no GPU, and plots that are returned, not also drawn
by pyplot."""

import decimal
import os

import iteragpu
from conftest import SOURCE_DIR

RESULTS = os.path.join(SOURCE_DIR, "examples", "results")
FLOAT32 = os.path.join(RESULTS, "mesures-float32.json")
BFLOAT16 = os.path.join(RESULTS, "mesures-bfloat16.json")


def test_a_byte_amount_in_a_sentence_is_written_once():
    page = iteragpu.read_measurement(FLOAT32)._repr_html_()
    assert "8,393,728 parameters (33,574,912 bytes <small>(32.02 MiB)</small>)" in page
    assert "MiB)</small> bytes" not in page


def test_bytes_per_value_is_a_count_without_mib():
    page = iteragpu.compare(FLOAT32, BFLOAT16)._repr_html_()
    row = page[page.index("bytes per value"):]
    row = row[:row.index("</tr>")]
    assert "<td>4</td><td>2</td>" in row and "MiB" not in row
    assert "16,787,456 <small>(16.01 MiB)</small>" in page  # parameter bytes: an amount, with its MiB


def test_the_timing_has_its_own_view_and_a_readable_repr():
    timing = iteragpu.read_measurement(FLOAT32).timing
    page = timing._repr_html_()
    assert "Timing of the warm repeats" in page and "Warm repeats: 5" in page
    assert f"{timing.host_seconds.median * 1e6:,.1f}" in page and "no timing warnings" in page
    assert repr(timing) == ("TimingSummary(warm_repeats=5, host median 208.8 µs, CV 2.4 %, "
                            "GPU event median 203.0 µs, CV 2.3 %, warnings: none)")


def test_the_quote_gives_the_exact_fraction_its_own_row():
    quote = iteragpu.quote("b200", 7, lots=2, accepted_results=3)
    page = quote._repr_html_()
    unit = quote.unit_cost
    assert f"<tr><td>cost per accepted result</td><td><strong>${unit.display_usd}</strong></td></tr>" in page
    assert f"<tr><td>exact cost per accepted result</td><td>{unit.numerator_cents:,}/{unit.denominator:,} cents" \
        in page
    assert "<small>(exact:" not in page
    assert unit.display_rounding in page  # a note under the table


def test_the_environment_says_why_there_is_no_gpu(run_python, fake_backend):
    completed = run_python(
        "import iteragpu\n"
        f"report = iteragpu.environment(backend_path={fake_backend!r})\n"
        "print(report.stack.no_gpu_reason)\nprint(report._repr_html_())\nprint(report.to_text())",
        extra={"ITERAGPU_FAKE_BACKEND": "gpus=0"})
    assert completed.returncode == 0, completed.stderr
    reason, page = completed.stdout.split("\n", 2)[:2]
    assert "built without CUDA or ROCm" in reason
    assert "GPU runtime available</td><td><strong>no</strong>: LibTorch" in page
    assert "built without CUDA or ROCm" in page
    assert "none visible (no GPU available): " + reason in completed.stdout  # the CLI's text, the same reason


def test_plots_are_returned_without_being_left_open(fake_backend):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    figure = iteragpu.read_measurement(FLOAT32).plot()
    assert plt.get_fignums() == before
    figure.savefig(os.devnull, format="png")  # a closed figure still draws
    sweep = iteragpu.sweep("batch", width=1024, backend_path=fake_backend, progress=False)
    assert sweep.plot().axes and plt.get_fignums() == before


CHECKPOINT_RUN = os.path.join(RESULTS, "llama-8b-bfloat16-h200.json")


def test_a_checkpoint_measurement_shows_its_summary_first_and_folds_its_steps_by_sequence():
    run = iteragpu.Measurement.read(CHECKPOINT_RUN)
    page = run._repr_html_()
    summary = page[:page.index("<details")]
    peak = max(row.end.peak_reserved_bytes for row in run.phases)
    assert peak == 21_086_863_360
    for figure in ("<strong>19.64 GiB <small>(21,086,863,360 bytes)</small></strong> (in cold prefill)",
                   "18.80 GiB <small>(20,189,979,648 bytes)</small>",  # peak allocated
                   "20.32 GiB <small>(21,815,427,072 bytes)</small>",  # the process footprint (cudaMemGetInfo)
                   "<strong>471.62 ms</strong>",  # time to first token
                   "<strong>decode: 228.8 tokens/s</strong>",
                   "batch 4 &times; context 4,096 token ids, 16 new tokens a sequence, bfloat16",
                   "LlamaForCausalLM (32 layers",
                   "1 cold, 1 warm-up, 2 warm"):
        assert figure in summary, figure
    # The timing worded for the workload: warm decode steps of warm sequences, in ms.
    assert "32 warm decode steps (2 warm sequences of 16 steps" in summary
    assert f"{run.timing.host_seconds.median * 1000:,.3f}" in summary
    assert "Warm repeats" not in page and "µs" not in page
    # A <details> per group of rows, in the order they ran, each with its own table.
    names = [part.split("</b>")[0] for part in page.split("<details><summary><b>")[1:]]
    assert names == ["loading", "cold sequence", "warm-up sequence 1", "warm sequence 1", "warm sequence 2"]
    assert page.count("<details") == page.count("</details>") == 5
    # The KV growth a decode step, in MiB, in the rows of a sequence: +0.50 MiB.
    warm = page[page.index("<b>warm sequence 2</b>"):]
    assert "<td><span title='warm #2 decode 16'>decode 16</span></td>" in warm and "<td>+0.50</td>" in warm
    assert sum(1 for row in run.phases if row.phase == "decode") == 4 * 16


def test_the_fit_view_gives_gib_beside_bytes_verdict_colours_and_lot_sizes(tmp_path):
    from test_measure import write_tiny_llama

    write_tiny_llama(tmp_path / "model")
    report = iteragpu.packages(model=str(tmp_path / "model"), batch=2, context=8, days=7)
    page = report._repr_html_()
    h200 = next(fit for fit in report.packages if fit.gpu == "h200")
    assert h200.memory_bytes == 150_109_880_320
    nowrap = "<span style='white-space:nowrap'>{} GiB</span><br><small style='white-space:nowrap'>({} bytes)</small>"
    assert nowrap.format("139.80", "150,109,880,320") in page
    assert nowrap.format(f"{h200.required_bytes / 2**30:.2f}", f"{h200.required_bytes:,}") in page
    verdicts = {fit.verdict for fit in report.packages}
    assert {"fits", "uncertain", "not assessed"} <= verdicts
    assert page.count("background:#dafbe1") >= 2  # fits: green (the tally and each row)
    assert "background:#fff8c5" in page  # uncertain: amber
    lots = {entry["gpu"]: entry["price"]["gpus_per_lot"] for entry in report.to_dict()["packages"] if entry["price"]}
    several = [gpu for gpu, size in lots.items() if size > 1]
    assert several, lots
    assert f"a lot of {lots[several[0]]} GPUs" in page
    assert "illustrative" in page
    # A lower bound's GiB is rounded down, never shown higher than its bytes.
    bound = next(fit for fit in report.packages if fit.required_unchecked == "at least" and fit.headroom_bytes > 0)
    floor_gib = f"{(bound.required_bytes * 100 // 2**30) / 100:.2f}"
    assert nowrap.format("≥" + floor_gib, "≥" + f"{bound.required_bytes:,}") in page
    from iteragpu._display.cells import gib
    assert (gib(21_781_872_640), gib(21_781_872_640, decimal.ROUND_FLOOR)) == ("20.29", "20.28")  # 20.2859 GiB
    assert (gib(1_782_579_200), gib(1_782_579_200, decimal.ROUND_CEILING)) == ("1.66", "1.67")  # 1.66015625 GiB
    # Its headroom (memory less the lower bound) is an upper bound: "≤", rounded up.
    headroom = bound.headroom_bytes
    assert headroom == bound.memory_bytes - bound.required_bytes > 0
    ceiling_gib = f"{-(-headroom * 100 // 2**30) / 100:.2f}"
    assert nowrap.format("≤" + ceiling_gib, "≤" + f"{headroom:,}") in page


def test_the_results_report_html_has_the_cost_per_million_generated_tokens(tmp_path, cli):
    table = tmp_path / "resultats.csv"
    iteragpu.results_add(table, measurement=CHECKPOINT_RUN, gpu="h200", days=7, lots=1,
                         work_unit="generated sequence", attempted=1000, accepted=900, metric="exact match",
                         threshold=">= 0.8", observed="0.84", date="2026-12-01")
    page = iteragpu.results_report(table)._repr_html_()
    text = cli("results", "report", "--table", str(table)).stdout
    line = next(line for line in text.splitlines() if line.startswith("  line 2: $") and "tokens/s" in line)
    dollars = line.split()[2]  # "$4.3712"
    assert f"<strong>{dollars}</strong>" in page and "per million generated tokens" in page
    exact = line[line.index("(exactly ") + 9:line.index(")")]
    assert exact in page
    assert "228.80291828970158 tokens/s measured on NVIDIA H200" in page and "168 GPU-hours" in page
    # And the text's other figures: the package price, the cost per accepted result.
    assert "$604.88" in text and "($604.88)" in page
    assert "$0.6721" in text and "<strong>$0.6721</strong>" in page


def test_plotting_without_matplotlib_says_how_to_get_it(run_python):
    completed = run_python(
        "import sys\nsys.modules['matplotlib'] = None  # as on a Python without it\n"
        "sys.modules['matplotlib.pyplot'] = None\nimport iteragpu\n"
        f"m = iteragpu.read_measurement({FLOAT32!r})\n"
        "try:\n    m.plot()\nexcept ModuleNotFoundError as error:\n"
        "    print(type(error).__name__, error.name, '|', error)\nelse:\n    print('plotted')\n")
    assert completed.returncode == 0, completed.stderr
    kind, name, message = completed.stdout.split(" ", 2)
    assert (kind, name) == ("ModuleNotFoundError", "matplotlib"), completed.stdout
    assert "apt-get install python3-matplotlib" in message and "/usr/bin/python3" in message
    assert "pip install matplotlib" in message


def _overlapping_labels(figure):
    """Pairs of tick labels of one axis (and the figure's texts) whose drawn boxes overlap."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    overlaps = []
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            labels = [label for label in axis.get_ticklabels(which="both") if label.get_visible() and label.get_text()]
            boxes = [label.get_window_extent(renderer) for label in labels]
            for i in range(len(boxes)):
                for j in range(i + 1, len(boxes)):
                    if boxes[i].overlaps(boxes[j]):
                        overlaps.append((labels[i].get_text(), labels[j].get_text()))
    return overlaps


def test_the_checkpoint_plot_labels_its_sequences_without_overlap():
    import matplotlib

    matplotlib.use("Agg")
    run = iteragpu.Measurement.read(CHECKPOINT_RUN)
    figure = run.plot()
    memory, growth, time = figure.axes[:3]
    figure.canvas.draw()
    # The sequences named once each on the shared x axis, not a label per row.
    assert [label.get_text() for label in time.get_xticklabels()] == [
        "cold sequence", "warm-up sequence 1", "warm sequence 1", "warm sequence 2"]
    assert memory.get_ylabel() == "GiB" and growth.get_ylabel() == "MiB" and time.get_yscale() == "log"
    assert "+0.50 MiB a decode step" in growth.get_title()
    assert any("peak reserved 19.64 GiB" in text.get_text() for text in memory.texts)
    assert not _overlapping_labels(figure)
    # The test can fail: labels a row each (as the old plot had) overlap.
    time.set_xticks(range(70))
    time.set_xticklabels([f"warm #2 decode {i}" for i in range(70)])
    assert _overlapping_labels(figure)
