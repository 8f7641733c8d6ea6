"""The view of one measurement: its phase rows, the warm repeats' timing, the prediction
beside what was measured, and a plot of the phases (matplotlib, imported on use)."""

from .._iteragpu import _test_double_mark as _TEST_DOUBLE_MARK  # iteragpu::kTestDoubleMark
from .cells import (ALLOCATOR_COUNTER_HEADER, MIB, allocator_counter_cells, bytes_cell, bytes_text,
                    close_figure, escape, html_section, html_table, row_label)


def measurement_html(measurement):
    config = measurement.configuration
    model = measurement.model
    gpu_name = ""
    stack = measurement.environment.stack
    if stack is not None:
        names = [gpu.name for gpu in stack.gpus if gpu.index == measurement.environment.selected_index]
        gpu_name = f" ({escape(names[0])})" if names else ""
    if measurement.environment.from_test_double:
        gpu_name += f" <strong>{escape(_TEST_DOUBLE_MARK)}</strong>"
    if measurement.checkpoint is not None:
        summary = _checkpoint_summary(measurement, gpu_name)
    else:
        summary = (
            f"<p>{escape(config.device)}{gpu_name}: {escape(measurement.heading)}; "
            f"{model.parameter_count:,} parameters ({bytes_text(model.parameter_bytes)}); "
            f"warmup {config.warmup}, repeats {config.repeats}.</p>"
        )
    rows = [
        [
            escape(row_label(row)),
            str(row.forwards),
            f"{row.host_seconds:.6f}",
            "&ndash;" if row.gpu_event_seconds is None else f"{row.gpu_event_seconds:.6f}",
        ]
        + allocator_counter_cells(row)
        for row in measurement.phases
    ]
    header = ["phase", "forwards", "host s", "GPU event s"] + ALLOCATOR_COUNTER_HEADER
    notes = [
        "Counters: this process's caching allocator on the selected GPU only.",
        "Allocated is part of reserved (never add them); the two peaks are separate maxima "
        "(never subtract them).",
        "Host times include overhead and synchronization; they are not kernel time.",
    ]
    if config.output:
        notes.append(f"Saved to {config.output}.")
    return html_section("Measurement", summary + html_table(header, rows) + _timing_section(measurement.timing)
                        + _decoder_run_section(measurement.decoder_run) + _prediction_comparison(measurement), notes)


def _checkpoint_summary(measurement, gpu_name):
    """The checkpoint run: its architecture, input and sequences."""
    config, record = measurement.configuration, measurement.checkpoint
    a = record.architecture
    return (
        f"<p>{escape(config.device)}{gpu_name}: {escape(a.architecture)} ({a.layers} layers, hidden "
        f"{a.hidden_size:,}, {a.attention_heads} query / {a.kv_heads} KV heads of {a.head_dim}, MLP "
        f"{a.intermediate_size:,}, vocabulary {a.vocab_size:,}) from {escape(record.directory)}, "
        f"{escape(config.dtype)}; {record.parameter_count:,} parameters ({bytes_text(record.parameter_bytes)} "
        f"in the files); token ids [{config.batch}, {config.context}], {config.new_tokens} decode steps "
        f"per sequence; warm-up sequences {config.warmup}, warm sequences {config.repeats}.</p>"
    )


def _decoder_run_section(run):
    """Rates from the warm sequences, and what the card held besides the allocator's counters."""
    if run is None:
        return ""
    items = [f"attention (SDPA backend chosen): {escape(run.attention_backend)}"]
    if run.time_to_first_token_seconds is not None:
        items.append(f"time to first token (warm prefill, host median): {run.time_to_first_token_seconds:.6f} s")
    if run.prefill_tokens_per_second is not None:
        items.append(f"prefill: {run.prefill_tokens_per_second:,.1f} tokens/s")
    if run.decode_tokens_per_second is not None:
        items.append(f"decode: {run.decode_tokens_per_second:,.1f} tokens/s")
    if run.device_used_bytes is not None:
        items.append(f"device memory in use at the end (cudaMemGetInfo, CUDA context and libraries included, "
                     f"not the allocator's counter): {bytes_text(run.device_used_bytes)}")
    items.append("first sequence's tokens (batch row 0): " + " ".join(str(t) for t in run.first_sequence_tokens))
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


def _timing_section(timing):
    """The warm repeats' spread, a row per clock, then the warnings."""
    def row(clock, spread):
        return [escape(clock)] + [f"{value * 1e6:,.1f}" for value in (
            spread.median, spread.iqr, spread.min, spread.max, spread.mean, spread.stdev)] + [
            f"{spread.cv * 100:.1f} %"]
    rows = [row("host", timing.host_seconds)]
    if timing.gpu_event_seconds is not None:
        rows.append(row("GPU event", timing.gpu_event_seconds))
    header = ["clock", "median µs", "IQR µs", "min µs", "max µs", "mean µs", "stdev µs", "CV"]
    warnings = "".join(f"<li>warning ({escape(w.code)}, {escape(w.clock)}): {escape(w.message)}</li>"
                       for w in timing.warnings) or "<li>no timing warnings</li>"
    return (f"<p>Warm repeats: {timing.warm_repeats}</p>" + html_table(header, rows)
            + f"<ul>{warnings}</ul>")


