// A phase row read back from JSON, and streamed on its own as a one-line document.

#include "protocol/phase_row_json.hpp"

#include <rapidjson/document.h>

#include "iteragpu/error.hpp"
#include "mechanics/quantity_parser.hpp"
#include "workload/workload.hpp"

namespace iteragpu {
namespace {

constexpr const char* kPhaseRowSchema = "iteragpu.phase-row";
constexpr int kPhaseRowSchemaVersion = 1;

}  // namespace

void read_phase_counters(const JsonObjectReader& json, AllocatorCounters& baseline, AllocatorCounters& end) {
  const JsonObjectReader allocated = json.object("allocated_bytes");
  const JsonObjectReader reserved = json.object("reserved_bytes");
  allocated.read("baseline", baseline.allocated_bytes).read("end", end.allocated_bytes);
  reserved.read("baseline", baseline.reserved_bytes).read("end", end.reserved_bytes);
  json.read("peak_allocated_bytes", end.peak_allocated_bytes)
      .read("peak_reserved_bytes", end.peak_reserved_bytes);
}

PhaseRow read_phase_row_members(const JsonObjectReader& json) {
  PhaseRow row;
  row.phase = json.text("phase");
  if (!is_workload_phase(row.phase))
    json.fail("phase", quoted_for_message(row.phase) + " is not a phase of the protocol");
  if (json.has("sequence")) {
    row.sequence = json.text("sequence");
    if (row.sequence != "cold" && row.sequence != "warmup" && row.sequence != "warm")
      json.fail("sequence", quoted_for_message(row.sequence) + " is not cold, warmup or warm");
  }
  if (json.has("sequence") || json.has("step")) {
    row.step = json.integer("step");
    if (*row.step < 0) json.fail("step", "negative");
  }
  // A repeat number belongs to warm_forward rows and to warmup and warm sequences only.
  const bool repeated = row.phase == "warm_forward" || row.sequence == "warmup" || row.sequence == "warm";
  if (repeated == json.is_null("repeat"))
    json.fail("repeat", repeated ? "missing for a " + row.phase + " row" : "set for a " + row.phase + " row");
  if (!json.is_null("repeat")) {
    row.repeat = json.integer("repeat");
    if (row.repeat < 1) json.fail("repeat", "below 1");
  }
  row.forwards = json.integer("forwards");
  if (row.forwards < 0) json.fail("forwards", "negative");
  row.host_seconds = json.number("host_seconds");
  row.gpu_event_seconds = json.number_or_null("gpu_event_seconds");
  if (row.host_seconds < 0) json.fail("host_seconds", "negative");
  if (row.gpu_event_seconds && *row.gpu_event_seconds < 0) json.fail("gpu_event_seconds", "negative");
  read_phase_counters(json, row.baseline, row.end);
  return row;
}

std::string phase_row_to_json(const PhaseRow& row) {
  JsonWriter json(kPhaseRowSchema, kPhaseRowSchemaVersion);
  write_phase_row_members(json, row);
  return json.finish_on_one_line();
}

PhaseRow phase_row_from_json(const std::string& text) {
  const std::string source = "phase row";
  rapidjson::Document document;
  const std::string problem = parse_json(text, document);
  if (!problem.empty()) throw DataFileError(source + ": " + problem);
  const JsonObjectReader json(document, source);
  if (json.text("schema") != kPhaseRowSchema)
    json.fail("schema", "is not \"" + std::string(kPhaseRowSchema) + "\"");
  if (json.integer("schema_version") != kPhaseRowSchemaVersion)
    json.fail("schema_version", "is not " + std::to_string(kPhaseRowSchemaVersion));
  return read_phase_row_members(json);
}

}  // namespace iteragpu
