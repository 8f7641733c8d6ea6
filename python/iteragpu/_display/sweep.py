"""The view of a memory sweep: each measured point against the budget, and its plot
(matplotlib, imported on use)."""

from .cells import MIB, bytes_cell, close_figure, escape, html_section, html_table, pyplot


def sweep_html(result):
    rows = []
    for point in result.points_by_value:
        rows.append([
            f"{point.value:,}",
            escape(point.outcome),
            bytes_cell(point.peak_reserved_bytes),
            bytes_cell(point.predicted_peak_reserved_bytes),
            str(result.points.index(next(p for p in result.points if p.value == point.value)) + 1),
        ])
    if result.largest_fitting is not None:
        verdict = f"Largest {escape(result.vary)} under the budget: <b>{result.largest_fitting:,}</b>"
        if result.smallest_not_fitting is not None:
            verdict += f"; {result.smallest_not_fitting:,} does not fit (measured)"
        elif result.beyond_largest_accepted:
            verdict += (f" (the largest accepted: {result.largest_accepted + 1:,} is refused, "
                        f"{escape(result.beyond_largest_accepted)})")
    else:
        verdict = f"No {escape(result.vary)} fits under the budget"
    content = (
        f"<p>{escape(result.start.device)} ({escape(result.gpu_name)}), {escape(result.start.dtype)}: budget "
        f"{escape(result.budget)} = {bytes_cell(result.budget_bytes)}. {verdict}. "
        f"{result.measurements} measurements, each in its own worker process.</p>"
        + html_table([result.vary, "outcome", "peak reserved", "predicted", "order"], rows)
    )
    return html_section("Memory sweep", content)


def plot_sweep(result):
    """Peak reserved memory against the varied dimension, with the budget line."""
    plt = pyplot()  # only here: import iteragpu stays light

    points = [p for p in result.points_by_value if p.peak_reserved_bytes is not None]
    figure, axes = plt.subplots(figsize=(7, 4))
    for fits, colour, label in ((True, "tab:green", "fits"), (False, "tab:red", "over budget")):
        chosen = [p for p in points if p.fits == fits]
        axes.scatter([p.value for p in chosen], [p.peak_reserved_bytes / MIB for p in chosen],
                     color=colour, label=label, zorder=3)
    failed = [p for p in result.points if p.peak_reserved_bytes is None]
    if failed:
        axes.scatter([p.value for p in failed], [result.budget_bytes / MIB] * len(failed), marker="x",
                     color="black", label="out of memory / beyond bounds", zorder=3)
    axes.axhline(result.budget_bytes / MIB, color="tab:blue", linestyle="--",
                 label=f"budget {result.budget}")
    axes.set_xscale("log", base=2)
    axes.set_xlabel(result.vary)
    axes.set_ylabel("peak reserved (MiB)")
    axes.set_title(f"{result.start.device} {result.gpu_name}: largest {result.vary} = {result.largest_fitting}")
    axes.legend()
    figure.tight_layout()
    return close_figure(figure)
