"""Details of the Jupyter views a user reported from a browser: a byte amount written once
with its MiB, a count that gets no MiB, the timing's own view, the quote's exact fraction in
its own row, the environment's reason for no GPU, and plots that are returned, not also drawn
by pyplot."""

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
