"""Jupyter views: HTML for estimates (parameter counts and checkpoints), quotes, results
reports, environment reports, measurements and comparisons of measurements, a plot of a measurement's phases, and a
dependency-free progress line.

Presentation only: every figure comes from the result's attributes (the core's values);
matplotlib is imported when a plot is asked for, never at ``import iteragpu``.
"""

import decimal
import html
import sys

from ._iteragpu import _test_double_mark as _TEST_DOUBLE_MARK  # iteragpu::kTestDoubleMark

_MIB = 2**20


def _escape(value):
    return html.escape(str(value))


def _rounded(value, places=2):
    """Display rounding, halves away from zero, as the core's text reports round."""
    quantum = decimal.Decimal(1).scaleb(-places)
    exact = decimal.Decimal(value)
    return f"{exact.quantize(quantum, rounding=decimal.ROUND_HALF_UP):,}"


def _table(header, rows):
    head = "".join(f"<th>{_escape(cell)}</th>" for cell in header) if header else ""
    body = "".join(
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        "<table>"
        + (f"<thead><tr>{head}</tr></thead>" if head else "")
        + f"<tbody>{body}</tbody></table>"
    )


def _section(title, content, notes=()):
    note_html = "".join(f"<li>{_escape(note)}</li>" for note in notes)
    return (
        f"<div class='iteragpu'><strong>{_escape(title)}</strong>{content}"
        + (f"<ul>{note_html}</ul>" if note_html else "")
        + "</div>"
    )


def _bytes_cell(count):
    if count is None:
        return "&ndash;"
    return f"{count:,} <small>({_rounded(decimal.Decimal(count) / _MIB)} MiB)</small>"


def estimate_html(estimate):
    rows = [
        [_escape(name), f"{amount.bytes:,}", _escape(amount.gib), _escape(amount.gb)]
        for name, amount in (
            ("weights", estimate.weights),
            ("reserve (your assumption)", estimate.reserve),
            ("total", estimate.total),
        )
    ]
    summary = (
        f"<p>{estimate.parameters:,} parameters &times; {estimate.bits} bits = "
        f"{estimate.total_bits:,} bits; bytes = ceil(bits / 8). "
        f"Total &asymp; <strong>{_rounded(estimate.total.gib)} GiB</strong> "
        f"({_rounded(estimate.total.gb)} GB).</p>"
    )
    notes = [
        "GiB = 2^30 bytes, GB = 10^9 bytes; the table shows exact values.",
        "The reserve is an assumption you chose, not a measurement.",
        "Not included: " + ", ".join(estimate.not_included) + ".",
        "This does not predict whether a real model fits on a card.",
    ]
    return _section(
        "Weight memory estimate",
        summary + _table(["", "bytes", "GiB (exact)", "GB (exact)"], rows),
        notes,
    )


_TENSOR_ROWS_SHOWN = 500


def checkpoint_estimate_html(estimate):
    rows = [
        [
            _escape(d.dtype),
            str(d.bits_per_element),
            f"{d.tensors:,}",
            f"{d.parameters:,}",
            f"{d.memory.bytes:,}",
            _escape(d.memory.gib),
            _escape(d.memory.gb),
        ]
        for d in estimate.dtypes
    ]
    for name, amount in (
        ("weights", estimate.weights),
        ("reserve (your assumption)", estimate.reserve),
        ("total", estimate.total),
    ):
        rows.append([f"<strong>{_escape(name)}</strong>", "", "", "", f"{amount.bytes:,}",
                     _escape(amount.gib), _escape(amount.gb)])
    layout = f"sharded, {len(estimate.shards)} shards" if estimate.sharded else "one file"
    summary = (
        f"<p><code>{_escape(estimate.resolved)}</code> ({_escape(layout)}): "
        f"{estimate.tensor_count:,} tensors, {estimate.parameters:,} parameters. "
        f"Total &asymp; <strong>{_rounded(estimate.total.gib)} GiB</strong> "
        f"({_rounded(estimate.total.gb)} GB).</p>"
    )
    content = summary + _table(["dtype", "bits", "tensors", "parameters", "bytes", "GiB (exact)", "GB (exact)"], rows)
    if estimate.by_tensor:
        tensors = estimate.tensors
        shown = tensors[:_TENSOR_ROWS_SHOWN]
        tensor_rows = [
            [f"<code>{_escape(t.name)}</code>", _escape(t.dtype), _escape(list(t.shape)), f"{t.bytes:,}",
             _escape(t.shard)]
            for t in shown
        ]
        more = (
            f"<p><small>The first {len(shown):,} of {len(tensors):,} tensors; all are in "
            f"<code>.tensors</code>.</small></p>"
            if len(shown) < len(tensors)
            else ""
        )
        content += _table(["tensor", "dtype", "shape", "bytes", "shard"], tensor_rows) + more
    # The core's notes (what the bytes are, loading, reserve, fit, the index's total_size).
    core_notes = estimate.to_dict()["notes"]
    notes = core_notes[:2] + [
        "GiB = 2^30 bytes, GB = 10^9 bytes; the table shows exact values.",
        "Not included: " + ", ".join(estimate.not_included) + ".",
    ] + core_notes[2:]
    return _section("Weight memory of a safetensors checkpoint", content, notes)


