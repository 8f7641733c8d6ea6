#include "protocol/phase_table_text.hpp"

#include <cstdio>
#include <string>

namespace iteragpu {
namespace {

// A line is cut at this many bytes; no real row comes near it.
constexpr std::size_t kLineBytes = 512;

}  // namespace

std::string phase_label(const std::string& phase, const std::string& sequence, const std::optional<int>& step) {
  if (sequence.empty()) return phase;
  return sequence + " " + phase + (step && *step > 0 ? " " + std::to_string(*step) : "");
}

std::string phase_table_header(const std::string& middle, int phase_width) {
  char line[kLineBytes];
  std::snprintf(line, sizeof line, "%-*s %6s%s %15s %15s %15s %15s %15s %15s\n", phase_width, "phase", "repeat",
                middle.c_str(), "alloc base", "alloc end", "peak alloc", "reserved base", "reserved end",
                "peak reserved");
  return line;
}

std::string phase_table_row(const std::string& phase, int repeat, const std::string& middle,
                            const AllocatorCounters& baseline, const AllocatorCounters& end, int phase_width) {
  char line[kLineBytes];
  std::snprintf(line, sizeof line, "%-*s %6s%s %15llu %15llu %15llu %15llu %15llu %15llu\n", phase_width, phase.c_str(),
                repeat > 0 ? std::to_string(repeat).c_str() : "-", middle.c_str(),
                static_cast<unsigned long long>(baseline.allocated_bytes),
                static_cast<unsigned long long>(end.allocated_bytes),
                static_cast<unsigned long long>(end.peak_allocated_bytes),
                static_cast<unsigned long long>(baseline.reserved_bytes),
                static_cast<unsigned long long>(end.reserved_bytes),
                static_cast<unsigned long long>(end.peak_reserved_bytes));
  return line;
}

}  // namespace iteragpu
