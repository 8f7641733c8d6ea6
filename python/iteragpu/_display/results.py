"""The view of a results report: each accepted run's package price and cost per result, and a
checkpoint run's cost per million generated tokens (every figure of `iteragpu results report`)."""

from .cells import escape, html_section, html_table, rounded


def results_report_html(report):
    rows = []
    data_rows = report.to_dict()["rows"]  # the cost per million generated tokens is in the data only
    method = None
    for cost, data in zip(report.rows, data_rows):
        row, quote = cost.row, cost.quote
        unit = quote.unit_cost
        if unit is None:
            per_result = "none <small>(nothing accepted)</small>"
        else:
            exact = f"{unit.numerator_cents}/{unit.denominator} cents"
            per_result = f"<strong>${escape(unit.display_usd)}</strong> <small>(exact: {escape(exact)})</small>"
        rows.append(
            [
                str(row.line),
                escape(row.date),
                f"{escape(quote.entry.gpu_name)} (<code>{escape(row.gpu)}</code>)"
                + (f"<br><small>&#9888; {escape(row.gpu_mismatch)}</small>" if row.gpu_mismatch else ""),
                str(row.days),
                f"{quote.lots:,} &times; {quote.entry.gpus_per_lot} = {quote.total_gpus:,} GPUs",
                f"{quote.total_cents:,} cents (${rounded(quote.total_usd)})",
                f"{row.units_accepted_distinct:,} / {row.units_attempted:,} {escape(row.work_unit)}",
                f"{escape(row.quality_metric)} {escape(row.observed_value)} "
                f"<small>(threshold {escape(row.acceptance_threshold)})</small>",
                per_result,
                _tokens_cell(data.get("generated_tokens_cost"), row),
            ]
        )
        method = method or (data.get("generated_tokens_cost") or {}).get("method")
    header = ["line", "date", "GPU", "days", "lots", "package", "accepted / attempted", "quality",
              "per accepted result", "per million generated tokens"]
    summary = (
        f"<p><code>{escape(report.table_path)}</code>: {len(report.rows)} "
        f"row{'' if len(report.rows) == 1 else 's'}; prices from "
        f"<code>{escape(report.catalog_path)}</code>.</p>"
    )
    # The core's own caveats (prices as labelled, not an offer, repeats, rounding).
    notes = ([method] if method else []) + report.to_dict()["caveats"]
    return html_section("Cost per accepted result", summary + html_table(header, rows), notes)


def _tokens_cell(cost, row):
    """A checkpoint run's cost per million generated tokens, as the text report gives it: the
    rounded dollars, the exact value, the decode rate and the GPU it was measured on."""
    if not cost:
        return "&ndash; <small>(no decode rate in its measurement: not a checkpoint run)</small>"
    exact = f"${cost['exact_usd']}" if cost.get("exact_usd") else f"{cost['numerator_cents']}/{cost['denominator']} cents"
    run = (f"{cost['architecture']}, {cost['dtype']}, batch {cost['batch']}, context {cost['context']}, "
           f"{cost['new_tokens']} new tokens")
    return (f"<strong>${escape(cost['display_usd'])}</strong> <small>(exactly {escape(exact)}); decode "
            f"{escape(cost['decode_tokens_per_second'])} tokens/s measured on {escape(cost['measured_gpu'])}"
            + (" (not the package's GPU)" if row.gpu_mismatch else "")
            + f" ({escape(run)}); {cost['gpu_hours']:,} GPU-hours</small>")