def quote_html(quote):
    entry = quote.entry
    rows = [
        ["GPU", f"{_escape(entry.gpu_name)} (<code>{_escape(entry.gpu)}</code>)"],
        ["duration", f"{entry.days} days"],
        ["lot price", f"{entry.lot_price_cents:,} cents (${_rounded(decimal.Decimal(entry.lot_price_cents) / 100)})"],
        ["lots", f"{quote.lots:,} &times; {entry.gpus_per_lot} GPUs = {quote.total_gpus:,} GPUs"],
        ["total", f"<strong>{quote.total_cents:,} cents (${_rounded(quote.total_usd)})</strong>"],
    ]
    unit = quote.unit_cost
    if unit is None:
        rows.append(["cost per accepted result", "not computed: pass accepted_results"])
    else:
        exact = f"{unit.numerator_cents}/{unit.denominator} cents"
        rows.append(
            [
                "cost per accepted result",
                f"${_escape(unit.display_usd)} for {unit.accepted_results:,} accepted results "
                f"<small>(exact: {_escape(exact)}; {_escape(unit.display_rounding)})</small>",
            ]
        )
    notes = [
        f"Prices: {entry.source}, snapshot {entry.snapshot_date} ({quote.catalog_path}).",
        "A catalog proves neither availability nor a reservation: check the provider's page "
        "before buying.",
    ]
    return _section("Rental package quote", _table(None, rows), notes)


def results_report_html(report):
    rows = []
    for cost in report.rows:
        row, quote = cost.row, cost.quote
        unit = quote.unit_cost
        if unit is None:
            per_result = "none <small>(nothing accepted)</small>"
        else:
            exact = f"{unit.numerator_cents}/{unit.denominator} cents"
            per_result = f"<strong>${_escape(unit.display_usd)}</strong> <small>(exact: {_escape(exact)})</small>"
        rows.append(
            [
                str(row.line),
                _escape(row.date),
                f"{_escape(quote.entry.gpu_name)} (<code>{_escape(row.gpu)}</code>)"
                + (f"<br><small>&#9888; {_escape(row.gpu_mismatch)}</small>" if row.gpu_mismatch else ""),
                str(row.days),
                f"{quote.lots:,} &times; {quote.entry.gpus_per_lot} = {quote.total_gpus:,} GPUs",
                f"{quote.total_cents:,} cents (${_rounded(quote.total_usd)})",
                f"{row.units_accepted_distinct:,} / {row.units_attempted:,} {_escape(row.work_unit)}",
                f"{_escape(row.quality_metric)} {_escape(row.observed_value)} "
                f"<small>(threshold {_escape(row.acceptance_threshold)})</small>",
                per_result,
            ]
        )
    header = ["line", "date", "GPU", "days", "lots", "package", "accepted / attempted", "quality",
              "per accepted result"]
    summary = (
        f"<p><code>{_escape(report.table_path)}</code>: {len(report.rows)} "
        f"row{'' if len(report.rows) == 1 else 's'}; prices from "
        f"<code>{_escape(report.catalog_path)}</code>.</p>"
    )
    # The core's own caveats (prices as labelled, not an offer, repeats, rounding).
    notes = report.to_dict()["caveats"]
    return _section("Cost per accepted result", summary + _table(header, rows), notes)


