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

}  // namespace iteragpu
