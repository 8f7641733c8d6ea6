"""examples/mesure-memoire.ipynb: committed without outputs, and it runs from top to bottom
in a real Jupyter kernel (the system Python's ipykernel, with this environment's
PYTHONPATH), failing on any cell error."""

import json
import os

import pytest

from conftest import SOURCE_DIR, optional_module

NOTEBOOK = os.path.join(SOURCE_DIR, "examples", "mesure-memoire.ipynb")


def load_notebook():
    with open(NOTEBOOK, encoding="utf-8") as file:
        return json.load(file)


def test_notebook_is_committed_without_outputs():
    notebook = load_notebook()
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code_cells
    for cell in code_cells:
        assert cell["outputs"] == [], "".join(cell["source"])[:60]
        assert cell["execution_count"] is None
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"


def test_notebook_uses_the_package_and_guards_the_gpu_cells():
    sources = ["".join(cell["source"]) for cell in load_notebook()["cells"] if cell["cell_type"] == "code"]
    text = "\n".join(sources)
    assert "import iteragpu" in text
    assert "parameters=7_000_000_000, bits=16, reserve_gib=4" in text
    assert 'quote("b200", days=7, lots=2)' in text
    for cell in sources:
        if "iteragpu.measure(" in cell:
            assert "except (iteragpu.DeviceUnavailable, iteragpu.BackendUnavailable)" in cell


def outputs_text(cell):
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output["text"])
        for key in ("text/html", "text/plain"):
            if key in output.get("data", {}):
                data = output["data"][key]
                parts.append(data if isinstance(data, str) else "".join(data))
    return "\n".join(parts)


def test_notebook_runs_in_a_jupyter_kernel(tmp_path):
    nbformat = optional_module("nbformat")
    nbclient = optional_module("nbclient")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # The kernel runs in the notebook's folder, as Jupyter runs it: its cells open results/
    # and models/ beside it, and must write nothing there.
    examples = os.path.dirname(NOTEBOOK)
    before = sorted(os.listdir(examples))
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", allow_errors=False,
        resources={"metadata": {"path": examples}},
    )
    # The kernel imports the same iteragpu as these tests, whatever its working directory.
    import iteragpu

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(iteragpu.__file__)))
    environment = dict(os.environ, PYTHONPATH=package_parent, PYDEVD_DISABLE_FILE_VALIDATION="1")
    client.execute(env=environment)  # raises CellExecutionError on any cell error

    cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    everything = "\n".join(outputs_text(cell) for cell in cells)
    assert all(output.get("output_type") != "error" for cell in cells for output in cell.outputs)
    assert "Traceback" not in everything
    assert "13.03851604461669921875" in everything  # the seed estimate, exact
    assert "illustrative" in everything  # the quote says its prices are illustrative
    assert "Predicted memory" in everything and "70,275,072" in everything  # predict, no GPU
    measured = "No measurement on this machine" not in everything
    pngs = sum("image/png" in output.get("data", {}) for cell in cells for output in cell.outputs)
    recorded = next(cell for cell in cells if "recorded = iteragpu.read_measurement(" in cell.source)
    recorded_plot = next(cell for cell in cells if "recorded_figure = shown_run.plot()" in cell.source)
    if not measured:
        # No GPU here: the clear message, twice, and no plot of a measurement of this machine...
        assert everything.count("No measurement on this machine") == 2
        assert "No measurement to plot" in everything
        # ...but the recorded H200 run, said to be one (card and date), with its view and its
        # plot, or how to get matplotlib.
        text = outputs_text(recorded)
        assert "Recorded run, not measured here: results/llama-8b-bfloat16-h200.json, on an NVIDIA H200 " \
               "(2026-12-04)" in text, text
        assert any("text/html" in output.get("data", {}) for output in recorded.outputs)  # its rich view
        assert "LlamaForCausalLM" in text, text
        plot = [output for output in recorded_plot.outputs if "image/png" in output.get("data", {})]
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            assert "matplotlib is not installed" in outputs_text(recorded_plot)
        else:
            assert len(plot) == 1 and pngs == 1
    else:
        # The plot once (the cell's value), not a second time by the inline backend.
        assert pngs == 1
        assert "This machine measured above; the recorded NVIDIA H200 run" in outputs_text(recorded)
    # The checkpoint's prediction at the measured options equals the recorded counters, and the
    # package fit is shown (illustrative prices, the H200's verdict).
    prediction = next(cell for cell in cells if "iteragpu.predict(compute_capability=\"9.0\", model=" in cell.source)
    assert "Prediction against the recorded NVIDIA H200 run: 420 of 420 counters equal." in outputs_text(prediction)
    assert any("text/html" in output.get("data", {}) for output in prediction.outputs)
    assert "LlamaForCausalLM" in outputs_text(prediction)
    fit = next(cell for cell in cells if "iteragpu.packages(model=" in cell.source)
    fit_text = outputs_text(fit)
    assert any("text/html" in output.get("data", {}) for output in fit.outputs)
    assert "LlamaForCausalLM" in fit_text and "h200" in fit_text and "fits" in fit_text, fit_text
    assert "illustrative" in fit_text, fit_text
    # A LoRA step of the same checkpoint predicted (never below the H100's measured peak reserved,
    # 35,573,989,376 bytes; 2 MiB above it in the recorded runs) and which GPU holds it.
    training = next(cell for cell in cells if "training_prediction = iteragpu.predict(" in cell.source)
    training_text = outputs_text(training)
    peak = int(training_text.split("fine-tuning step: ")[1].split(" bytes")[0].replace(",", ""))
    assert 35_573_989_376 <= peak <= 35_573_989_376 + 8 * 2**20, training_text
    assert any("text/html" in output.get("data", {}) for output in training.outputs)
    training_fit = outputs_text(next(cell for cell in cells if "training_fit = iteragpu.packages(" in cell.source))
    assert "LoRA r16" in training_fit and "fits" in training_fit and "illustrative" in training_fit, training_fit
    # At 4 x 4,096 priced by the H100's measured run: 5,922 trained tokens/s at the illustrative
    # 7-day h100-sxm price, only on that GPU model.
    priced = outputs_text(next(cell for cell in cells if "priced_fit = iteragpu.packages(" in cell.source))
    assert ("h100-sxm: fits; 5,922 trained tokens/s measured, $0.1332 per million trained tokens at the "
            "illustrative 7-day price") in priced, priced
    assert sorted(os.listdir(examples)) == before
    assert not os.listdir(tmp_path)