def environment_html(report):
    rows = [
        ["iteragpu", f"{_escape(report.iteragpu_version)} <small>({_escape(report.iteragpu_build)})</small>"],
        ["system", _escape(
            f"{report.os_name} {report.kernel_release} {report.architecture}"
            + (f", {report.os_distribution}" if report.os_distribution else "")
            + f", {report.libc}"
        )],
    ]
    if report.backend_available:
        rows.append(["LibTorch backend", f"loaded from <code>{_escape(report.backend_path)}</code>"])
    else:
        rows.append(["LibTorch backend", f"<strong>not available</strong>: {_escape(report.backend_error)}"])
    stack = report.stack
    gpus_html = ""
    if stack is not None:
        rows += [
            ["LibTorch", _escape(stack.torch_version)],
            ["CUDA (LibTorch built with; not the driver)", _escape(stack.cuda_build_version or "none")],
            ["HIP (ROCm build)", _escape(stack.hip_build_version or "none")],
            ["cuDNN", _escape(stack.cudnn_version or "none")],
            ["GPU runtime available", "yes" if stack.gpu_runtime_available else "<strong>no</strong>"],
        ]
        if stack.gpus:
            gpus_html = _table(
                ["index", "name", "compute capability", "memory", "multiprocessors"],
                [
                    [
                        str(gpu.index),
                        _escape(gpu.name),
                        f"{gpu.compute_capability_major}.{gpu.compute_capability_minor}",
                        _bytes_cell(gpu.total_memory_bytes),
                        str(gpu.multiprocessors),
                    ]
                    for gpu in stack.gpus
                ],
            )
    selected = _escape(report.selected_device) + ("" if report.selected_present else " (not present)")
    if stack is not None and stack.selected_free_bytes is not None:
        selected += (
            f": free {_bytes_cell(stack.selected_free_bytes)} of "
            f"{_bytes_cell(stack.selected_total_bytes)} (as the runtime reports)"
        )
    rows.append(["selected device", selected])
    if report.nvidia_driver_version:
        rows.append(
            ["NVIDIA driver", f"{_escape(report.nvidia_driver_version)} <small>(from {_escape(report.nvidia_driver_source)})</small>"]
        )
    return _section("Environment", _table(None, rows) + gpus_html)


def _row_label(row):
    return f"{row.phase} #{row.repeat}" if row.repeat else row.phase


def measurement_html(measurement):
    config = measurement.configuration
    model = measurement.model
    gpu_name = ""
    stack = measurement.environment.stack
    if stack is not None:
        names = [gpu.name for gpu in stack.gpus if gpu.index == measurement.environment.selected_index]
        gpu_name = f" ({_escape(names[0])})" if names else ""
    if measurement.environment.from_test_double:
        gpu_name += f" <strong>{_escape(_TEST_DOUBLE_MARK)}</strong>"
    summary = (
        f"<p>{_escape(config.device)}{gpu_name}: Linear({model.width}&rarr;{model.hidden}) &rarr; GELU "
        f"&rarr; Linear({model.hidden}&rarr;{model.width}), input [{model.batch}, {model.context}, "
        f"{model.width}] {_escape(model.dtype)}; {model.parameter_count:,} parameters "
        f"({_bytes_cell(model.parameter_bytes)} bytes); warmup {config.warmup}, "
        f"repeats {config.repeats}.</p>"
    )
    rows = [
        [
            _escape(_row_label(row)),
            str(row.forwards),
            f"{row.host_seconds:.6f}",
            "&ndash;" if row.gpu_event_seconds is None else f"{row.gpu_event_seconds:.6f}",
            _bytes_cell(row.baseline.allocated_bytes),
            _bytes_cell(row.end.allocated_bytes),
            _bytes_cell(row.end.peak_allocated_bytes),
            _bytes_cell(row.baseline.reserved_bytes),
            _bytes_cell(row.end.reserved_bytes),
            _bytes_cell(row.end.peak_reserved_bytes),
        ]
        for row in measurement.phases
    ]
    header = [
        "phase", "forwards", "host s", "GPU event s",
        "allocated: baseline", "end", "peak",
        "reserved: baseline", "end", "peak",
    ]
    notes = [
        "Counters: this process's caching allocator on the selected GPU only.",
        "Allocated is part of reserved (never add them); the two peaks are separate maxima "
        "(never subtract them).",
        "Host times include overhead and synchronization; they are not kernel time.",
    ]
    if config.output:
        notes.append(f"Saved to {config.output}.")
    return _section("Measurement", summary + _table(header, rows) + _timing_section(measurement.timing)
                    + _prediction_comparison(measurement), notes)


