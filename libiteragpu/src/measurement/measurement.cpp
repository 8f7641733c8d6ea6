// The measurement file: a Measurement written as JSON and text, and read back into the values
// that wrote it (Measurement::from_json, read) — the one reader of measurement files, used by
// the runner, compare, sweep and the results table. What is read is checked to be a whole
// measurement: valid against the schemas, a workload that follows from the configuration, the
// rows the configuration produces in the protocol's order, and a prediction summary that
// agrees with its rows. Members derived from others (layers, shapes, differences, notes) are
// not kept: to_json() writes them again from what was read.

#include "iteragpu/measurement.hpp"

#include <rapidjson/document.h>

#include <cstdio>
#include <memory>

#include "environment/environment_json.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "measurement/measurement_schema.hpp"
#include "mechanics/input_file.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"
#include "mechanics/quantity_parser.hpp"
#include "protocol/phase_protocol.hpp"
#include "protocol/phase_row_json.hpp"
#include "protocol/phase_table_text.hpp"
#include "workload/configuration_json.hpp"
#include "workload/decoder_workload.hpp"
#include "workload/workload.hpp"

namespace iteragpu {
namespace {

void write_spread(JsonWriter& json, const SpreadStatistics& spread) {
  json.begin_object()
      .key("count").value(spread.count)
      .key("median").value(spread.median)
      .key("iqr").value(spread.iqr)
      .key("min").value(spread.min)
      .key("max").value(spread.max)
      .key("mean").value(spread.mean)
      .key("stdev").value(spread.stdev)
      .key("cv").value(spread.cv)
      .end_object();
}

void write_timing(JsonWriter& json, const TimingSummary& timing) {
  json.key("timing").begin_object().key("warm_repeats").value(timing.warm_repeats);
  json.key("host_seconds");
  write_spread(json, timing.host_seconds);
  json.key("gpu_event_seconds");
  if (timing.gpu_event_seconds) {
    write_spread(json, *timing.gpu_event_seconds);
  } else {
    json.null();
  }
  json.key("warnings").begin_array();
  for (const TimingWarning& warning : timing.warnings)
    json.begin_object().key("code").value(warning.code).key("clock").value(warning.clock)
        .key("message").value(warning.message).end_object();
  json.end_array().end_object();
}

// The spread of the warm repeats, a row per clock, then the warnings.
std::string timing_text(const TimingSummary& timing) {
  std::string text = "\nWarm repeats (" + std::to_string(timing.warm_repeats) + "), microseconds:\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-15s %10s %10s %10s %10s %10s %10s %7s\n", "clock", "median",
                "IQR", "min", "max", "mean", "stdev", "CV");
  text += line;
  auto row = [&](const char* clock, const SpreadStatistics& s) {
    std::snprintf(line, sizeof line, "  %-15s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %6.1f%%\n", clock,
                  s.median * 1e6, s.iqr * 1e6, s.min * 1e6, s.max * 1e6, s.mean * 1e6, s.stdev * 1e6,
                  s.cv * 100);
    text += line;
  };
  row("host", timing.host_seconds);
  if (timing.gpu_event_seconds) row("GPU event", *timing.gpu_event_seconds);
  if (timing.warnings.empty()) text += "  no warnings\n";
  for (const TimingWarning& warning : timing.warnings)
    text += "  warning (" + warning.code + "): " + warning.message + "\n";
  return text;
}

// A phase's time in milliseconds, to the microsecond.
std::string format_milliseconds(const std::optional<double>& seconds) {
  if (!seconds) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", *seconds * 1000.0);
  return text;
}

// The workload a measurement ran or describes; for one built by hand, its recorded checkpoint,
// else the synthetic MLP its configuration gives.
std::shared_ptr<const Workload> workload_of(const Measurement& measurement) {
  if (measurement.workload) return measurement.workload;
  if (measurement.checkpoint) return recorded_decoder_workload(measurement.configuration, *measurement.checkpoint);
  return workload_for(measurement.configuration);
}

// The workload follows from the configuration; the file's description of it must say the same.
std::shared_ptr<const Workload> derived_workload(const MeasureConfiguration& request,
                                                 const JsonObjectReader& configuration,
                                                 const JsonObjectReader& document) {
  std::shared_ptr<const Workload> workload;
  try {
    workload = workload_kind_of(request).recorded(request, document);
  } catch (const UsageError& error) {
    configuration.fail(error.field(), error.reason());
  }
  workload->check_json(document);
  return workload;
}

// "decode (warm sequence, repeat 1, step 3, 1 forwards)"
std::string row_description(const PhaseRow& row) {
  const std::string sequence = row.sequence.empty() ? "" : row.sequence + " sequence, ";
  const std::string step = row.step ? ", step " + std::to_string(*row.step) : "";
  return row.phase + " (" + sequence + "repeat " + std::to_string(row.repeat) + step + ", " +
         std::to_string(row.forwards) + " forwards)";
}

// The rows run_phase_protocol produces, in its order: the workload's phase plan.
void check_row_sequence(const std::vector<PhaseRow>& rows, const MeasureConfiguration& request,
                        const Workload& workload, const JsonObjectReader& json) {
  std::vector<PhaseRow> expected;
  for (const PlannedPhase& planned : workload.phase_plan(request.warmup, request.repeats))
    expected.push_back(planned.row);
  if (rows.size() != expected.size())
    json.fail("phases", "has " + std::to_string(rows.size()) + " rows but the configuration gives " +
                            std::to_string(expected.size()));
  for (std::size_t index = 0; index < rows.size(); ++index) {
    const PhaseRow& row = rows[index];
    const PhaseRow& want = expected[index];
    if (row.phase != want.phase || row.repeat != want.repeat || row.forwards != want.forwards ||
        row.sequence != want.sequence || row.step != want.step)
      json.fail("phases/" + std::to_string(index),
                "is " + row_description(row) + " where the protocol has " + row_description(want));
  }
}

SpreadStatistics read_spread(const JsonObjectReader& json) {
  SpreadStatistics spread;
  json.read("count", spread.count).read("median", spread.median).read("iqr", spread.iqr)
      .read("min", spread.min).read("max", spread.max).read("mean", spread.mean)
      .read("stdev", spread.stdev).read("cv", spread.cv);
  return spread;
}

TimingSummary read_timing(const JsonObjectReader& json) {
  TimingSummary timing;
  json.read("warm_repeats", timing.warm_repeats);
  timing.host_seconds = read_spread(json.object("host_seconds"));
  if (!json.is_null("gpu_event_seconds")) timing.gpu_event_seconds = read_spread(json.object("gpu_event_seconds"));
  for (const JsonObjectReader& warning : json.objects("warnings"))
    timing.warnings.push_back({warning.text("code"), warning.text("clock"), warning.text("message")});
  return timing;
}

// The prediction's summary and each row's predicted counters. MemoryPrediction::phases is
// index-aligned with the measured rows, as the predictor makes it: a row the file gives no
// prediction for keeps its index with a PhasePrediction whose phase is empty, which
// Measurement::predicted_row() reports as no prediction.
MemoryPrediction read_prediction(const JsonObjectReader& json, const std::vector<JsonObjectReader>& rows,
                                 const Measurement& measurement) {
  MemoryPrediction prediction;
  prediction.configuration = measurement.configuration;
  prediction.model = measurement.model;
  prediction.workload = measurement.workload;
  PredictionTarget& target = prediction.target;
  if (!parse_compute_capability(json.text("compute_capability"), target.compute_capability_major,
                                target.compute_capability_minor))
    json.fail("compute_capability", "not MAJOR.MINOR");
  if (const GpuDevice* gpu = measurement.environment.selected_gpu()) target.gpu_name = gpu->name;
  json.read("cublas_workspace_bytes", target.cublas_workspace_bytes)
      .read("cublaslt_workspace_bytes", target.cublaslt_workspace_bytes)
      .read("workspace_source", target.workspace_source)
      .read("cublaslt_used", prediction.cublaslt_used)
      .read("caveats", prediction.caveats);
  for (std::size_t index = 0; index < rows.size(); ++index) {
    PhasePrediction predicted;
    if (rows[index].has("predicted") && !rows[index].is_null("predicted")) {
      const PhaseRow& row = measurement.phases[index];
      predicted.phase = row.phase;
      predicted.repeat = row.repeat;
      predicted.forwards = row.forwards;
      predicted.sequence = row.sequence;
      predicted.step = row.step;
      read_phase_counters(rows[index].object("predicted"), predicted.baseline, predicted.end);
    }
    prediction.phases.push_back(std::move(predicted));
  }
  return prediction;
}

// The document, checked member by member; from_json gives every refusal as NotAMeasurement.
Measurement read_measurement_document(const std::string& text, const std::string& source) {
  rapidjson::Document document;
  const std::string problem =
      parse_schema_document(text, kMeasurementSchema, "measurement.schema.json", document);
  if (!problem.empty()) {
    // `measure --device all` writes a summary beside the per-device measurements: say which.
    const bool summary = document.IsObject() && document.HasMember("schema") && document["schema"].IsString() &&
                         std::string(document["schema"].GetString()) == "iteragpu.measurement-summary";
    throw NotAMeasurement(source + ": not an iteragpu measurement (" + problem + ")" +
                              (summary ? "; this is a multi-device summary: use the per-device "
                                         "measurement files it lists"
                                       : ""),
                          problem);
  }
  // The measurement schema requires only what a measurement needs of its environment
  // section; the section as a whole follows the environment report's own schema.
  const std::string environment_problem = schema_violation_of(document["environment"], "environment.schema.json");
  if (!environment_problem.empty())
    throw NotAMeasurement(source + ": not an iteragpu measurement (environment invalid " + environment_problem + ")",
                          "environment invalid " + environment_problem);

  const JsonObjectReader json(document, source);
  Measurement measurement;
  measurement.environment = read_environment_members(json.object("environment"));
  const JsonObjectReader configuration = json.object("configuration");
  measurement.configuration = read_measure_configuration(configuration);
  if (measurement.configuration.device != measurement.environment.selected_device)
    configuration.fail("device", measurement.configuration.device + " is not the environment's selected device " +
                                     measurement.environment.selected_device);
  measurement.workload = derived_workload(measurement.configuration, configuration, json);
  const Workload& workload = *measurement.workload;
  if (measurement.configuration.model.empty()) measurement.model = SyntheticModel::from(measurement.configuration);
  measurement.checkpoint = workload.checkpoint_record();
  measurement.run = workload.read_run(json);

  const std::vector<JsonObjectReader> rows = json.objects("phases");
  for (const JsonObjectReader& row : rows) measurement.phases.push_back(read_phase_row_members(row));
  check_row_sequence(measurement.phases, measurement.configuration, workload, json);

  // Files written before 2026-12-04 have no prediction and no timing section: the timing
  // summary is the statistics of their warm rows, computed as the measurement computes it.
  if (json.has("prediction") && !json.is_null("prediction")) {
    const JsonObjectReader prediction = json.object("prediction");
    measurement.prediction = read_prediction(prediction, rows, measurement);
    if (prediction.integer("counters") != static_cast<int>(6 * measurement.phases.size()))
      prediction.fail("counters", "is not 6 per phase row");
    if (prediction.integer("exact_counters") != measurement.exact_predicted_counters())
      prediction.fail("exact_counters", "is " + std::to_string(prediction.integer("exact_counters")) +
                                            " but the rows' predicted counters give " +
                                            std::to_string(measurement.exact_predicted_counters()));
  }
  measurement.timing = json.has("timing") ? read_timing(json.object("timing"))
                                          : measurement.workload->warm_repeats(measurement.phases);
  return measurement;
}

}  // namespace

