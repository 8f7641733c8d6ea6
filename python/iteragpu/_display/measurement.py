"""The view of one measurement: its phase rows, the warm repeats' timing, the prediction
beside what was measured, and a plot of the phases (matplotlib, imported on use)."""

from .._iteragpu import _test_double_mark as _TEST_DOUBLE_MARK  # iteragpu::kTestDoubleMark
from .cells import (ALLOCATOR_COUNTER_HEADER, GIB, MIB, allocator_counter_cells, bytes_cell, bytes_text,
                    close_figure, escape, gib, gib_cell, html_section, html_table, pyplot, row_label)


def _gpu_name(measurement):
    """" (NVIDIA H200)" after the device, and the test double's mark where it ran on one."""
    gpu_name = ""
    stack = measurement.environment.stack
    if stack is not None:
        names = [gpu.name for gpu in stack.gpus if gpu.index == measurement.environment.selected_index]
        gpu_name = f" ({escape(names[0])})" if names else ""
    if measurement.environment.from_test_double:
        gpu_name += f" <strong>{escape(_TEST_DOUBLE_MARK)}</strong>"
    return gpu_name


_NOTES = [
    "Counters: this process's caching allocator on the selected GPU only.",
    "Allocated is part of reserved (never add them); the two peaks are separate maxima "
    "(never subtract them).",
    "Host times include overhead and synchronization; they are not kernel time.",
]


def measurement_html(measurement):
    if measurement.checkpoint is not None:
        return checkpoint_measurement_html(measurement)
    config = measurement.configuration
    model = measurement.model
    summary = (
        f"<p>{escape(config.device)}{_gpu_name(measurement)}: {escape(measurement.heading)}; "
        f"{model.parameter_count:,} parameters ({bytes_text(model.parameter_bytes)}); "
        f"warmup {config.warmup}, repeats {config.repeats}.</p>"
    )
    rows = [
        [
            escape(row_label(row)),
            str(row.forwards),
            f"{row.host_seconds * 1000:.3f}",
            "&ndash;" if row.gpu_event_seconds is None else f"{row.gpu_event_seconds * 1000:.3f}",
        ]
        + allocator_counter_cells(row)
        for row in measurement.phases
    ]
    header = ["phase", "forwards", "host ms", "GPU event ms"] + ALLOCATOR_COUNTER_HEADER
    notes = list(_NOTES)
    if config.output:
        notes.append(f"Saved to {config.output}.")
    return html_section("Measurement", summary + html_table(header, rows) + _timing_section(measurement.timing)
                        + _prediction_comparison(measurement), notes)


# --- A checkpoint's generation: a summary first, then the rows folded by sequence. ---

_SEQUENCE_NAMES = {"cold": "cold sequence", "warmup": "warm-up sequence", "warm": "warm sequence"}


def sequences(measurement):
    """The phase rows grouped as they ran: [(name, rows)], "loading" (weights and inputs)
    first, then each sequence ("cold sequence", "warm-up sequence 1", "warm sequence 2")."""
    groups = []
    for row in measurement.phases:
        sequence = getattr(row, "sequence", "")
        if not sequence:
            name = "loading"
        else:
            name = _SEQUENCE_NAMES.get(sequence, f"{sequence} sequence") + (f" {row.repeat}" if row.repeat else "")
        if not groups or groups[-1][0] != name:
            groups.append((name, []))
        groups[-1][1].append(row)
    return groups


def _milliseconds(seconds):
    return "&ndash;" if seconds is None else f"{seconds * 1000:,.2f}"


def _median(values):
    values = sorted(values)
    if not values:
        return None
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _step_name(row):
    if not getattr(row, "sequence", ""):
        return {"weights_load": "weights load", "inputs": "inputs"}.get(row.phase, row.phase)
    return "prefill" if row.phase == "prefill" else f"{row.phase} {row.step}"