def summary_html(summary):
    config = summary.configuration
    rows = []
    for outcome in summary.devices:
        figures = outcome.figures
        rows.append([
            _escape(outcome.device),
            "ok" if outcome.ok else "failed",
            str(outcome.exit_code),
            _escape(figures.gpu_name) if figures else "-",
            f"{figures.warm_forward_host_seconds_median:.6f}" if figures else "-",
            _bytes_cell(figures.peak_allocated_bytes_max) if figures else "-",
            _escape(outcome.result_file or "-"),
            _escape(outcome.error),
        ])
    state = "complete" if summary.complete else ("interrupted" if summary.interrupted else "incomplete")
    content = (
        f"<p>{len(summary.devices)} GPU(s) at the same time, one worker each: batch {config.batch}, "
        f"context {config.context}, width {config.width}, hidden {config.hidden}, {_escape(config.dtype)}; "
        f"{state}.</p>"
        + _table(["device", "status", "exit", "GPU", "warm fwd host s (median)", "peak allocated max",
                  "result file", "error"], rows)
    )
    return _section("Measurement summary", content)


def sweep_html(result):
    rows = []
    for point in result.points_by_value:
        rows.append([
            f"{point.value:,}",
            _escape(point.outcome),
            _bytes_cell(point.peak_reserved_bytes),
            _bytes_cell(point.predicted_peak_reserved_bytes),
            str(result.points.index(next(p for p in result.points if p.value == point.value)) + 1),
        ])
    if result.largest_fitting is not None:
        verdict = f"Largest {_escape(result.vary)} under the budget: <b>{result.largest_fitting:,}</b>"
        if result.smallest_not_fitting is not None:
            verdict += f"; {result.smallest_not_fitting:,} does not fit (measured)"
    else:
        verdict = f"No {_escape(result.vary)} fits under the budget"
    content = (
        f"<p>{_escape(result.start.device)} ({_escape(result.gpu_name)}), {_escape(result.start.dtype)}: budget "
        f"{_escape(result.budget)} = {_bytes_cell(result.budget_bytes)}. {verdict}. "
        f"{result.measurements} measurements, each in its own worker process.</p>"
        + _table([result.vary, "outcome", "peak reserved", "predicted", "order"], rows)
    )
    return _section("Memory sweep", content)


def plot_sweep(result):
    """Peak reserved memory against the varied dimension, with the budget line."""
    import matplotlib.pyplot as plt  # only here: import iteragpu stays light

    points = [p for p in result.points_by_value if p.peak_reserved_bytes is not None]
    figure, axes = plt.subplots(figsize=(7, 4))
    for fits, colour, label in ((True, "tab:green", "fits"), (False, "tab:red", "over budget")):
        chosen = [p for p in points if p.fits == fits]
        axes.scatter([p.value for p in chosen], [p.peak_reserved_bytes / _MIB for p in chosen],
                     color=colour, label=label, zorder=3)
    failed = [p for p in result.points if p.peak_reserved_bytes is None]
    if failed:
        axes.scatter([p.value for p in failed], [result.budget_bytes / _MIB] * len(failed), marker="x",
                     color="black", label="out of memory / beyond bounds", zorder=3)
    axes.axhline(result.budget_bytes / _MIB, color="tab:blue", linestyle="--",
                 label=f"budget {result.budget}")
    axes.set_xscale("log", base=2)
    axes.set_xlabel(result.vary)
    axes.set_ylabel("peak reserved (MiB)")
    axes.set_title(f"{result.start.device} {result.gpu_name}: largest {result.vary} = {result.largest_fitting}")
    axes.legend()
    figure.tight_layout()
    return figure