std::string Measurement::to_json() const {
  JsonWriter json(kMeasurementSchema, kMeasurementSchemaVersion);
  json.key("environment").begin_object()
      .key("schema").value(kEnvironmentSchema)
      .key("schema_version").value(kEnvironmentSchemaVersion);
  write_environment_members(json, environment);
  json.end_object();

  write_measure_configuration(json, "device", configuration);

  const std::shared_ptr<const Workload> workload = workload_of(*this);
  workload->write_json(json);

  json.key("prediction");
  if (prediction) {
    const PredictionTarget& target = prediction->target;
    json.begin_object()
        .key("compute_capability").value(std::to_string(target.compute_capability_major) + "." +
                                         std::to_string(target.compute_capability_minor))
        .key("cublas_workspace_bytes").value(target.cublas_workspace_bytes)
        .key("cublaslt_workspace_bytes").value(target.cublaslt_workspace_bytes)
        .key("workspace_source").value(target.workspace_source)
        .key("cublaslt_used").value(prediction->cublaslt_used)
        .key("exact_counters").value(exact_predicted_counters())
        .key("counters").value(static_cast<int>(6 * phases.size()))
        .key("caveats").value(prediction->caveats)
        .end_object();
  } else {
    json.null();
  }

  json.key("phases").begin_array();
  for (std::size_t index = 0; index < phases.size(); ++index) {
    const PhaseRow& row = phases[index];
    json.begin_object();
    write_phase_row_members(json, row);
    const PhasePrediction* predicted = predicted_row(index);
    json.key("predicted");
    if (predicted) {
      json.begin_object();
      write_phase_counters(json, predicted->baseline, predicted->end);
      json.end_object().key("difference").begin_object();
      write_phase_counter_differences(json, row.baseline, row.end, predicted->baseline, predicted->end);
      json.end_object();
    } else {
      json.null().key("difference").null();
    }
    json.end_object();
  }
  json.end_array();
  write_timing(json, timing);
  if (run) workload->write_run_json(json, *run);
  json.key("notes").value(measurement_notes(*workload));
  return json.finish();
}

