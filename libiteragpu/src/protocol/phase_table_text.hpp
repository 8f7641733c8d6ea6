#pragma once
// The phase table that a measurement's and a prediction's text both print: phase and repeat,
// the columns each table adds of its own, then the six allocator counters.

#include <optional>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"

namespace iteragpu {

// How a row is named in the table: its phase, or for a checkpoint's rows the sequence, the
// phase and the decode step ("warm decode 3", "cold prefill").
std::string phase_label(const std::string& phase, const std::string& sequence, const std::optional<int>& step);

// phase_label() and, for a repeat above 0, " (repeat N)": a row named in a sentence.
std::string peak_row_label(const std::string& phase, const std::string& sequence, const std::optional<int>& step,
                           int repeat);

// The title line. `middle` is the table's own column titles, already formatted, each after a
// space ("" for none).
std::string phase_table_header(const std::string& middle, int phase_width = 13);

// One row: "-" for a repeat of 0; `middle` as in the header. The counters named in `marked`
// (as the JSON names them: "peak_reserved_bytes", "reserved_bytes.end", ...) are written after
// `mark` (">=" or "~": a prediction's unchecked counters).
std::string phase_table_row(const std::string& phase, int repeat, const std::string& middle,
                            const AllocatorCounters& baseline, const AllocatorCounters& end,
                            int phase_width = 13, const std::vector<std::string>& marked = {},
                            const std::string& mark = "");

// Under a table, in the units a person reads (mechanics/wording.hpp): the highest peak
// reserved and peak allocated counters, the row each is reached in first, and the reserved
// bytes at the last row's end; `marks[i]` (">=", "~" or "") is written before row i's figure
// where a caveat leaves it unchecked.
struct PeakRow {
  std::string label;
  AllocatorCounters end;
  std::string reserved_mark;   // before peak_reserved_bytes
  std::string allocated_mark;  // before peak_allocated_bytes
  std::string end_reserved_mark;  // before reserved_bytes.end
};
std::string peak_summary_lines(const std::vector<PeakRow>& rows);

}  // namespace iteragpu