def _timing_section(timing):
    """The warm repeats' spread, a row per clock, then the warnings."""
    def row(clock, spread):
        return [_escape(clock)] + [f"{value * 1e6:,.1f}" for value in (
            spread.median, spread.iqr, spread.min, spread.max, spread.mean, spread.stdev)] + [
            f"{spread.cv * 100:.1f} %"]
    rows = [row("host", timing.host_seconds)]
    if timing.gpu_event_seconds is not None:
        rows.append(row("GPU event", timing.gpu_event_seconds))
    header = ["clock", "median µs", "IQR µs", "min µs", "max µs", "mean µs", "stdev µs", "CV"]
    warnings = "".join(f"<li>warning ({_escape(w.code)}, {_escape(w.clock)}): {_escape(w.message)}</li>"
                       for w in timing.warnings) or "<li>no timing warnings</li>"
    return (f"<p>Warm repeats: {timing.warm_repeats}</p>" + _table(header, rows)
            + f"<ul>{warnings}</ul>")


_COUNTERS = (  # (label, which counters, attribute)
    ("allocated at baseline", "baseline", "allocated_bytes"),
    ("allocated at end", "end", "allocated_bytes"),
    ("reserved at baseline", "baseline", "reserved_bytes"),
    ("reserved at end", "end", "reserved_bytes"),
    ("peak allocated", "end", "peak_allocated_bytes"),
    ("peak reserved", "end", "peak_reserved_bytes"),
)


def _prediction_comparison(measurement):
    """The prediction beside the measured rows: how many counters it got, and each miss."""
    if measurement.prediction is None:
        return "<p>Prediction: none (the allocator rules describe CUDA builds only).</p>"
    target = measurement.prediction.target
    total = 6 * len(measurement.phases)
    misses = []
    for index, row in enumerate(measurement.phases):
        predicted = measurement.predicted_row(index)
        if predicted is None:
            continue
        for label, which, attribute in _COUNTERS:
            measured = getattr(getattr(row, which), attribute)
            expected = getattr(getattr(predicted, which), attribute)
            if measured != expected:
                misses.append([_escape(_row_label(row)), _escape(label), _bytes_cell(measured),
                               _bytes_cell(expected), f"{measured - expected:+,}"])
    text = (f"<p>Prediction (made before the GPU was touched; workspaces "
            f"{_escape(target.workspace_source)}): {measurement.exact_predicted_counters} of "
            f"{total} counters exact.</p>")
    if misses:
        text += _table(["phase", "counter", "measured", "predicted", "difference"], misses)
    for caveat in measurement.prediction.caveats:
        text += f"<p>Caveat: {_escape(caveat)}</p>"
    return text


def prediction_html(prediction):
    model = prediction.model
    target = prediction.target
    gpu = f"{_escape(target.gpu_name)}, " if target.gpu_name else ""
    summary = (
        f"<p>Linear({model.width}&rarr;{model.hidden}) &rarr; GELU &rarr; "
        f"Linear({model.hidden}&rarr;{model.width}), input [{model.batch}, {model.context}, "
        f"{model.width}] {_escape(model.dtype)}, on {gpu}compute capability "
        f"{target.compute_capability_major}.{target.compute_capability_minor}: cuBLAS workspace "
        f"{_bytes_cell(target.cublas_workspace_bytes)}, cuBLASLt workspace "
        f"{_bytes_cell(target.cublaslt_workspace_bytes)}"
        f"{'' if prediction.cublaslt_used else ' (not used)'} "
        f"({_escape(target.workspace_source)}).</p>"
    )
    rows = [
        [
            _escape(_row_label(row)),
            _bytes_cell(row.baseline.allocated_bytes),
            _bytes_cell(row.end.allocated_bytes),
            _bytes_cell(row.end.peak_allocated_bytes),
            _bytes_cell(row.baseline.reserved_bytes),
            _bytes_cell(row.end.reserved_bytes),
            _bytes_cell(row.end.peak_reserved_bytes),
        ]
        for row in prediction.phases
    ]
    header = ["phase", "allocated: baseline", "end", "peak", "reserved: baseline", "end", "peak"]
    notes = [
        "Predicted counters of this process's caching allocator on one GPU, from PyTorch's "
        "rules, before any GPU is touched; not the CUDA context or other processes.",
    ] + [f"Caveat: {caveat}" for caveat in prediction.caveats]
    return _section("Predicted memory", summary + _table(header, rows), notes)