const PhasePrediction* Measurement::predicted_row(std::size_t index) const {
  if (!prediction || index >= prediction->phases.size()) return nullptr;
  const PhasePrediction& predicted = prediction->phases[index];
  if (index >= phases.size() || predicted.phase != phases[index].phase ||
      predicted.repeat != phases[index].repeat || predicted.sequence != phases[index].sequence ||
      predicted.step != phases[index].step)
    return nullptr;
  return &predicted;
}

int Measurement::exact_predicted_counters() const {
  int exact = 0;
  for (std::size_t index = 0; index < phases.size(); ++index) {
    const PhasePrediction* predicted = predicted_row(index);
    if (!predicted) continue;
    const PhaseRow& row = phases[index];
    exact += (row.baseline.allocated_bytes == predicted->baseline.allocated_bytes) +
             (row.end.allocated_bytes == predicted->end.allocated_bytes) +
             (row.baseline.reserved_bytes == predicted->baseline.reserved_bytes) +
             (row.end.reserved_bytes == predicted->end.reserved_bytes) +
             (row.end.peak_allocated_bytes == predicted->end.peak_allocated_bytes) +
             (row.end.peak_reserved_bytes == predicted->end.peak_reserved_bytes);
  }
  return exact;
}

std::string Measurement::heading() const { return workload_of(*this)->heading(); }

