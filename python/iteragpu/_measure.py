"""iteragpu.measure(): one bounded measurement per GPU, each in a fresh worker process.

A long-lived process (a Jupyter kernel) carries allocator state from earlier work, which
would pollute the baselines; so the core's measurement runner makes every measurement in
its own worker process (iteragpu-measure-worker, beside this package), exactly as the
command line does. ``in_process=True`` measures in this process instead.
"""

import inspect

from . import _iteragpu


def listing_workload_keywords(function):
    """Lists the workloads' own keywords (new_tokens), as they declare them, in the signature
    of a function that takes them as **workload_options: inspect.signature and help() show
    every keyword, and a new workload's reach it without an edit here."""
    signature = inspect.signature(function)
    parameters = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    parameters += [inspect.Parameter(keyword, inspect.Parameter.KEYWORD_ONLY, default=None)
                   for keyword in _iteragpu._workload_option_keywords()]
    function.__signature__ = signature.replace(parameters=parameters)
    return function


class PhaseMeasurer:
    """Measures Linear -> GELU -> Linear on one GPU or several, phase by phase (see measure())."""

    @listing_workload_keywords
    def measure(self, *, device="cuda:0", batch=1, context=16, width=None, hidden=None,
                dtype=None, warmup=None, repeats=None, seed=20260924, output=None,
                backend_path=None, in_process=False, progress=None, model=None, timeout=None,
                **workload_options):
        """Measures memory and time phase by phase.

        Args:
            device: "cuda:N" (default "cuda:0"); "all", or a list such as "cuda:0,cuda:1",
                measures each GPU in its own worker at the same time and returns a
                MeasurementSummary (output is then required: the summary file, each GPU's
                result beside it as <stem>-cuda<N>.json).
            batch, context, width: input shape [batch, context, width] (defaults 1, 16; width
                None: 64); context is a number of positions, with model the prompt length.
            hidden: hidden width; None (default) means 4 x width.
            dtype: "float32", "float16" or "bfloat16"; None (default): float32, or with model
                the checkpoint's own.
            warmup: warm-up forwards (None: 1); repeats: timed warm forwards (None: 2).
                With model: warm-up and warm sequences after the cold one; with train,
                refused (a fine-tuning run's rows are its steps).
            model: a dense decoder-only checkpoint (Llama, Mistral, Qwen2, Qwen3) run as
                transformers runs it, instead of the synthetic MLP: a folder (config.json and
                safetensors weights), or a Hub id "org/name[@revision]" complete in the Hugging
                Face cache; batch x context random token ids are the prompt; width and hidden
                come from its config.json (giving them is a UsageError, as model="" is).
            timeout: with a Hub id, seconds per HTTP request (None: 10).
            **workload_options: a workload's own options, by keyword, as it declares them
                (``iteragpu measure --help`` lists them): new_tokens, with model the decode
                steps after each prefill, one row each (None: 16); an option of another
                workload (new_tokens without model) is a UsageError.
                None for any keyword leaves it out, as an option not given on the command line:
                the core checks the request as it checks the command line's.
            seed: initialisation seed (default fixed).
                Numbers may be int or str, parsed by the core as the command line's are.
            output: the JSON file to create (str or os.PathLike). It must not exist; it is
                published atomically and never left partial. None: no file is written.
            backend_path: an explicit LibTorch backend plugin file.
            in_process: False (default) measures in a fresh worker process; True in this
                process (its allocator state then carries into the baselines; one GPU only).
            progress: None shows a progress line in Jupyter or on a terminal; False shows
                nothing; a callable(row: PhaseRow, rows_done: int, rows_total: int) is
                called after each phase row (with several GPUs the counts cover them all).

        Returns:
            Measurement, or MeasurementSummary for several GPUs.

        Raises:
            UsageError, BackendUnavailable, DeviceUnavailable, OutputExists, OutOfMemory,
            MeasurementFailed, Interrupted (see the iteragpu module's documentation).
        """
        request = _iteragpu.MeasureRequest(
            device=device, batch=batch, context=context, width=width, hidden=hidden, dtype=dtype,
            warmup=warmup, repeats=repeats, seed=seed, output=output, backend_path=backend_path,
            model=model, timeout=timeout, **workload_options)
        callback = _progress_callback(progress, request)
        try:
            if in_process:
                return _iteragpu.PhaseMeasurer().measure(request, callback)
            return _iteragpu.run_measurements(request, callback)
        finally:
            if progress is None and callback is not None:
                callback.close()  # our own progress line: end it even after an error