def _compared_cell(value, unit):
    """One measurement's value of one compared figure, as the text report shows it."""
    if value is None:
        return "&ndash;"
    if unit == "bytes":
        return _bytes_cell(value)
    if unit == "seconds":
        return f"{value * 1e6:,.1f} µs"
    if unit == "fraction":
        return f"{value * 100:.1f} %"
    if isinstance(value, int):
        return f"{value:,}"
    return _escape(value)


def _ratio_cell(ratio):
    if ratio is None:
        return "&ndash;"
    return f"&times;{ratio:.3f}" if ratio >= 0.1 or ratio == 0 else f"&times;{ratio:.3g}"


def comparison_html(comparison):
    count = len(comparison.measurements)
    tags = [f"[{index + 1}]" for index in range(count)]
    sources = "".join(
        f"<li>{tag} <code>{_escape(source)}</code></li>" for tag, source in zip(tags, comparison.sources)
    )
    findings = "".join(f"<li>{_escape(finding)}</li>" for finding in comparison.findings)
    content = f"<ul>{sources}</ul><p><strong>Findings</strong></p><ul>{findings}</ul>"
    for section in comparison.sections:
        rows = section.rows
        shared = ""
        if section.name == "environment":
            # Only the fields that differ get a row; the shared ones are listed in one line.
            shared = "; ".join(
                f"{_escape(row.label)} {_compared_cell(row.values[0], row.unit)}" for row in rows if row.same
            )
            rows = [row for row in rows if not row.same]
        with_ratios = any(row.ratios is not None for row in rows)
        header = [""] + tags + ([f"{tag}/[1]" for tag in tags[1:]] if with_ratios else [])
        body = []
        for row in rows:
            label = _escape(row.label)
            cells = [label if row.same else f"<strong>&ne; {label}</strong>"]
            cells += [_compared_cell(value, row.unit) for value in row.values]
            if with_ratios:
                cells += [""] * (count - 1) if row.ratios is None else [_ratio_cell(r) for r in row.ratios[1:]]
            body.append(cells)
        content += f"<p><strong>{_escape(section.title)}</strong></p>"
        if body:
            content += _table(header, body)
        if shared:
            content += f"<p><small>The same in every measurement: {shared}.</small></p>"
    notes = ["≠ marks a figure that is not the same in every measurement."]
    return _section(f"Comparison of {count} measurements (ratios are to [1])", content,
                    notes + comparison.to_dict()["notes"])


def plot_measurement(measurement):
    """Memory (allocated and reserved: baseline, end, peak) and host time per phase row, then
    the warm repeats one by one with their median, spread and warnings."""
    import matplotlib.pyplot as plt  # only here: import iteragpu stays light

    rows = measurement.phases
    labels = [_row_label(row) for row in rows]
    positions = range(len(rows))
    figure, (allocated_axes, reserved_axes, time_axes, spread_axes) = plt.subplots(
        4, 1, figsize=(9, 10.5), constrained_layout=True
    )
    width = 0.27
    for axes, kind in ((allocated_axes, "allocated"), (reserved_axes, "reserved")):
        series = (
            ("baseline", [getattr(row.baseline, f"{kind}_bytes") / _MIB for row in rows]),
            ("end", [getattr(row.end, f"{kind}_bytes") / _MIB for row in rows]),
            ("peak", [getattr(row.end, f"peak_{kind}_bytes") / _MIB for row in rows]),
        )
        for offset, (name, values) in zip((-width, 0, width), series):
            axes.bar([p + offset for p in positions], values, width, label=name)
        axes.set_ylabel(f"{kind} (MiB)")
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
        axes.grid(axis="y", alpha=0.3)
        axes.set_xticks(list(positions))
        axes.set_xticklabels([])
    time_axes.bar(positions, [row.host_seconds * 1000 for row in rows], 0.5, label="host (wall clock)")
    if any(row.gpu_event_seconds is not None for row in rows):
        time_axes.plot(
            positions,
            [float("nan") if row.gpu_event_seconds is None else row.gpu_event_seconds * 1000 for row in rows],
            "o", color="black", label="GPU events",
        )
    time_axes.set_ylabel("time (ms)")
    time_axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    time_axes.grid(axis="y", alpha=0.3)
    time_axes.set_xticks(list(positions))
    time_axes.set_xticklabels(labels, rotation=30, ha="right")
    _plot_warm_spread(spread_axes, measurement)
    config = measurement.configuration
    figure.suptitle(
        f"{config.device}: batch {config.batch}, context {config.context}, width {config.width}, "
        f"{config.dtype} (this process's allocator only)"
        + (f"\n{_TEST_DOUBLE_MARK}" if measurement.environment.from_test_double else "")
    )
    return figure


