"""Every notebook view as a user sees it: code run in a real Jupyter kernel (nbclient and
ipykernel), the executed notebook exported to HTML (nbconvert) and drawn by a headless
Chromium, which takes a screenshot.

The views: a real H200 measurement (examples/results/mesures-float32.json) and a recorded
checkpoint measurement (examples/results/llama-8b-bfloat16-h200.json), their timing and their plots; a
prediction; the comparison of the two examples/results files; a sweep and its plot (the test
double's: a sweep file cannot be read back, so the sweep is made here through the scripted
backend); a quote; the environment; estimates, of a parameter count and of a small safetensors
checkpoint written here; which package's GPU holds a tiny checkpoint written here, and the
Llama-3-8B-like checkpoint of the recorded measurement (headers over sparse files, written by
examples/models/write_checkpoint.py); the results report of that measurement.

Fails on: an error output or a traceback in a cell, a view that fell back to a plain repr
(<iteragpu....object at 0x...>), a plot that is missing or drawn twice, an image the browser
cannot decode, a console error in Chromium, a blank screenshot, and a table cell whose text is
clipped (wider than the cell, in the DOM). The screenshots are kept in the build tree
(views-in-browser/ beside python/); the pictures of docs/images/ are made there:
notebook-views-readme.png (a measurement's view and its plot: docs/images/notebook-views.png),
checkpoint-measurement-view.png, checkpoint-measurement-plot.png and package-fit-view.png (the
files of the same names under docs/images/).

Needs the Debian packages python3-nbconvert and chromium (besides python3-nbclient and
python3-ipykernel): missing, the test fails where ITERAGPU_REQUIRE_JUPYTER=1 and skips,
saying why, elsewhere.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR, optional_module

REQUIRED = os.environ.get("ITERAGPU_REQUIRE_JUPYTER") == "1"
FLOAT32 = os.path.join(SOURCE_DIR, "examples", "results", "mesures-float32.json")
BFLOAT16 = os.path.join(SOURCE_DIR, "examples", "results", "mesures-bfloat16.json")
CHECKPOINT_RUN = os.path.join(SOURCE_DIR, "examples", "results", "llama-8b-bfloat16-h200.json")
LLAMA_8B_CONFIG = os.path.join(SOURCE_DIR, "examples", "models", "llama-8b")
WRITE_CHECKPOINT = os.path.join(SOURCE_DIR, "examples", "models", "write_checkpoint.py")

# Added to the exported page: every image must decode; a broken one is a console error, and
# the count of good ones is written on <body> for --dump-dom.
_IMAGE_CHECK = """<script>
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var broken = images.filter(function (image) { return !image.complete || image.naturalWidth === 0; });
  broken.forEach(function (image, index) { console.error("iteragpu-check: image " + index + " did not decode"); });
  document.body.setAttribute("data-images-decoded", String(images.length - broken.length));
  // A cell whose content is wider than the cell (cut off, or over its neighbour) is an error.
  var cells = Array.prototype.slice.call(document.querySelectorAll(".iteragpu td, .iteragpu th"));
  cells.forEach(function (cell) {
    if (cell.scrollWidth > cell.clientWidth + 1) {
      console.error("iteragpu-check: clipped cell: " + cell.textContent.slice(0, 80));
    }
  });
  document.body.setAttribute("data-cells-checked", String(cells.length));
});
</script>"""


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    message = "no Chromium (Debian package chromium) to draw the notebook's HTML"
    if REQUIRED:
        pytest.fail(message + " (ITERAGPU_REQUIRE_JUPYTER=1)")
    pytest.skip(message)


def _build_output_dir():
    """views-in-browser/ in the build tree: beside the python/ folder holding the package."""
    import iteragpu

    build_python = os.path.dirname(os.path.dirname(os.path.abspath(iteragpu.__file__)))
    folder = os.path.join(os.path.dirname(build_python), "views-in-browser")
    os.makedirs(folder, exist_ok=True)
    return folder


# (cell source, what it shows: "html" a rich view, "png" a plot, None no display)
def _cells(tmp_path, fake_backend):
    from test_measure import write_tiny_llama

    checkpoint = tmp_path / "tiny.safetensors"
    model = tmp_path / "tiny-llama"
    write_tiny_llama(model)
    llama_8b = tmp_path / "llama-8b"
    subprocess.run([sys.executable, WRITE_CHECKPOINT, LLAMA_8B_CONFIG, str(llama_8b)], check=True,
                   capture_output=True)
    table = tmp_path / "resultats.csv"
    return [
        ("import json, struct\nimport iteragpu\n"
         f"FLOAT32, BFLOAT16, CHECKPOINT_RUN = {FLOAT32!r}, {BFLOAT16!r}, {CHECKPOINT_RUN!r}", None),
        ("m = iteragpu.read_measurement(FLOAT32)\nm", "html"),
        ("m.timing", "html"),
        ("m.plot()", "png"),
        ("iteragpu.predict(compute_capability=\"9.0\", batch=2, context=128, width=1024, dtype=\"float32\")",
         "html"),
        ("iteragpu.compare(FLOAT32, BFLOAT16)", "html"),
        (f"sweep = iteragpu.sweep(\"batch\", width=1024, backend_path={fake_backend!r}, progress=False)\nsweep",
         "html"),
        ("sweep.plot()", "png"),
        ("iteragpu.quote(\"b200\", days=7, lots=2, accepted_results=3)", "html"),
        ("iteragpu.environment()", "html"),
        ("iteragpu.estimate(parameters=7_000_000_000, bits=16, reserve_gib=4)", "html"),
        # A small checkpoint, written as test_estimate.py writes one: length, JSON header, zeros.
        ("header = {\"embed.weight\": {\"dtype\": \"BF16\", \"shape\": [1000, 64], \"data_offsets\": [0, 128000]},\n"
         "          \"norm.weight\": {\"dtype\": \"F32\", \"shape\": [64], \"data_offsets\": [128000, 128256]}}\n"
         "text = json.dumps(header).encode()\ntext += b\" \" * (-len(text) % 8)\n"
         f"with open({str(checkpoint)!r}, \"wb\") as file:\n"
         "    file.write(struct.pack(\"<Q\", len(text)) + text + bytes(128256))\n"
         f"iteragpu.estimate(checkpoint={str(checkpoint)!r})", "html"),
        (f"iteragpu.packages(model={str(model)!r}, batch=2, context=8, days=7)", "html"),
        # Last: the checkpoint run's table is long (a row per decode step).
        ("run = iteragpu.Measurement.read(CHECKPOINT_RUN)\nrun", "html"),
        ("run.timing", "html"),
        ("run.plot()", "png"),
        (f"iteragpu.packages(model={str(llama_8b)!r}, batch=4, context=4096, new_tokens=16, days=7, "
         "measurement=CHECKPOINT_RUN)", "html"),
        (f"iteragpu.results_add({str(table)!r}, measurement=CHECKPOINT_RUN, gpu=\"h200\", days=7, lots=1, "
         "work_unit=\"generated sequence\", attempted=1000, accepted=900, metric=\"exact match\", "
         "threshold=\">= 0.8\", observed=\"0.84\", date=\"2026-12-01\")\n"
         f"iteragpu.results_report({str(table)!r})", "html"),
    ]


# Cells of the pictures of docs/images/ (indexes into _cells) and the window each is drawn in.
_PICTURES = {
    "checkpoint-measurement-view.png": ([13], "1280,960"),
    "checkpoint-measurement-plot.png": ([15], "1100,1100"),
    "package-fit-view.png": ([16], "1280,1000"),
}


def _run_chromium(chromium, page, *arguments):
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", *arguments,
               f"file://{page}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    # The page's console: "INFO:CONSOLE:12] "message", source: file://... (12)".
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


def _check_screenshot(path):
    import matplotlib.image

    assert os.path.getsize(path) > 10_000, path
    pixels = matplotlib.image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100
    rgb = pixels[:, :, :3].reshape(-1, 3)
    # Not one colour (a blank page): text, tables and plots leave many dark pixels.
    assert float(rgb.std()) > 0.05, f"{path}: a blank page"
    assert float((rgb.mean(axis=1) < 0.5).mean()) > 0.005, f"{path}: almost nothing drawn"


def _export(nbconvert, notebook, page):
    exporter = nbconvert.HTMLExporter()
    html, _ = exporter.from_notebook_node(notebook)
    # The views need no script: the template's (require.js, MathJax, from the network or
    # /usr/share/javascript) are left out so that the page is the same offline everywhere.
    html = re.sub(r"<script[^>]*\bsrc=[^>]*>\s*</script>", "", html)
    html = html.replace("</body>", _IMAGE_CHECK + "</body>")
    with open(page, "w", encoding="utf-8") as file:
        file.write(html)
    return html


def _shown_text(html):
    """The page without its style sheets and scripts: what a reader can see."""
    return re.sub(r"<(style|script)\b.*?</\1>", "", html, flags=re.S)


def test_every_view_renders_in_a_browser(tmp_path, fake_backend):
    nbformat = optional_module("nbformat")
    nbclient = optional_module("nbclient")
    nbconvert = optional_module("nbconvert")
    chromium = _chromium()
    import iteragpu

    cells = _cells(tmp_path, fake_backend)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source, _ in cells])
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(iteragpu.__file__)))
    environment = dict(os.environ, PYTHONPATH=package_parent, PYDEVD_DISABLE_FILE_VALIDATION="1",
                       MPLBACKEND="module://matplotlib_inline.backend_inline")
    nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", allow_errors=True,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute(env=environment)

    problems = []
    for (source, shown), cell in zip(cells, notebook.cells):
        where = source.splitlines()[-1]
        for output in cell.outputs:
            if output.output_type == "error":
                problems.append(f"{where}: {output.ename}: {output.evalue}")
            elif output.output_type == "stream" and output.name == "stderr" and re.search(
                    r"Traceback|Error|Warning", output.text):
                problems.append(f"{where}: stderr: {output.text[:300]}")
        kinds = [list(output.get("data", {})) for output in cell.outputs if "data" in output]
        if shown == "html" and not any("text/html" in kind for kind in kinds):
            problems.append(f"{where}: no HTML view, only {kinds}")
        if shown == "png" and sum("image/png" in kind for kind in kinds) != 1:
            problems.append(f"{where}: the plot is not shown exactly once: {kinds}")
    assert not problems, "\n".join(problems)

    folder = _build_output_dir()
    page = os.path.join(folder, "notebook-views.html")
    html = _export(nbconvert, notebook, page)
    shown_text = _shown_text(html)
    assert "Traceback" not in shown_text
    assert not re.search(r"\w*Error\b", shown_text), re.search(r".{80}\w*Error\b.{80}", shown_text, re.S)
    assert not re.search(r"(<|&lt;)iteragpu\.[\w.]+ object at 0x", shown_text), "a view fell back to a plain repr"
    for title in ("Measurement", "Timing of the warm repeats", "Predicted memory", "Comparison of 2 measurements",
                  "Memory sweep", "Rental package quote", "Environment", "Weight memory estimate",
                  "Weight memory of a safetensors checkpoint", "Which GPU holds",
                  "Measurement of a checkpoint's generation".replace("'", "&#x27;"), "Cost per accepted result"):
        assert f"<strong>{title}" in shown_text, title
    assert "33,574,912 bytes <small>(32.02 MiB)</small>" in shown_text  # the float32 model's parameters
    # The checkpoint run: summary first, the sequences folded, the cost per million generated tokens.
    assert shown_text.count("<details><summary>") == 5
    assert "<strong>19.64 GiB <small>(21,086,863,360 bytes)</small></strong>" in shown_text
    assert "per million generated tokens" in shown_text and "<strong>$4.3712</strong>" in shown_text
    images = shown_text.count("data:image/png;base64,")
    assert images == 3, images

    dom, console = _run_chromium(chromium, page, "--dump-dom")
    assert not console, "Chromium's console:\n" + "\n".join(console)
    assert 'data-images-decoded="3"' in dom, re.search(r"<body[^>]*>", dom)
    cells_checked = int(re.search(r'data-cells-checked="(\d+)"', dom).group(1))
    assert cells_checked > 300, cells_checked  # the check ran over the tables, folded rows included

    screenshot = os.path.join(folder, "notebook-views.png")
    _, console = _run_chromium(chromium, page, f"--screenshot={screenshot}", "--window-size=1280,4000")
    assert not console, "Chromium's console:\n" + "\n".join(console)
    _check_screenshot(screenshot)

    # The README's picture: the measurement's view and its plot only.
    readme_notebook = nbformat.v4.new_notebook(cells=[notebook.cells[1], notebook.cells[3]])
    readme_page = os.path.join(folder, "notebook-views-readme.html")
    _export(nbconvert, readme_notebook, readme_page)
    readme_screenshot = os.path.join(folder, "notebook-views-readme.png")
    _, console = _run_chromium(chromium, readme_page, f"--screenshot={readme_screenshot}",
                               "--window-size=1100,1980")
    assert not console, "Chromium's console:\n" + "\n".join(console)
    _check_screenshot(readme_screenshot)

    # The pictures of docs/images/: the checkpoint measurement's view and its plot, the fit view.
    for name, (indexes, window) in _PICTURES.items():
        picture_page = os.path.join(folder, name.replace(".png", ".html"))
        _export(nbconvert, nbformat.v4.new_notebook(cells=[notebook.cells[i] for i in indexes]), picture_page)
        picture = os.path.join(folder, name)
        _, console = _run_chromium(chromium, picture_page, f"--screenshot={picture}", f"--window-size={window}")
        assert not console, f"{name}: Chromium's console:\n" + "\n".join(console)
        _check_screenshot(picture)


@pytest.mark.parametrize("name", ["notebook-views.png"] + sorted(_PICTURES))
def test_the_pictures_are_committed_and_modest(name):
    picture = os.path.join(SOURCE_DIR, "docs", "images", name)
    assert os.path.isfile(picture)
    assert 10_000 < os.path.getsize(picture) < (400_000 if name == "notebook-views.png" else 300_000)
    with open(picture, "rb") as file:
        assert file.read(8) == b"\x89PNG\r\n\x1a\n"
