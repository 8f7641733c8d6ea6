"""The view of packages(model=...): which catalog GPU holds the checkpoint, in GiB beside the
bytes, each verdict in its colour, the lot size beside its price."""

import decimal

from .cells import escape, gib, html_section, html_table

# Verdict cells: a tinted background and a word, so a reader without colour reads it too.
_VERDICT_STYLE = {
    "fits": "background:#dafbe1;color:#1a7f37",
    "uncertain": "background:#fff8c5;color:#7d4e00",
    "does not fit": "background:#ffebe9;color:#cf222e",
    "not assessed": "background:#f6f8fa;color:#57606a",
}


def _amount(value, mark="", rounding=decimal.ROUND_HALF_UP):
    """ "139.80 GiB" over "(150,109,880,320 bytes)", a mark ("≥", "≤", "~") before both; a
    bound's GiB rounded so that it stays a bound."""
    if not value:
        return "&ndash;"
    return (f"<span style='white-space:nowrap'>{mark}{gib(value, rounding)} GiB</span><br>"
            f"<small style='white-space:nowrap'>({mark}{value:,} bytes)</small>")


def _needed(fit):
    """The needed bytes, "≥" before a lower bound (rounded down) and "~" before a figure a
    caveat leaves unchecked either way (as predict marks its counters)."""
    mark = {"": "", "at least": "≥"}.get(fit.required_unchecked, "~")
    return _amount(fit.required_bytes, mark, decimal.ROUND_FLOOR if mark == "≥" else decimal.ROUND_HALF_UP)


def _headroom(fit):
    """The memory less the needed bytes: "≤" (an upper bound) where the need is a lower bound,
    "~" where a caveat leaves it unchecked either way; below zero in red."""
    bound = fit.required_unchecked == "at least"
    mark = "≤" if bound else ("~" if fit.required_unchecked else "")
    if fit.headroom_bytes < 0:
        # The magnitude of an upper bound below zero is a lower bound: rounded down.
        magnitude = _amount(-fit.headroom_bytes, mark + "&minus;", decimal.ROUND_FLOOR if bound else decimal.ROUND_HALF_UP)
        return f"<span style='color:#cf222e'>{magnitude}</span>"
    if not fit.headroom_bytes:
        return "0.00 GiB<br><small>(0 bytes)</small>"
    return _amount(fit.headroom_bytes, mark, decimal.ROUND_CEILING if bound else decimal.ROUND_HALF_UP)


def package_fit_html(report):
    header = ["GPU", "cc", "memory", "needed", "headroom", "verdict", "lot price", "per million tokens"]
    # The lot sizes come with the prices in the report's data (a lot of 2 GPUs, of 8).
    prices = {entry["gpu"]: entry.get("price") or {} for entry in report.to_dict()["packages"]}
    rows = []
    for fit in report.packages:
        assessed = fit.verdict != "not assessed"
        lot_size = prices.get(fit.gpu, {}).get("gpus_per_lot")
        if fit.lot_price_cents is None:
            price = "&ndash;"
        else:
            price = f"${fit.lot_price_cents / 100:,.2f}"
            if lot_size:
                flag = f" <strong style='color:#9a6700'>&#9873; a lot of {lot_size} GPUs</strong>" if lot_size > 1 \
                    else " <small>(1 GPU)</small>"
                price += f"<br>{flag}"
        cost = f"${escape(fit.cost_per_million_tokens_usd)}" if fit.cost_per_million_tokens_usd else "&ndash;"
        rows.append([
            f"{escape(fit.gpu_name)} (<code>{escape(fit.gpu)}</code>)",
            escape(fit.compute_capability) or "&ndash;",
            _amount(fit.memory_bytes),
            _needed(fit) if assessed else "&ndash;",
            _headroom(fit) if assessed else "&ndash;",
            f'<span style="{_VERDICT_STYLE.get(fit.verdict, "")};padding:1px 6px;border-radius:3px;white-space:nowrap">'
            f'<strong>{escape(fit.verdict)}</strong></span>',
            price,
            cost,
        ])
    counts = {}
    for fit in report.packages:
        counts[fit.verdict] = counts.get(fit.verdict, 0) + 1
    tally = "; ".join(f'<span style="{_VERDICT_STYLE.get(verdict, "")};padding:1px 6px">{count} {escape(verdict)}</span>'
                      for verdict, count in counts.items())
    # Each source once, with the GPU models it is used for (as the text report lists them).
    sources = {}
    for fit in report.packages:
        for source in (f"memory {fit.memory_source}", f"outside the allocator {fit.outside_allocator_source}"):
            sources.setdefault(source, []).append(fit.gpu)
    notes = [f"{', '.join(gpus)}: {source}" for source, gpus in sources.items()]
    notes += [f"{fit.gpu}: {fit.reason}" for fit in report.packages if fit.verdict != "fits"]
    notes += [
        "Needed on one GPU: the predicted peak reserved bytes plus the process's memory outside the caching "
        "allocator. One GPU per model instance: splitting a model over several GPUs is not modelled.",
        "GiB: 2^30 bytes, two decimals; ≥ marks a lower bound (rounded down), ≤ the headroom it leaves (an upper bound, rounded up), ~ a figure a caveat leaves unchecked.",
        "Lot price: the price of one lot, which may hold several GPUs (flagged): the package is rented by the lot.",
        f"Prices: the catalog's ({report.catalog_path}); the shipped catalog's are illustrative, "
        "invented, not an offer.",
    ]
    notes += [f"Caveat: {caveat}" for caveat in report.caveats]
    return html_section("Which GPU holds " + report.heading, f"<p>{tally}</p>" + html_table(header, rows), notes)