def _plot_warm_spread(axes, measurement):
    """Each warm repeat's host and GPU event time, the medians and the min-max range."""
    warm = [row for row in measurement.phases if row.phase == "warm_forward"]
    timing = measurement.timing
    repeats = [row.repeat for row in warm]
    series = [("host", [row.host_seconds for row in warm], timing.host_seconds, "tab:blue")]
    if timing.gpu_event_seconds is not None:
        series.append(("GPU events", [row.gpu_event_seconds for row in warm], timing.gpu_event_seconds,
                       "black"))
    for name, seconds, spread, color in series:
        axes.plot(repeats, [value * 1e6 for value in seconds], "o-", color=color, markersize=3,
                  label=f"{name}: median {spread.median * 1e6:.1f} µs, IQR {spread.iqr * 1e6:.1f}, "
                        f"CV {spread.cv * 100:.1f} %")
        axes.axhline(spread.median * 1e6, color=color, linestyle="--", linewidth=0.8)
        axes.axhspan(spread.min * 1e6, spread.max * 1e6, color=color, alpha=0.08)
    axes.set_xlabel("warm repeat")
    axes.set_ylabel("time (µs)")
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    warnings = [f"{warning.code} ({warning.clock})" for warning in timing.warnings]
    axes.set_title("warnings: " + ", ".join(warnings) if warnings else "no timing warnings",
                   fontsize="small", color="tab:red" if warnings else "black")



def _may_use_escape_codes(stream):
    """The CLI's rule for a Python stream: a terminal, NO_COLOR unset, TERM not dumb."""
    from ._iteragpu import _may_use_escape_codes as allowed

    try:
        return stream is not None and stream.isatty() and allowed(stream.fileno())
    except (AttributeError, OSError, ValueError):  # a stream without a file descriptor
        return False


class ProgressLine:
    """A one-line progress display: an updated output in Jupyter, a rewritten line on a
    terminal. No dependency beyond IPython, which a Jupyter kernel already has."""

    def __init__(self, device, write, shown_at_start):
        self._device = device
        self._write = write
        # Something is on screen that does not yet say how the measurement ended.
        self._open = shown_at_start

    @classmethod
    def for_current_output(cls, device):
        """A ProgressLine for this kernel or terminal, or None where nobody would see it."""
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        if shell is not None and getattr(shell, "kernel", None) is not None:
            from IPython.display import display

            handle = display({"text/plain": f"iteragpu: measuring on {device}..."}, raw=True, display_id=True)

            def write(text, final=False):
                handle.update({"text/plain": text}, raw=True)

            return cls(device, write, shown_at_start=True)
        stream = sys.stderr
        if _may_use_escape_codes(stream):
            def write(text, final=False):
                stream.write("\r\033[K" + text + ("\n" if final else ""))
                stream.flush()

            return cls(device, write, shown_at_start=False)
        return None

    def __call__(self, row, rows_done, rows_total):
        text = (
            f"iteragpu: {self._device} {rows_done}/{rows_total} {_row_label(row)}: "
            f"{row.host_seconds:.4f} s, peak allocated {_rounded(decimal.Decimal(row.end.peak_allocated_bytes) / _MIB)} MiB"
        )
        final = rows_done == rows_total
        self._write(text, final=final)
        self._open = not final

    def close(self):
        """Ends the line when the measurement stopped before its last row."""
        if self._open:
            self._write(f"iteragpu: {self._device}: the measurement did not complete; nothing was written",
                        final=True)
            self._open = False


class SweepProgressLine(ProgressLine):
    """The progress line of a sweep: the rows of the point being measured, then each point."""

    def point(self, point, measurements):
        peak = point.peak_reserved_bytes
        peak_text = f", peak reserved {_rounded(decimal.Decimal(peak) / _MIB)} MiB" if peak is not None else ""
        self._write(f"iteragpu: {self._device} point {measurements}: {point.value} {point.outcome}{peak_text}")
        self._open = True

    def close(self):
        if self._open:
            self._write(f"iteragpu: {self._device}: sweep ended", final=True)
            self._open = False
