"""The view of a measurement on every GPU at once: one row per device."""

from .cells import bytes_cell, escape, html_section, html_table


def summary_html(summary):
    config = summary.configuration
    rows = []
    for outcome in summary.devices:
        figures = outcome.figures
        rows.append([
            escape(outcome.device),
            "ok" if outcome.ok else "failed",
            str(outcome.exit_code),
            escape(figures.gpu_name) if figures else "-",
            f"{figures.warm_forward_host_seconds_median * 1000:.3f}" if figures else "-",
            bytes_cell(figures.peak_allocated_bytes_max) if figures else "-",
            escape(outcome.result_file or "-"),
            escape(outcome.error),
        ])
    state = "complete" if summary.complete else ("interrupted" if summary.interrupted else "incomplete")
    content = (
        f"<p>{len(summary.devices)} GPU(s) at the same time, one worker each: batch {config.batch}, "
        f"context {config.context}, width {config.width}, hidden {config.hidden}, {escape(config.dtype)}; "
        f"{state}.</p>"
        + html_table(["device", "status", "exit", "GPU", "warm fwd host ms (median)", "peak allocated max",
                      "result file", "error"], rows)
    )
    return html_section("Measurement summary", content)
