#pragma once
// The JSON of a phase row, shared by a measurement file, a streamed row and a prediction.

#include <optional>
#include <string>

#include "iteragpu/phase_row.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"

namespace iteragpu {


// Writes the four counter members of a phase row: allocated_bytes and reserved_bytes
// {baseline, end}, peak_allocated_bytes, peak_reserved_bytes.
inline void write_phase_counters(JsonWriter& json, const AllocatorCounters& baseline,
                                 const AllocatorCounters& end) {
  json.key("allocated_bytes").begin_object()
      .key("baseline").value(baseline.allocated_bytes).key("end").value(end.allocated_bytes)
      .end_object();
  json.key("reserved_bytes").begin_object()
      .key("baseline").value(baseline.reserved_bytes).key("end").value(end.reserved_bytes)
      .end_object();
  json.key("peak_allocated_bytes").value(end.peak_allocated_bytes)
      .key("peak_reserved_bytes").value(end.peak_reserved_bytes);
}

// The same members, measured − predicted (signed).
inline void write_phase_counter_differences(JsonWriter& json, const AllocatorCounters& baseline,
                                            const AllocatorCounters& end,
                                            const AllocatorCounters& predicted_baseline,
                                            const AllocatorCounters& predicted_end) {
  auto difference = [](std::uint64_t measured, std::uint64_t predicted) {
    return static_cast<std::int64_t>(measured) - static_cast<std::int64_t>(predicted);
  };
  json.key("allocated_bytes").begin_object()
      .key("baseline").value(difference(baseline.allocated_bytes, predicted_baseline.allocated_bytes))
      .key("end").value(difference(end.allocated_bytes, predicted_end.allocated_bytes))
      .end_object();
  json.key("reserved_bytes").begin_object()
      .key("baseline").value(difference(baseline.reserved_bytes, predicted_baseline.reserved_bytes))
      .key("end").value(difference(end.reserved_bytes, predicted_end.reserved_bytes))
      .end_object();
  json.key("peak_allocated_bytes").value(difference(end.peak_allocated_bytes, predicted_end.peak_allocated_bytes))
      .key("peak_reserved_bytes").value(difference(end.peak_reserved_bytes, predicted_end.peak_reserved_bytes));
}

// Writes which row it is: phase, repeat (null for none), forwards, and a checkpoint's
// sequence and step (a training step's rows: the step alone). Measured, streamed and
// predicted rows name themselves alike.
inline void write_phase_identity(JsonWriter& json, const std::string& phase, int repeat, int forwards,
                                 const std::string& sequence, const std::optional<int>& step) {
  json.key("phase").value(phase).key("repeat");
  if (repeat > 0) {
    json.value(repeat);
  } else {
    json.null();
  }
  json.key("forwards").value(forwards);
  if (!sequence.empty()) json.key("sequence").value(sequence);
  if (!sequence.empty() || step) json.key("step").value(step.value_or(0));
}

// Writes a phase row's own members (phase, repeat, forwards, times, counters) into the open
// object: a row of a measurement file and a streamed row have the same members.
inline void write_phase_row_members(JsonWriter& json, const PhaseRow& row) {
  write_phase_identity(json, row.phase, row.repeat, row.forwards, row.sequence, row.step);
  json.key("host_seconds").value(row.host_seconds)
      .key("gpu_event_seconds").value(row.gpu_event_seconds);
  write_phase_counters(json, row.baseline, row.end);
}

// Reads back what write_phase_counters wrote (measured or predicted counters).
void read_phase_counters(const JsonObjectReader& json, AllocatorCounters& baseline, AllocatorCounters& end);

// Reads back what write_phase_row_members wrote; DataFileError naming the member otherwise.
PhaseRow read_phase_row_members(const JsonObjectReader& json);

// One phase row as its own one-line document ("iteragpu.phase-row", version 1, then the
// members of a measurement file's row), for streaming rows as they are measured; and back.
// phase_row_from_json throws DataFileError "phase row: reason".
std::string phase_row_to_json(const PhaseRow& row);
PhaseRow phase_row_from_json(const std::string& text);

}  // namespace iteragpu
