#include "protocol/phase_table_text.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "mechanics/wording.hpp"

namespace iteragpu {
namespace {

// A line is cut at this many bytes; no real row comes near it.
constexpr std::size_t kLineBytes = 512;

}  // namespace

std::string phase_label(const std::string& phase, const std::string& sequence, const std::optional<int>& step) {
  if (sequence.empty()) return phase + (step ? " " + std::to_string(*step) : "");  // a training step's row
  return sequence + " " + phase + (step && *step > 0 ? " " + std::to_string(*step) : "");
}

std::string peak_row_label(const std::string& phase, const std::string& sequence, const std::optional<int>& step,
                           int repeat) {
  return phase_label(phase, sequence, step) + (repeat > 0 ? " (repeat " + std::to_string(repeat) + ")" : "");
}

std::string phase_table_header(const std::string& middle, int phase_width) {
  char line[kLineBytes];
  std::snprintf(line, sizeof line, "%-*s %6s%s %15s %15s %15s %15s %15s %15s\n", phase_width, "phase", "repeat",
                middle.c_str(), "alloc base", "alloc end", "peak alloc", "reserved base", "reserved end",
                "peak reserved");
  return line;
}

std::string phase_table_row(const std::string& phase, int repeat, const std::string& middle,
                            const AllocatorCounters& baseline, const AllocatorCounters& end, int phase_width,
                            const std::vector<std::string>& marked, const std::string& mark) {
  auto cell = [&](std::uint64_t value, const char* name) {
    const bool is_marked = std::find(marked.begin(), marked.end(), name) != marked.end();
    return (is_marked ? mark : std::string()) + std::to_string(value);
  };
  char line[kLineBytes];
  std::snprintf(line, sizeof line, "%-*s %6s%s %15s %15s %15s %15s %15s %15s\n", phase_width, phase.c_str(),
                repeat > 0 ? std::to_string(repeat).c_str() : "-", middle.c_str(),
                cell(baseline.allocated_bytes, "allocated_bytes.baseline").c_str(),
                cell(end.allocated_bytes, "allocated_bytes.end").c_str(),
                cell(end.peak_allocated_bytes, "peak_allocated_bytes").c_str(),
                cell(baseline.reserved_bytes, "reserved_bytes.baseline").c_str(),
                cell(end.reserved_bytes, "reserved_bytes.end").c_str(),
                cell(end.peak_reserved_bytes, "peak_reserved_bytes").c_str());
  return line;
}

std::string peak_summary_lines(const std::vector<PeakRow>& rows) {
  if (rows.empty()) return "";
  const PeakRow* reserved = &rows.front();
  const PeakRow* allocated = &rows.front();
  for (const PeakRow& row : rows) {
    if (row.end.peak_reserved_bytes > reserved->end.peak_reserved_bytes) reserved = &row;
    if (row.end.peak_allocated_bytes > allocated->end.peak_allocated_bytes) allocated = &row;
  }
  return "Peak reserved:  " + reserved->reserved_mark + bytes_and_size(reserved->end.peak_reserved_bytes) + ", first in " +
         reserved->label + "\n" + "Peak allocated: " + allocated->allocated_mark +
         bytes_and_size(allocated->end.peak_allocated_bytes) + ", first in " + allocated->label + "\n" +
         "Reserved at the end: " + rows.back().end_reserved_mark + bytes_and_size(rows.back().end.reserved_bytes) + "\n";
}

}  // namespace iteragpu
