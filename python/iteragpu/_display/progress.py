"""A dependency-free progress line for measure() and sweep(): an updated output in Jupyter,
a rewritten line on a terminal, nothing elsewhere."""

import decimal
import sys

from .cells import MIB, row_label, rounded


def _may_use_escape_codes(stream):
    """The CLI's rule for a Python stream: a terminal, NO_COLOR unset, TERM not dumb."""
    from .._iteragpu import _may_use_escape_codes as allowed

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
            f"iteragpu: {self._device} {rows_done}/{rows_total} {row_label(row)}: "
            f"{row.host_seconds:.4f} s, peak allocated {rounded(decimal.Decimal(row.end.peak_allocated_bytes) / MIB)} MiB"
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
        peak_text = f", peak reserved {rounded(decimal.Decimal(peak) / MIB)} MiB" if peak is not None else ""
        self._write(f"iteragpu: {self._device} point {measurements}: {point.value} {point.outcome}{peak_text}")
        self._open = True

    def close(self):
        if self._open:
            self._write(f"iteragpu: {self._device}: sweep ended", final=True)
            self._open = False
