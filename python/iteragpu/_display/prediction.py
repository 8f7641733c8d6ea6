"""The view of a memory prediction: the allocator counters measure() will record."""

from .cells import (ALLOCATOR_COUNTER_HEADER, allocator_counter_cells, bytes_cell, escape, html_section,
                    html_table, row_label)


def _marked_cells(row):
    """The six counter cells, each a caveat leaves unchecked marked: "≥" when it can only be
    higher, "~" when it may differ either way."""
    mark = "≥" if row.lower_bound else "~"
    return [f"{mark}{cell}" if name in row.uncertain_counters else cell
            for name, cell in zip(_COUNTER_NAMES, allocator_counter_cells(row))]


# The JSON names of the counters, in the order of allocator_counter_cells.
_COUNTER_NAMES = ("allocated_bytes.baseline", "allocated_bytes.end", "peak_allocated_bytes",
                  "reserved_bytes.baseline", "reserved_bytes.end", "peak_reserved_bytes")


def prediction_html(prediction):
    target = prediction.target
    gpu = f"{escape(target.gpu_name)}, " if target.gpu_name else ""
    summary = (
        f"<p>{escape(prediction.heading)}, on {gpu}compute capability "
        f"{target.compute_capability_major}.{target.compute_capability_minor}: cuBLAS workspace "
        f"{bytes_cell(target.cublas_workspace_bytes)}, cuBLASLt workspace "
        f"{bytes_cell(target.cublaslt_workspace_bytes)}"
        f"{'' if prediction.cublaslt_used else ' (not used)'} "
        f"({escape(target.workspace_source)}).</p>"
    )
    rows = [[escape(row_label(row))] + _marked_cells(row) for row in prediction.phases]
    header = ["phase"] + ALLOCATOR_COUNTER_HEADER
    marks = {row.lower_bound for row in prediction.phases if row.uncertain_counters}
    notes = [
        "Predicted counters of this process's caching allocator on one GPU, from PyTorch's "
        "rules, before any GPU is touched; not the CUDA context or other processes.",
    ] + [f"Caveat: {caveat}" for caveat in prediction.caveats]
    if True in marks:
        notes.append("≥ marks a counter a caveat leaves unchecked, that can only be higher.")
    if False in marks:
        notes.append("~ marks a counter a caveat leaves unchecked, that may differ either way.")
    return html_section("Predicted memory", summary + html_table(header, rows), notes)
