"""iteragpu.measure(): one bounded measurement, in a fresh child process by default.

A long-lived process (a Jupyter kernel) carries allocator state from earlier work, which
would pollute the baselines; so the measurement runs in a new Python process
(``python -m iteragpu._measure_child``) that calls the same binding in-process, streams
progress rows back on stderr and returns the Measurement, or the error to re-raise as the
same exception type. ``in_process=True`` skips the child.
"""

import os
import sys

from . import _iteragpu


class PhaseMeasurer:
    """Measures Linear -> GELU -> Linear on one GPU, phase by phase (see measure())."""

    def measure(self, *, in_process=False, progress=None, **request):
        """Measures memory and time phase by phase on one GPU.

        Args:
            device: "cuda:N" (default "cuda:0").
            batch, context, width: input shape [batch, context, width] (defaults 1, 16, 64);
                context is a number of positions (no attention, no KV cache).
            hidden: hidden width; 0 (default) means 4 x width.
            dtype: "float32" (default), "float16" or "bfloat16".
            warmup: warm-up forwards (default 1); repeats: timed warm forwards (default 2).
            seed: initialisation seed (default fixed).
            output: the JSON file to create (str or os.PathLike). It must not exist; it is
                published atomically and never left partial. None: no file is written.
            backend_path: an explicit LibTorch backend plugin file.
            in_process: False (default) runs in a fresh child process; True runs in this
                process (its allocator state then carries into the baselines).
            progress: None shows a progress line in Jupyter or on a terminal; False shows
                nothing; a callable(row: PhaseRow, rows_done: int, rows_total: int) is
                called after each phase row.

        Returns:
            Measurement

        Raises:
            UsageError, BackendUnavailable, DeviceUnavailable, OutputExists, OutOfMemory,
            MeasurementFailed, Interrupted (see the iteragpu module's documentation).
        """
        measure_request = _iteragpu.MeasureRequest(**request)
        write_file = bool(measure_request.output)
        callback = _progress_callback(progress, measure_request)
        try:
            if in_process:
                measurer = _iteragpu.PhaseMeasurer()
                run = measurer.measure if write_file else measurer.run
                return run(measure_request, callback)
            return _measure_in_child(measure_request, write_file, callback)
        finally:
            if progress is None and callback is not None:
                callback.close()  # our own progress line: end it even after an error


def measure(**request):
    """Same as PhaseMeasurer().measure(**request); see there."""
    return PhaseMeasurer().measure(**request)


def _progress_callback(progress, request):
    if progress is False:
        return None
    if progress is None:
        from ._display import ProgressLine

        return ProgressLine.for_current_output(request.device)
    if not callable(progress):
        raise TypeError("progress: expected None, False or a callable(row, rows_done, rows_total)")
    return progress


def _child_environment():
    """This environment, with the folder holding this iteragpu package first on PYTHONPATH
    so the child imports the same package (and finds the same backend plugin)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    environment = dict(os.environ)
    inherited = environment.get("PYTHONPATH")
    environment["PYTHONPATH"] = (
        package_parent + os.pathsep + inherited if inherited else package_parent
    )
    return environment


def _measure_in_child(request, write_file, progress):
    import base64
    import pickle
    import signal
    import subprocess
    import threading

    from ._measure_child import CONTINUE, PROGRESS_PREFIX

    child = subprocess.Popen(
        [sys.executable, "-m", "iteragpu._measure_child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_child_environment(),
    )
    report_progress = progress is not None
    _tell_child(child, pickle.dumps((request, write_file, report_progress)))
    if not report_progress:
        _tell_child(child, None)
    result_chunks = []
    # The result arrives on stdout at the end; read it aside so a large result never
    # blocks the child while this thread reads progress from stderr.
    result_reader = threading.Thread(target=lambda: result_chunks.append(child.stdout.read()))
    result_reader.start()
    other_lines = []
    try:
        for raw_line in child.stderr:
            line = raw_line.decode("utf-8", "replace")
            if line.startswith(PROGRESS_PREFIX):
                row, rows_done, rows_total = pickle.loads(base64.b64decode(line[len(PROGRESS_PREFIX):]))
                progress(row, rows_done, rows_total)
                # The child waits for this before its next phase, so an exception raised
                # by progress (or Ctrl-C) above stops it before anything is written.
                _tell_child(child, CONTINUE)
            else:
                other_lines.append(line)
                sys.stderr.write(line)  # library warnings: shown, not hidden
        child.wait()
    except BaseException:
        # Ctrl-C, a kernel interrupt or an exception from the progress callback: the child
        # stops at its next phase boundary and writes nothing.
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
        _tell_child(child, None)
        child.wait()
        raise
    finally:
        _tell_child(child, None)
        result_reader.join()
        child.stdout.close()
        child.stderr.close()

    result = b"".join(chunk for chunk in result_chunks if chunk)
    if not result:
        how = (
            f"was killed by signal {-child.returncode}"
            if child.returncode < 0
            else f"exited with code {child.returncode}"
        )
        tail = "".join(other_lines[-5:]).strip()
        raise _iteragpu.Error(
            f"the measurement child process {how} without a result"
            + (f"; its last messages: {tail}" if tail else "")
        )
    outcome = pickle.loads(result)
    if outcome[0] == "ok":
        return outcome[1]
    raise _rebuild_error(*outcome[1:]) from None


def _tell_child(child, answer):
    """Sends the child its answer to a progress row; None closes the channel (stop)."""
    if child.stdin.closed:
        return
    try:
        if answer is None:
            child.stdin.close()
        else:
            child.stdin.write(answer)
            child.stdin.flush()
    except (BrokenPipeError, OSError):  # the child has ended: its outcome says how
        pass


def _rebuild_error(type_name, message, field):
    """The child's exception as the same Python type."""
    error_type = getattr(_iteragpu, type_name, None)
    if not (isinstance(error_type, type) and issubclass(error_type, _iteragpu.Error)):
        builtin = {"ValueError": ValueError, "TypeError": TypeError}.get(type_name)
        if builtin is None:
            return _iteragpu.Error(f"{type_name}: {message}")
        error_type = builtin
    error = error_type(message)
    if field is not None:
        error.field = field
    return error
