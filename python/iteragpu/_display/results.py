"""The view of a results report: each accepted run's package price and cost per result."""

from .cells import escape, html_section, html_table, rounded


def results_report_html(report):
    rows = []
    for cost in report.rows:
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
            ]
        )
    header = ["line", "date", "GPU", "days", "lots", "package", "accepted / attempted", "quality",
              "per accepted result"]
    summary = (
        f"<p><code>{escape(report.table_path)}</code>: {len(report.rows)} "
        f"row{'' if len(report.rows) == 1 else 's'}; prices from "
        f"<code>{escape(report.catalog_path)}</code>.</p>"
    )
    # The core's own caveats (prices as labelled, not an offer, repeats, rounding).
    notes = report.to_dict()["caveats"]
    return html_section("Cost per accepted result", summary + html_table(header, rows), notes)