namespace {

// The prediction beside the measured rows: how many counters it got exactly, and each one it
// did not, with the difference.
std::string prediction_text(const Measurement& measurement, const Workload& workload) {
  if (!measurement.prediction) return "\nPrediction: none (" + workload.no_prediction_reason() + ").\n";
  const MemoryPrediction& prediction = *measurement.prediction;
  std::string text = "\nPrediction (made before the GPU was touched; workspaces " +
                     prediction.target.workspace_source + "): " +
                     std::to_string(measurement.exact_predicted_counters()) + " of " +
                     std::to_string(6 * measurement.phases.size()) + " counters exact\n";
  for (std::size_t index = 0; index < measurement.phases.size(); ++index) {
    const PhaseRow& row = measurement.phases[index];
    const PhasePrediction* predicted = measurement.predicted_row(index);
    if (!predicted) continue;
    const struct {
      const char* name;
      std::uint64_t measured, expected;
    } counters[] = {
        {"allocated at baseline", row.baseline.allocated_bytes, predicted->baseline.allocated_bytes},
        {"allocated at end", row.end.allocated_bytes, predicted->end.allocated_bytes},
        {"reserved at baseline", row.baseline.reserved_bytes, predicted->baseline.reserved_bytes},
        {"reserved at end", row.end.reserved_bytes, predicted->end.reserved_bytes},
        {"peak allocated", row.end.peak_allocated_bytes, predicted->end.peak_allocated_bytes},
        {"peak reserved", row.end.peak_reserved_bytes, predicted->end.peak_reserved_bytes},
    };
    for (const auto& counter : counters) {
      if (counter.measured == counter.expected) continue;
      text += "  " + row.phase + (row.repeat > 0 ? " " + std::to_string(row.repeat) : "") + ": " +
              counter.name + " measured " + std::to_string(counter.measured) + ", predicted " +
              std::to_string(counter.expected) + " (difference " +
              std::to_string(static_cast<std::int64_t>(counter.measured) -
                             static_cast<std::int64_t>(counter.expected)) +
              ")\n";
    }
  }
  for (const std::string& caveat : prediction.caveats) text += "  caveat: " + caveat + "\n";
  return text;
}

}  // namespace

