#!/usr/bin/env python3
"""Runs a notebook's code cells in order in one namespace, without Jupyter.

For machines where no Jupyter kernel can be installed (the GPU machine has no ipykernel or
nbclient): the test suite executes the notebook in a real kernel where one exists; this
runs the same cells with plain Python, prints each cell's last value as a notebook would
show it (its repr), fails on the first cell error, and saves every matplotlib figure as PNG:
those a cell shows as its value (iteragpu's plot() returns its figure closed in pyplot, so
that Jupyter draws it once) and those still open in pyplot.

Usage: python3 run_notebook_cells.py NOTEBOOK.ipynb FIGURE_DIR
(the cells run in the notebook's folder, as in Jupyter)
"""
import ast
import json
import os
import sys


def main(notebook_path, figure_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.figure
    import matplotlib.pyplot as plt

    notebook = json.load(open(notebook_path, encoding="utf-8"))
    # Jupyter runs a notebook's kernel in the notebook's folder: its cells open files beside it.
    figure_dir = os.path.abspath(figure_dir)
    os.chdir(os.path.dirname(os.path.abspath(notebook_path)))
    namespace = {"__name__": "__main__"}
    code_cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    figures = []
    for number, cell in enumerate(code_cells, 1):
        source = "".join(cell["source"])
        print(f"---- cell {number} ----\n{source}\n---- output ----", flush=True)
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, f"<cell {number}>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), f"<cell {number}>", "eval"), namespace)
            if value is not None:
                print(repr(value))
            if isinstance(value, matplotlib.figure.Figure) and value not in figures:
                figures.append(value)
    os.makedirs(figure_dir, exist_ok=True)
    for number in plt.get_fignums():
        if plt.figure(number) not in figures:
            figures.append(plt.figure(number))
    for index, figure in enumerate(figures, 1):
        path = os.path.join(figure_dir, f"notebook-figure-{index}.png")
        figure.savefig(path, dpi=100)
        print(f"figure saved: {path}")
    print(f"all {len(code_cells)} code cells ran without error")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