def _sequence_details(name, rows, open_it):
    """One sequence as a <details>: its line (prefill time, decode median, peaks), its steps inside."""
    prefill = [row for row in rows if row.phase == "prefill"]
    decode = [row for row in rows if row.phase == "decode"]
    facts = []
    if prefill:
        facts.append(f"prefill {_milliseconds(prefill[0].host_seconds)} ms")
    if decode:
        facts.append(f"{len(decode)} decode steps, median {_milliseconds(_median([r.host_seconds for r in decode]))} ms "
                     "a step (host)")
    if not prefill and not decode:
        facts.append(", ".join(f"{_step_name(row)} {_milliseconds(row.host_seconds)} ms" for row in rows))
    facts.append(f"peak reserved {gib(max(row.end.peak_reserved_bytes for row in rows))} GiB")
    facts.append(f"allocated at the end {gib(rows[-1].end.allocated_bytes)} GiB")
    table_rows = [
        [
            f"<span title='{escape(row_label(row))}'>{escape(_step_name(row))}</span>",  # the full name on hover
            _milliseconds(row.host_seconds),
            _milliseconds(row.gpu_event_seconds),
            gib_cell(row.end.allocated_bytes),
            f"{(row.end.allocated_bytes - row.baseline.allocated_bytes) / MIB:+,.2f}",
            gib_cell(row.end.peak_allocated_bytes),
            gib_cell(row.end.reserved_bytes),
            gib_cell(row.end.peak_reserved_bytes),
        ]
        for row in rows
    ]
    header = ["step", "host ms", "GPU event ms", "allocated at end", "allocated change MiB", "peak allocated",
              "reserved at end", "peak reserved"]
    return (f"<details{' open' if open_it else ''}><summary><b>{escape(name)}</b>: {escape('; '.join(facts))}"
            f"</summary>{html_table(header, table_rows)}</details>")


def _summary_table(measurement):
    """What ran and what it gave, one line a figure: the peaks, the footprint, the rates."""
    config, record, run = measurement.configuration, measurement.checkpoint, measurement.decoder_run
    a = record.architecture
    phases = measurement.phases
    peak_row = max(phases, key=lambda row: row.end.peak_reserved_bytes)
    peak_allocated_row = max(phases, key=lambda row: row.end.peak_allocated_bytes)
    groups = [name for name, _ in sequences(measurement) if name != "loading"]
    decode_steps = sum(1 for row in phases if row.phase == "decode" and getattr(row, "sequence", "") == "cold")
    rows = [
        ["model", f"{escape(a.architecture)} ({a.layers} layers, hidden {a.hidden_size:,}, {a.attention_heads} query / "
                  f"{a.kv_heads} KV heads of {a.head_dim}, MLP {a.intermediate_size:,}, vocabulary {a.vocab_size:,}); "
                  f"{record.parameter_count:,} parameters, {gib_cell(record.parameter_bytes)} in the files; "
                  f"<code>{escape(record.directory)}</code>"],
        ["ran", f"batch {config.batch} &times; context {config.context:,} token ids, {config.new_tokens} new tokens "
                f"a sequence, {escape(config.dtype)}, on {escape(config.device)}{_gpu_name(measurement)}"],
        ["sequences", f"{len(groups)}: 1 cold, {config.warmup} warm-up, {config.repeats} warm; each a prefill then "
                      f"{decode_steps or config.new_tokens} decode steps"],
        ["peak reserved", f"<strong>{gib_cell(peak_row.end.peak_reserved_bytes)}</strong> "
                          f"(in {escape(row_label(peak_row))})"],
        ["peak allocated", f"{gib_cell(peak_allocated_row.end.peak_allocated_bytes)} "
                           f"(in {escape(row_label(peak_allocated_row))})"],
    ]
    if run is not None:
        if run.device_used_bytes is not None:
            rows.append(["process footprint", f"{gib_cell(run.device_used_bytes)}: device memory in use at the end "
                                              "(cudaMemGetInfo: CUDA context and libraries included)"])
        if run.time_to_first_token_seconds is not None:
            rows.append(["time to first token", f"<strong>{_milliseconds(run.time_to_first_token_seconds)} ms</strong> "
                                                "(warm prefill, host median)"])
        rates = []
        if run.decode_tokens_per_second is not None:
            rates.append(f"<strong>decode: {run.decode_tokens_per_second:,.1f} tokens/s</strong> (the batch over "
                         "the warm decode steps' host median)")
        if run.prefill_tokens_per_second is not None:
            rates.append(f"prefill: {run.prefill_tokens_per_second:,.1f} tokens/s")
        if rates:
            rows.append(["tokens per second", "; ".join(rates)])
        rows.append(["attention", f"SDPA backend chosen: {escape(run.attention_backend)}"])
    # Left-aligned: Jupyter right-aligns table cells, which suits numbers, not these sentences.
    return html_table(None, rows).replace("<td>", "<td style='text-align:left'>")


