"""Jupyter views, one module per view: HTML for estimates (parameter counts and checkpoints),
quotes, results reports, environment reports, predictions, measurements and their timing,
summaries of several GPUs, sweeps and comparisons of measurements; plots of a measurement's
phases and of a sweep (closed in pyplot: shown once, as the cell's value);
and the progress line of measure() and sweep() (progress.py). cells.py holds what they share.

Presentation only: every figure comes from the result's attributes (the core's values);
matplotlib is imported when a plot is asked for, never at ``import iteragpu``.

The extension calls ``iteragpu._display.<function>(result)`` by name (python/src/bindings.hpp:
``_repr_html_`` and ``plot``), so each of those functions is importable from here.
"""

from .comparison import comparison_html
from .environment import environment_html
from .estimate import checkpoint_estimate_html, estimate_html
from .measurement import measurement_html, plot_measurement, timing_html
from .package_fit import package_fit_html
from .prediction import prediction_html
from .quote import quote_html
from .results import results_report_html
from .summary import summary_html
from .sweep import plot_sweep, sweep_html

__all__ = [
    "checkpoint_estimate_html",
    "comparison_html",
    "environment_html",
    "estimate_html",
    "measurement_html",
    "package_fit_html",
    "plot_measurement",
    "plot_sweep",
    "prediction_html",
    "quote_html",
    "results_report_html",
    "summary_html",
    "sweep_html",
    "timing_html",
]