std::string Measurement::to_text() const {
  std::string gpu_name;
  if (const GpuDevice* gpu = environment.selected_gpu()) gpu_name = " (" + printable(gpu->name) + ")";
  std::string text = "Measurement on " + printable(configuration.device) + gpu_name;
  if (environment.stack) text += ", LibTorch " + printable(environment.stack->torch_version);
  if (environment.from_test_double()) text += "\n" + std::string(kTestDoubleMark);
  const std::shared_ptr<const Workload> workload = workload_of(*this);
  const std::string repetition = workload->repetition_text(configuration);
  text += "\n" + workload->measurement_text() + (repetition.empty() ? "; seed " : "; " + repetition + ", seed ") +
          std::to_string(configuration.seed) + "\n\n";
  char middle[512];
  std::snprintf(middle, sizeof middle, " %8s %12s %12s", "forwards", "host ms", "GPU event ms");
  const int phase_width = workload->phase_column_width();
  text += phase_table_header(middle, phase_width);
  for (const PhaseRow& row : phases) {
    std::snprintf(middle, sizeof middle, " %8d %12.3f %12s", row.forwards, row.host_seconds * 1000.0,
                  format_milliseconds(row.gpu_event_seconds).c_str());
    text += phase_table_row(phase_label(row.phase, row.sequence, row.step), row.repeat, middle, row.baseline,
                            row.end, phase_width);
  }
  std::vector<PeakRow> peaks;
  for (const PhaseRow& row : phases)
    peaks.push_back({peak_row_label(row.phase, row.sequence, row.step, row.repeat), row.end, "", "", ""});
  text += "\n" + peak_summary_lines(peaks);
  text += timing_text(timing);
  if (run) text += workload->run_text(*run);
  text += prediction_text(*this, *workload);
  text += "\nBytes are this process's caching-allocator counters on the selected GPU. Notes:\n";
  for (const auto& note : measurement_notes(*workload)) text += "  - " + note + "\n";
  return text;
}

Measurement Measurement::from_json(const std::string& text, const std::string& source) {
  try {
    return read_measurement_document(text, source);
  } catch (const NotAMeasurement&) {
    throw;
  } catch (const DataFileError& error) {  // a member the reader refused: "SOURCE: at /...: reason"
    const std::string message = error.what();
    const std::string prefix = source + ": ";
    throw NotAMeasurement(message, message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size())
                                                                                    : message);
  }
}

Measurement Measurement::read(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path, "measurement", kMaxJsonDocumentBytes);
  } catch (const InputFileError& error) {
    throw NotAMeasurement(error.what(), error.reason());
  }
  return from_json(text, path);
}

}  // namespace iteragpu
