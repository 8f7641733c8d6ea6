"""The weight-memory views: a parameter count and a bit width, or a safetensors checkpoint."""

from .cells import escape, html_section, html_table, rounded

_TENSOR_ROWS_SHOWN = 500


def estimate_html(estimate):
    rows = [
        [escape(name), f"{amount.bytes:,}", escape(amount.gib), escape(amount.gb)]
        for name, amount in (
            ("weights", estimate.weights),
            ("reserve (your assumption)", estimate.reserve),
            ("total", estimate.total),
        )
    ]
    summary = (
        f"<p>{estimate.parameters:,} parameters &times; {estimate.bits} bits = "
        f"{estimate.total_bits:,} bits; bytes = ceil(bits / 8). "
        f"Total &asymp; <strong>{rounded(estimate.total.gib)} GiB</strong> "
        f"({rounded(estimate.total.gb)} GB).</p>"
    )
    notes = [
        "GiB = 2^30 bytes, GB = 10^9 bytes; the table shows exact values.",
        "The reserve is an assumption you chose, not a measurement.",
        "Not included: " + ", ".join(estimate.not_included) + ".",
        "This does not predict whether a real model fits on a card.",
    ]
    return html_section(
        "Weight memory estimate",
        summary + html_table(["", "bytes", "GiB (exact)", "GB (exact)"], rows),
        notes,
    )


def checkpoint_estimate_html(estimate):
    rows = [
        [
            escape(d.dtype),
            str(d.bits_per_element),
            f"{d.tensors:,}",
            f"{d.parameters:,}",
            f"{d.memory.bytes:,}",
            escape(d.memory.gib),
            escape(d.memory.gb),
        ]
        for d in estimate.dtypes
    ]
    for name, amount in (
        ("weights", estimate.weights),
        ("reserve (your assumption)", estimate.reserve),
        ("total", estimate.total),
    ):
        rows.append([f"<strong>{escape(name)}</strong>", "", "", "", f"{amount.bytes:,}",
                     escape(amount.gib), escape(amount.gb)])
    layout = f"sharded, {len(estimate.shards)} shards" if estimate.sharded else "one file"
    summary = (
        f"<p><code>{escape(estimate.resolved)}</code> ({escape(layout)}): "
        f"{estimate.tensor_count:,} tensors, {estimate.parameters:,} parameters. "
        f"Total &asymp; <strong>{rounded(estimate.total.gib)} GiB</strong> "
        f"({rounded(estimate.total.gb)} GB).</p>"
    )
    content = summary + html_table(["dtype", "bits", "tensors", "parameters", "bytes", "GiB (exact)",
                                    "GB (exact)"], rows)
    if estimate.by_tensor:
        tensors = estimate.tensors
        shown = tensors[:_TENSOR_ROWS_SHOWN]
        tensor_rows = [
            [f"<code>{escape(t.name)}</code>", escape(t.dtype), escape(list(t.shape)), f"{t.bytes:,}",
             escape(t.shard)]
            for t in shown
        ]
        more = (
            f"<p><small>The first {len(shown):,} of {len(tensors):,} tensors; all are in "
            f"<code>.tensors</code>.</small></p>"
            if len(shown) < len(tensors)
            else ""
        )
        content += html_table(["tensor", "dtype", "shape", "bytes", "shard"], tensor_rows) + more
    # The core's notes (what the bytes are, loading, reserve, fit, the index's total_size).
    core_notes = estimate.to_dict()["notes"]
    notes = core_notes[:2] + [
        "GiB = 2^30 bytes, GB = 10^9 bytes; the table shows exact values.",
        "Not included: " + ", ".join(estimate.not_included) + ".",
    ] + core_notes[2:]
    return html_section("Weight memory of a safetensors checkpoint", content, notes)