def timing_html(timing):
    """The view of a TimingSummary (``measurement.timing``) on its own."""
    notes = [
        "Warm repeats only: warm-up forwards and the first forward are not in these statistics.",
        "IQR: third quartile minus first; stdev: sample standard deviation; CV: stdev / mean.",
        "Host times include overhead and synchronization; they are not kernel time.",
    ]
    return html_section("Timing of the warm repeats", _timing_section(timing), notes)


_COUNTERS = (  # (label, which counters, attribute), in the order misses are listed
    ("allocated at baseline", "baseline", "allocated_bytes"),
    ("allocated at end", "end", "allocated_bytes"),
    ("reserved at baseline", "baseline", "reserved_bytes"),
    ("reserved at end", "end", "reserved_bytes"),
    ("peak allocated", "end", "peak_allocated_bytes"),
    ("peak reserved", "end", "peak_reserved_bytes"),
)


def _prediction_comparison(measurement):
    """The prediction beside the measured rows: how many counters it got, and each miss."""
    if measurement.prediction is None and measurement.checkpoint is not None:
        return ("<p>Prediction: none recorded for this checkpoint run (a file written before "
                "measure --model recorded its prediction, or a checkpoint the predictor does not model).</p>")
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
                misses.append([escape(row_label(row)), escape(label), bytes_cell(measured),
                               bytes_cell(expected), f"{measured - expected:+,}"])
    text = (f"<p>Prediction (made before the GPU was touched; workspaces "
            f"{escape(target.workspace_source)}): {measurement.exact_predicted_counters} of "
            f"{total} counters exact.</p>")
    if misses:
        text += html_table(["phase", "counter", "measured", "predicted", "difference"], misses)
    for caveat in measurement.prediction.caveats:
        text += f"<p>Caveat: {escape(caveat)}</p>"
    return text


def plot_measurement(measurement):
    """Memory (allocated and reserved: baseline, end, peak) and host time per phase row, then
    the warm repeats one by one with their median, spread and warnings."""
    import matplotlib.pyplot as plt  # only here: import iteragpu stays light

    rows = measurement.phases
    labels = [row_label(row) for row in rows]
    positions = range(len(rows))
    figure, (allocated_axes, reserved_axes, time_axes, spread_axes) = plt.subplots(
        4, 1, figsize=(9, 10.5), constrained_layout=True
    )
    width = 0.27
    for axes, kind in ((allocated_axes, "allocated"), (reserved_axes, "reserved")):
        series = (
            ("baseline", [getattr(row.baseline, f"{kind}_bytes") / MIB for row in rows]),
            ("end", [getattr(row.end, f"{kind}_bytes") / MIB for row in rows]),
            ("peak", [getattr(row.end, f"peak_{kind}_bytes") / MIB for row in rows]),
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
    # Log scale: a warm forward (µs) stays visible beside the model's load (100 ms and more).
    time_axes.set_yscale("log")
    time_axes.set_ylabel("time (ms, log scale)")
    time_axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    time_axes.grid(axis="y", which="both", alpha=0.3)
    # A checkpoint has a row per decode step: label the loads and each sequence's prefill only.
    shown = [i for i, row in enumerate(rows) if not getattr(row, "sequence", "") or row.phase == "prefill"] \
        if measurement.checkpoint is not None else list(positions)
    time_axes.set_xticks([positions[i] for i in shown])
    time_axes.set_xticklabels([labels[i] for i in shown], rotation=30, ha="right")
    _plot_warm_spread(spread_axes, measurement)
    config = measurement.configuration
    shape = (f"{measurement.checkpoint.architecture.architecture}, batch {config.batch}, context {config.context}, "
             f"{config.new_tokens} new tokens" if measurement.checkpoint is not None else
             f"batch {config.batch}, context {config.context}, width {config.width}")
    figure.suptitle(
        f"{config.device}: {shape}, {config.dtype} (this process's allocator only)"
        + (f"\n{_TEST_DOUBLE_MARK}" if measurement.environment.from_test_double else "")
    )
    return close_figure(figure)


def _plot_warm_spread(axes, measurement):
    """Each warm repeat's host and GPU event time, the medians and the min-max range."""
    # The synthetic MLP's warm forwards; a checkpoint's warm decode steps, numbered in order.
    warm = [row for row in measurement.phases
            if row.phase == "warm_forward" or (getattr(row, "sequence", "") == "warm" and row.phase == "decode")]
    timing = measurement.timing
    repeats = [row.repeat for row in warm] if measurement.checkpoint is None else list(range(1, len(warm) + 1))
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
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # repeats are whole: 1, 2, 3, not 1.5
    axes.set_xlabel("warm repeat" if measurement.checkpoint is None else "warm decode step")
    axes.set_ylabel("time (µs)")
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    warnings = [f"{warning.code} ({warning.clock})" for warning in timing.warnings]
    axes.set_title("warnings: " + ", ".join(warnings) if warnings else "no timing warnings",
                   fontsize="small", color="tab:red" if warnings else "black")
