"""The view of a rental package quote."""

import decimal

from .cells import escape, html_section, html_table, rounded


def quote_html(quote):
    entry = quote.entry
    rows = [
        ["GPU", f"{escape(entry.gpu_name)} (<code>{escape(entry.gpu)}</code>)"],
        ["duration", f"{entry.days} days"],
        ["lot price", f"{entry.lot_price_cents:,} cents (${rounded(decimal.Decimal(entry.lot_price_cents) / 100)})"],
        ["lots", f"{quote.lots:,} &times; {entry.gpus_per_lot} GPUs = {quote.total_gpus:,} GPUs"],
        ["total", f"<strong>{quote.total_cents:,} cents (${rounded(quote.total_usd)})</strong>"],
    ]
    unit = quote.unit_cost
    notes = []
    if unit is None:
        rows.append(["cost per accepted result", "not computed: pass accepted_results"])
    else:
        rows += [
            ["accepted results", f"{unit.accepted_results:,}"],
            ["cost per accepted result", f"<strong>${escape(unit.display_usd)}</strong>"],
            ["exact cost per accepted result", f"{unit.numerator_cents:,}/{unit.denominator:,} cents"],
        ]
        notes.append("Cost per accepted result: the total divided by the accepted results. "
                     + unit.display_rounding)
    notes += [
        f"Prices: {entry.source}, snapshot {entry.snapshot_date} ({quote.catalog_path}).",
        "A catalog proves neither availability nor a reservation: check the provider's page "
        "before buying.",
    ]
    return html_section("Rental package quote", html_table(None, rows), notes)