@listing_workload_keywords
def measure(*, device="cuda:0", batch=1, context=16, width=None, hidden=None, dtype=None,
            warmup=None, repeats=None, seed=20260924, output=None, backend_path=None,
            in_process=False, progress=None, model=None, timeout=None, **workload_options):
    """Same as PhaseMeasurer().measure(...); see there."""
    return PhaseMeasurer().measure(
        device=device, batch=batch, context=context, width=width, hidden=hidden, dtype=dtype,
        warmup=warmup, repeats=repeats, seed=seed, output=output, backend_path=backend_path,
        in_process=in_process, progress=progress, model=model, timeout=timeout, **workload_options)


def _progress_callback(progress, request):
    if progress is False:
        return None
    if progress is None:
        from ._display.progress import ProgressLine

        return ProgressLine.for_current_output(request.device)
    if not callable(progress):
        raise TypeError("progress: expected None, False or a callable(row, rows_done, rows_total)")
    return progress


@listing_workload_keywords
def sweep(vary, *, budget="50%", device="cuda:0", batch=1, context=16, width=None, hidden=None,
          dtype=None, warmup=None, repeats=None, seed=20260924, output=None, backend_path=None,
          progress=None, model=None, timeout=None, **workload_options):
    """The largest value of one dimension whose peak reserved memory stays under a budget.

    From the configuration given, ``vary`` grows geometrically, then a bisection finds the
    largest value under the budget; the value above it is measured too. Every point is a
    whole measurement in its own worker process; an out-of-memory point is a data point.
    Where the predictor applies, it proposes the boundary first and two measurements
    confirm it.

    Args:
        vary: "batch", "context", "width" or "hidden"; with model "batch", "context" or
            "new-tokens".
        budget: "50%" (default) of the free memory the runtime reports at the first point,
            or a number of bytes (int or str).
        model, timeout: a checkpoint (a folder, or a Hub id complete in the cache), as for
            measure(model=...): the checkpoint is swept instead of the synthetic MLP.
        **workload_options: the workload's own options, as for measure() (new_tokens with
            model: its decode steps).
        device, batch, context, width, hidden, dtype, warmup, repeats, seed, backend_path:
            the starting configuration, as for measure() (one GPU).
        output: a new JSON file for the sweep (never overwritten), or None.
        progress: None shows a progress line in Jupyter or on a terminal; False nothing; a
            callable(point: SweepPoint, measurements: int) is called after each point.

    Returns:
        SweepResult (plot() draws peak reserved memory against the dimension). The search
        never goes above what the workload accepts (a checkpoint's max_position_embeddings
        for context + new tokens): largest_accepted, and beyond_largest_accepted says why
        the next value is refused.

    Raises:
        UsageError, BackendUnavailable, DeviceUnavailable, OutputExists, OutOfMemory (the
        starting point itself does not fit), Interrupted.
    """
    start = _iteragpu.MeasureRequest(
        device=device, batch=batch, context=context, width=width, hidden=hidden, dtype=dtype,
        warmup=warmup, repeats=repeats, seed=seed, backend_path=backend_path, model=model,
        timeout=timeout, **workload_options)
    if progress is False:
        rows, points = None, None
    elif progress is None:
        from ._display.progress import SweepProgressLine

        line = SweepProgressLine.for_current_output(device)
        rows, points = (line, line.point) if line is not None else (None, None)
    elif callable(progress):
        rows, points = None, progress
    else:
        raise TypeError("progress: expected None, False or a callable(point, measurements)")
    try:
        return _iteragpu.run_sweep(start, vary, budget, output, rows, points)
    finally:
        if progress is None and rows is not None:
            rows.close()
