"""The view of a memory prediction: the allocator counters measure() will record."""

from .cells import (ALLOCATOR_COUNTER_HEADER, allocator_counter_cells, bytes_cell, escape, html_section,
                    html_table, row_label)


def prediction_html(prediction):
    model = prediction.model
    target = prediction.target
    gpu = f"{escape(target.gpu_name)}, " if target.gpu_name else ""
    summary = (
        f"<p>Linear({model.width}&rarr;{model.hidden}) &rarr; GELU &rarr; "
        f"Linear({model.hidden}&rarr;{model.width}), input [{model.batch}, {model.context}, "
        f"{model.width}] {escape(model.dtype)}, on {gpu}compute capability "
        f"{target.compute_capability_major}.{target.compute_capability_minor}: cuBLAS workspace "
        f"{bytes_cell(target.cublas_workspace_bytes)}, cuBLASLt workspace "
        f"{bytes_cell(target.cublaslt_workspace_bytes)}"
        f"{'' if prediction.cublaslt_used else ' (not used)'} "
        f"({escape(target.workspace_source)}).</p>"
    )
    rows = [[escape(row_label(row))] + allocator_counter_cells(row) for row in prediction.phases]
    header = ["phase"] + ALLOCATOR_COUNTER_HEADER
    notes = [
        "Predicted counters of this process's caching allocator on one GPU, from PyTorch's "
        "rules, before any GPU is touched; not the CUDA context or other processes.",
    ] + [f"Caveat: {caveat}" for caveat in prediction.caveats]
    return html_section("Predicted memory", summary + html_table(header, rows), notes)