def checkpoint_measurement_html(measurement):
    """A checkpoint's generation: the summary first, the warm decode steps' timing, the
    prediction beside the measured counters, then each sequence folded (<details>)."""
    config = measurement.configuration
    folded = "".join(_sequence_details(name, rows, open_it=False) for name, rows in sequences(measurement))
    run = measurement.decoder_run
    tokens = ("<p>First sequence's tokens (batch row 0): " + " ".join(str(t) for t in run.first_sequence_tokens)
              + "</p>") if run is not None and run.first_sequence_tokens else ""
    content = (_summary_table(measurement) + _checkpoint_timing_section(measurement)
               + _prediction_comparison(measurement)
               + "<p><b>Steps, by sequence</b> (click to unfold):</p>" + folded + tokens)
    notes = list(_NOTES) + [
        "Allocated change: allocated at the end of the step less at its start; a decode step's is mostly "
        "the KV cache's growth by one token.",
        "GiB: 2^30 bytes, two decimals; the exact bytes beside.",
    ]
    if config.output:
        notes.append(f"Saved to {config.output}.")
    return html_section("Measurement of a checkpoint's generation", content, notes)


def _checkpoint_timing_section(measurement):
    """The timing of the warm sequences' decode steps, in milliseconds, worded for them."""
    timing, config = measurement.timing, measurement.configuration
    return (f"<p>Timing of a decode step: {timing.warm_repeats} warm decode steps ({config.repeats} warm "
            f"sequence{'' if config.repeats == 1 else 's'} of {config.new_tokens} steps; the cold and warm-up "
            "sequences left out)</p>" + _spread_table(timing, 1000, "ms", ",.3f"))


def _timing_section(timing):
    """The MLP's warm repeats' spread, in microseconds (a forward takes a fraction of a ms)."""
    return f"<p>Warm repeats: {timing.warm_repeats}</p>" + _spread_table(timing, 1e6, "µs", ",.1f")


def _spread_table(timing, scale, unit, number_format):
    """A row per clock (median, IQR, min, max, mean, stdev in `unit`, and CV), then the warnings."""
    def row(clock, spread):
        return [escape(clock)] + [format(value * scale, number_format) for value in (
            spread.median, spread.iqr, spread.min, spread.max, spread.mean, spread.stdev)] + [
            f"{spread.cv * 100:.1f} %"]
    rows = [row("host", timing.host_seconds)]
    if timing.gpu_event_seconds is not None:
        rows.append(row("GPU event", timing.gpu_event_seconds))
    header = ["clock"] + [f"{name} {unit}" for name in ("median", "IQR", "min", "max", "mean", "stdev")] + ["CV"]
    warnings = "".join(f"<li>warning ({escape(w.code)}, {escape(w.clock)}): {escape(w.message)}</li>"
                       for w in timing.warnings) or "<li>no timing warnings</li>"
    return html_table(header, rows) + f"<ul>{warnings}</ul>"


