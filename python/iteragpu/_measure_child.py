"""One measurement in a fresh process, for iteragpu.measure() (see _measure.py).

Protocol with the parent:

- stdin: a pickle of (MeasureRequest, write_file, report_progress); then, when
  report_progress, one CONTINUE byte per progress row once the parent has shown it. The
  child waits for it before the next phase; anything else (or the end of stdin) stops the
  measurement there, so an exception in the parent's progress callback leaves no file.
- stderr: one line ``PROGRESS_PREFIX + base64(pickle((row, rows_done, rows_total)))`` per
  phase row; any other line is whatever the libraries print, shown by the parent.
- stdout: a pickle of ("ok", Measurement) or ("error", type_name, message, field), where
  type_name is an iteragpu exception (or ValueError / TypeError) the parent raises again.

Nothing else may reach stdout: the original stdout is kept for the result and file
descriptor 1 is pointed at stderr before anything is loaded.
"""

import base64
import os
import pickle
import sys

PROGRESS_PREFIX = "iteragpu-progress "
CONTINUE = b"+"


class _ParentSaidStop(Exception):
    pass


def _report_progress(row, rows_done, rows_total, answers):
    payload = base64.b64encode(pickle.dumps((row, rows_done, rows_total))).decode("ascii")
    sys.stderr.write(PROGRESS_PREFIX + payload + "\n")
    sys.stderr.flush()
    if answers.read(1) != CONTINUE:
        raise _ParentSaidStop()  # the binding stops at this phase boundary; nothing written


def _measure(request, write_file, progress):
    from iteragpu import _iteragpu

    try:
        measurer = _iteragpu.PhaseMeasurer()
        run = measurer.measure if write_file else measurer.run
        return ("ok", run(request, progress))
    except _ParentSaidStop:
        return ("error", "Interrupted", "stopped by the parent process; nothing was written", None)
    except _iteragpu.Error as error:  # Interrupted included
        return ("error", type(error).__name__, str(error), getattr(error, "field", None))
    except Exception as error:  # TypeError from a binding, or a bug: the parent says which
        return ("error", type(error).__name__, str(error), None)
    except KeyboardInterrupt:
        return ("error", "Interrupted", "the measurement was interrupted; nothing was written", None)


def main():
    result_stream = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    answers = sys.stdin.buffer
    request, write_file, report_progress = pickle.load(answers)
    progress = None
    if report_progress:
        def progress(row, rows_done, rows_total):
            _report_progress(row, rows_done, rows_total, answers)
    outcome = _measure(request, write_file, progress)
    pickle.dump(outcome, result_stream)
    result_stream.close()
    return 0 if outcome[0] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
