"""The view of packages(model=...): which catalog GPU holds the checkpoint."""

from .cells import escape, html_section, html_table

_VERDICT_STYLE = {"fits": "color:#1a7f37", "does not fit": "color:#cf222e", "uncertain": "color:#9a6700",
                  "not assessed": "color:#6e7781"}


def _bytes(value):
    return f"{value:,}" if value else "&ndash;"


def _needed(fit):
    """The needed bytes, "≥" before a lower bound and "~" before a figure a caveat leaves
    unchecked either way (as predict marks its counters)."""
    mark = {"": "", "at least": "≥"}.get(fit.required_unchecked, "~")
    return mark + _bytes(fit.required_bytes)


def package_fit_html(report):
    header = ["GPU", "cc", "memory (bytes)", "needed (bytes)", "headroom (bytes)", "verdict", "lot price",
              "per million tokens"]
    rows = []
    for fit in report.packages:
        assessed = fit.verdict != "not assessed"
        price = f"${fit.lot_price_cents / 100:,.2f}" if fit.lot_price_cents is not None else "&ndash;"
        cost = f"${escape(fit.cost_per_million_tokens_usd)}" if fit.cost_per_million_tokens_usd else "&ndash;"
        rows.append([
            f"{escape(fit.gpu_name)} (<code>{escape(fit.gpu)}</code>)",
            escape(fit.compute_capability) or "&ndash;",
            _bytes(fit.memory_bytes),
            _needed(fit) if assessed else "&ndash;",
            f"{fit.headroom_bytes:,}" if assessed else "&ndash;",
            f'<span style="{_VERDICT_STYLE[fit.verdict]}"><strong>{escape(fit.verdict)}</strong></span>',
            price,
            cost,
        ])
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
        f"Prices: the catalog's ({report.catalog_path}); the shipped catalog's are illustrative, "
        "invented, not an offer.",
    ]
    notes += [f"Caveat: {caveat}" for caveat in report.caveats]
    return html_section("Which GPU holds " + report.heading, html_table(header, rows), notes)