def run_cells(sources, tmp_path):
    """Executes code cells in a fresh Jupyter kernel; returns the executed cells."""
    nbformat = optional_module("nbformat")
    nbclient = optional_module("nbclient")
    import iteragpu

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(iteragpu.__file__)))
    environment = dict(os.environ, PYTHONPATH=package_parent, PYDEVD_DISABLE_FILE_VALIDATION="1")
    nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute(env=environment)
    return notebook.cells


def test_progress_line_and_views_in_a_kernel(tmp_path, fake_backend):
    cells = run_cells(
        [
            "import iteragpu",
            f"m = iteragpu.measure(backend_path={fake_backend!r})",
            f"iteragpu.measure(backend_path={fake_backend!r}, in_process=True)",
            f"try:\n    iteragpu.measure(backend_path={fake_backend!r}, batch=2, hidden=-1)\n"
            "except ValueError as error:\n    print(error)",
            "figure = m.plot()\nfigure",
        ],
        tmp_path,
    )
    # Child process: one display, updated row by row; its final state is the last row.
    child_progress = outputs_text(cells[1])
    assert "iteragpu: cuda:0 6/6 warm_forward #2" in child_progress, child_progress
    in_process = cells[2].outputs
    assert "6/6 warm_forward #2" in outputs_text(cells[2])
    assert any("text/html" in output.get("data", {}) for output in in_process)  # the Measurement
    # A failure before any row: the progress line says so, then the error message.
    failed = outputs_text(cells[3])
    assert "did not complete" in failed and "hidden: " in failed
    # The figure once: the cell's value; plot() leaves no figure open for the inline backend.
    assert sum("image/png" in output.get("data", {}) for output in cells[4].outputs) == 1
