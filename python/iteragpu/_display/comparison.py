"""The view of measurements side by side: one table per section, ratios to the first."""

from .cells import bytes_cell, escape, html_section, html_table


# Rows in bytes that are sizes of one value, not amounts of memory: no MiB beside them.
_BYTE_SIZES = {"dtype_bytes"}


def _compared_cell(value, unit, name=""):
    """One measurement's value of one compared figure, as the text report shows it."""
    if value is None:
        return "&ndash;"
    if unit == "bytes" and name in _BYTE_SIZES:
        return f"{value:,}"
    if unit == "bytes":
        return bytes_cell(value)
    if unit == "seconds":
        return f"{value * 1e6:,.1f} µs"
    if unit == "fraction":
        return f"{value * 100:.1f} %"
    if unit == "tokens_per_second":
        return f"{value:,.1f} tokens/s"
    if isinstance(value, int):
        return f"{value:,}"
    return escape(value)


def _ratio_cell(ratio):
    if ratio is None:
        return "&ndash;"
    return f"&times;{ratio:.3f}" if ratio >= 0.1 or ratio == 0 else f"&times;{ratio:.3g}"


def comparison_html(comparison):
    count = len(comparison.measurements)
    tags = [f"[{index + 1}]" for index in range(count)]
    sources = "".join(
        f"<li>{tag} <code>{escape(source)}</code></li>" for tag, source in zip(tags, comparison.sources)
    )
    findings = "".join(f"<li>{escape(finding)}</li>" for finding in comparison.findings)
    content = f"<ul>{sources}</ul><p><strong>Findings</strong></p><ul>{findings}</ul>"
    for section in comparison.sections:
        rows = section.rows
        shared = ""
        if section.name == "environment":
            # Only the fields that differ get a row; the shared ones are listed in one line.
            shared = "; ".join(
                f"{escape(row.label)} {_compared_cell(row.values[0], row.unit, row.name)}" for row in rows if row.same
            )
            rows = [row for row in rows if not row.same]
        with_ratios = any(row.ratios is not None for row in rows)
        header = [""] + tags + ([f"{tag}/[1]" for tag in tags[1:]] if with_ratios else [])
        body = []
        for row in rows:
            label = escape(row.label)
            cells = [label if row.same else f"<strong>&ne; {label}</strong>"]
            cells += [_compared_cell(value, row.unit, row.name) for value in row.values]
            if with_ratios:
                cells += [""] * (count - 1) if row.ratios is None else [_ratio_cell(r) for r in row.ratios[1:]]
            body.append(cells)
        content += f"<p><strong>{escape(section.title)}</strong></p>"
        if body:
            content += html_table(header, body)
        if shared:
            content += f"<p><small>The same in every measurement: {shared}.</small></p>"
    notes = ["≠ marks a figure that is not the same in every measurement."]
    return html_section(f"Comparison of {count} measurements (ratios are to [1])", content,
                        notes + comparison.to_dict()["notes"])