def timing_html(timing):
    """The view of a TimingSummary (``measurement.timing``) on its own."""
    notes = [
        "Warm repeats only: warm-up forwards and the first forward are not in these statistics "
        "(of a checkpoint's run, the warm repeats are the warm sequences' decode steps; "
        "the measurement's own view gives them in ms).",
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
    if measurement.checkpoint is not None:
        return plot_checkpoint_measurement(measurement)
    plt = pyplot()  # only here: import iteragpu stays light

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


# Colours of a checkpoint's plot: one per counter, one per sequence kind.
_COUNTER_STYLE = (  # (label, which counters, attribute, colour, line style)
    ("peak reserved", "end", "peak_reserved_bytes", "tab:red", "-"),
    ("reserved at end", "end", "reserved_bytes", "tab:orange", "--"),
    ("peak allocated", "end", "peak_allocated_bytes", "tab:purple", "-"),
    ("allocated at end", "end", "allocated_bytes", "tab:blue", "--"),
)
_SEQUENCE_COLOUR = {"cold": "tab:gray", "warmup": "tab:orange", "warm": "tab:blue"}


def plot_checkpoint_measurement(measurement):
    """A checkpoint's generation, the sequences side by side on one axis of steps (a gap and
    the sequence's name between them): memory in GiB (the peak marked, the weights' level
    drawn), the allocated bytes' growth since each prefill in MiB (the KV cache, one token a
    step), and the time of each step (log scale: the prefill beside the decode steps), the
    host clock as a line and the GPU events as open circles, so neither hides the other."""
    plt = pyplot()  # only here: import iteragpu stays light
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    groups = [(name, rows) for name, rows in sequences(measurement) if name != "loading"]
    loading = [row for row in measurement.phases if not getattr(row, "sequence", "")]
    figure, (memory_axes, growth_axes, time_axes) = plt.subplots(
        3, 1, figsize=(10, 10), sharex=True, constrained_layout=True,
        gridspec_kw={"height_ratios": [1.3, 1, 1.1]})
    gap = 3
    starts, centres, x = [], [], 0
    for _, rows in groups:
        starts.append(x)
        centres.append(x + (len(rows) - 1) / 2)
        x += len(rows) + gap
    kinds = [rows[0].sequence for _, rows in groups]

    # Memory, GiB: a line per counter, broken between sequences.
    for label, which, attribute, colour, style in _COUNTER_STYLE:
        for index, (start, (_, rows)) in enumerate(zip(starts, groups)):
            memory_axes.plot([start + i for i in range(len(rows))],
                             [getattr(getattr(row, which), attribute) / GIB for row in rows],
                             style, color=colour, linewidth=1.6, marker=".", markersize=4,
                             label=label if index == 0 else None)
    if loading:
        weights = loading[-1].end.allocated_bytes
        memory_axes.axhline(weights / GIB, color="black", linewidth=0.8, linestyle=":")
        memory_axes.annotate(f"after loading: {gib(weights)} GiB allocated", (0, weights / GIB),
                             xytext=(0, -12), textcoords="offset points", fontsize="small")
    peak_index, peak_row = max(
        ((starts[g] + i, row) for g, (_, rows) in enumerate(groups) for i, row in enumerate(rows)),
        key=lambda item: item[1].end.peak_reserved_bytes)
    peak = peak_row.end.peak_reserved_bytes / GIB
    memory_axes.plot([peak_index], [peak], "*", color="tab:red", markersize=14, zorder=5)
    memory_axes.annotate(f"peak reserved {gib(peak_row.end.peak_reserved_bytes)} GiB ({row_label(peak_row)})",
                         (peak_index, peak), xytext=(14, -22), textcoords="offset points", fontsize="small",
                         color="tab:red", bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.9, "pad": 1})
    low = min(row.end.allocated_bytes for _, rows in groups for row in rows) / GIB
    if loading:
        low = min(low, loading[-1].end.allocated_bytes / GIB)
    memory_axes.set_ylim(low - 0.08 * (peak - low) - 0.05, peak + 0.12 * (peak - low) + 0.05)
    memory_axes.set_ylabel("GiB")
    memory_axes.set_title("memory at each step (this process's caching allocator)", fontsize="medium")
    memory_axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")

    # Growth since the prefill, MiB: the KV cache, one token a step.
    slopes = []
    for start, kind, (_, rows) in zip(starts, kinds, groups):
        base = rows[0].end.allocated_bytes
        growth = [(row.end.allocated_bytes - base) / MIB for row in rows]
        growth_axes.plot([start + i for i in range(len(rows))], growth, "o-", color=_SEQUENCE_COLOUR.get(kind, "black"),
                         markersize=3, linewidth=1.4)
        if len(rows) > 1:
            slopes.append(growth[-1] / (len(rows) - 1))
    if slopes:
        slope = _median(slopes)
        growth_axes.set_title(f"allocated since the end of each prefill: +{slope:,.2f} MiB a decode step "
                              "(the KV cache, one token a step; median over the sequences)", fontsize="medium")
    growth_axes.set_ylabel("MiB")

    # Time per step, ms, log: prefill and decode apart in each sequence's own colour.
    for index, (start, kind, (name, rows)) in enumerate(zip(starts, kinds, groups)):
        colour = _SEQUENCE_COLOUR.get(kind, "black")
        xs = [start + i for i in range(len(rows))]
        time_axes.plot(xs, [row.host_seconds * 1000 for row in rows], "-", color=colour, linewidth=1.6)
        events = [(xv, row.gpu_event_seconds * 1000) for xv, row in zip(xs, rows) if row.gpu_event_seconds is not None]
        if events:
            time_axes.plot([e[0] for e in events], [e[1] for e in events], "o", markersize=6, markerfacecolor="none",
                           markeredgecolor="black", markeredgewidth=0.8)
    time_axes.set_yscale("log")
    time_axes.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    time_axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,g}"))
    time_axes.yaxis.set_minor_formatter(NullFormatter())
    time_axes.set_ylabel("ms a step (log scale)")
    decode = [row.host_seconds * 1000 for _, rows in groups for row in rows if row.phase == "decode"
              and row.sequence == "warm"]
    title = "time of each step: the prefill (first point of a sequence), then the decode steps"
    if decode:
        title += f"; warm decode median {_median(decode):,.2f} ms (host)"
    time_axes.set_title(title, fontsize="medium")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color="black", linewidth=1.6, label="host clock (line)")]
    if any(row.gpu_event_seconds is not None for _, rows in groups for row in rows):
        handles.append(Line2D([], [], linestyle="none", marker="o", markerfacecolor="none", markeredgecolor="black",
                              label="GPU events (circles)"))
    handles += [Line2D([], [], color=colour, linewidth=4, alpha=0.6, label=label)
                for kind, colour, label in (("cold", _SEQUENCE_COLOUR["cold"], "cold"),
                                            ("warmup", _SEQUENCE_COLOUR["warmup"], "warm-up"),
                                            ("warm", _SEQUENCE_COLOUR["warm"], "warm")) if kind in kinds]
    time_axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")

    # The x axis: each sequence named once, at its middle; its steps as minor ticks.
    for axes in (memory_axes, growth_axes, time_axes):
        axes.grid(axis="y", which="major", alpha=0.3)
        for start, kind, (_, rows) in zip(starts, kinds, groups):
            axes.axvspan(start - 0.5, start + len(rows) - 0.5, color=_SEQUENCE_COLOUR.get(kind, "black"), alpha=0.06)
    time_axes.xaxis.set_major_locator(FixedLocator(centres))
    time_axes.set_xticklabels([name for name, _ in groups])
    time_axes.xaxis.set_minor_locator(FixedLocator([start + i for start, (_, rows) in zip(starts, groups)
                                                    for i in range(len(rows))]))
    time_axes.xaxis.set_minor_formatter(NullFormatter())
    steps = len(groups[0][1]) - 1 if groups else 0
    time_axes.set_xlabel(f"sequences in the order they ran; in each, the prefill then {steps} decode steps "
                         "(a minor tick a step)")
    config, a = measurement.configuration, measurement.checkpoint.architecture
    figure.suptitle(
        f"{config.device}{_plain_gpu_name(measurement)}: {a.architecture}, batch {config.batch} \u00d7 context "
        f"{config.context:,}, {config.new_tokens} new tokens, {config.dtype}"
        + (f"\n{_TEST_DOUBLE_MARK}" if measurement.environment.from_test_double else ""))
    return close_figure(figure)


def _plain_gpu_name(measurement):
    stack = measurement.environment.stack
    if stack is None:
        return ""
    names = [gpu.name for gpu in stack.gpus if gpu.index == measurement.environment.selected_index]
    return f" ({names[0]})" if names else ""
