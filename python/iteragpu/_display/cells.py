"""What every view shares: escaping, display rounding, byte cells (MiB or GiB), the table and
section frames, the import of pyplot (an optional extra, with the way to get it when missing)
and the six allocator counters of a phase row."""

import decimal
import html
import sys

MIB = 2**20
GIB = 2**30


def escape(value):
    return html.escape(str(value))


def rounded(value, places=2, rounding=decimal.ROUND_HALF_UP):
    """Display rounding, halves away from zero, as the core's text reports round; a bound
    passes decimal.ROUND_FLOOR (a lower bound must not read higher than it is) or
    decimal.ROUND_CEILING (an upper bound)."""
    quantum = decimal.Decimal(1).scaleb(-places)
    exact = decimal.Decimal(value)
    return f"{exact.quantize(quantum, rounding=rounding):,}"


def html_table(header, rows):
    """A table; header cells are escaped here, row cells are HTML already."""
    head = "".join(f"<th>{escape(cell)}</th>" for cell in header) if header else ""
    body = "".join(
        "<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows
    )
    return (
        "<table>"
        + (f"<thead><tr>{head}</tr></thead>" if head else "")
        + f"<tbody>{body}</tbody></table>"
    )


def html_section(title, content, notes=()):
    """A view's frame: its title, its content (HTML) and its notes (text, escaped here)."""
    note_html = "".join(f"<li>{escape(note)}</li>" for note in notes)
    return (
        f"<div class='iteragpu'><strong>{escape(title)}</strong>{content}"
        + (f"<ul>{note_html}</ul>" if note_html else "")
        + "</div>"
    )


def bytes_cell(count):
    if count is None:
        return "&ndash;"
    return f"{count:,} <small>({rounded(decimal.Decimal(count) / MIB)} MiB)</small>"


def bytes_text(count):
    """A byte amount in running text: "16,787,456 bytes (16.01 MiB)"."""
    if count is None:
        return "&ndash;"
    return f"{count:,} bytes <small>({rounded(decimal.Decimal(count) / MIB)} MiB)</small>"


def gib(count, rounding=decimal.ROUND_HALF_UP):
    """A byte amount in GiB to two decimals, the unit a renter reads: "19.64"."""
    return rounded(decimal.Decimal(count) / GIB, rounding=rounding)


def gib_cell(count):
    """GiB first, the exact bytes beside it: "19.64 GiB <small>(21,086,863,360 bytes)</small>"."""
    if count is None:
        return "&ndash;"
    return f"{gib(count)} GiB <small>({count:,} bytes)</small>"


def pyplot():
    """matplotlib.pyplot, imported on use; plotting is an optional extra, so a Python without
    matplotlib gets an error that says how to get it, not a bare ModuleNotFoundError."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ModuleNotFoundError(
            f"plotting needs matplotlib, which this Python ({sys.executable}) cannot import ({error}). "
            "Plotting is an optional extra of iteragpu: on Debian or Ubuntu, for /usr/bin/python3, "
            "`sudo apt-get install python3-matplotlib`; in a virtual environment, `python -m pip install "
            "matplotlib`. The views (HTML) and every figure need nothing more.",
            name="matplotlib") from None
    return plt


def close_figure(figure):
    """Detaches a figure made with pyplot from pyplot's list of open figures, so that
    Jupyter's inline backend does not draw it a second time at the end of the cell: the
    caller shows the figure it gets back (a cell's last value) or saves it."""
    pyplot().close(figure)
    return figure


def row_label(row):
    """A phase row's name: "warm_forward #2" for a repeat; a checkpoint's "warm #2 decode 3"."""
    sequence = getattr(row, "sequence", "")  # a checkpoint's rows, measured or predicted
    if sequence:
        step = f" {row.step}" if row.step else ""
        return f"{sequence}{f' #{row.repeat}' if row.repeat else ''} {row.phase}{step}"
    return f"{row.phase} #{row.repeat}" if row.repeat else row.phase


# The allocator counters of a phase row, measured (PhaseRow) or predicted (PhasePrediction),
# in the tables' column order: (counters, attribute).
_ALLOCATOR_COUNTERS = (
    ("baseline", "allocated_bytes"),
    ("end", "allocated_bytes"),
    ("end", "peak_allocated_bytes"),
    ("baseline", "reserved_bytes"),
    ("end", "reserved_bytes"),
    ("end", "peak_reserved_bytes"),
)
ALLOCATOR_COUNTER_HEADER = ["allocated: baseline", "end", "peak", "reserved: baseline", "end", "peak"]


def allocator_counter_cells(row):
    """Six cells: allocated at baseline, at end and its peak, then the same for reserved."""
    return [bytes_cell(getattr(getattr(row, counters), attribute))
            for counters, attribute in _ALLOCATOR_COUNTERS]
