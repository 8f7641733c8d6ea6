// A measurement file read back into the values that wrote it (Measurement::from_json, read),
// and a phase row streamed on its own. What is read is checked to be a whole measurement:
// valid against the schemas, a synthetic model that follows from the configuration, the rows
// the configuration produces in the protocol's order, and a prediction summary that agrees
// with its rows. Members derived from others (layers, shapes, differences, notes) are not
// kept: to_json() writes them again from what was read.

#include <rapidjson/document.h>

#include "environment/environment_json.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "protocol/phase_row_json.hpp"
#include "measurement/measurement_schema.hpp"
#include "workload/configuration_json.hpp"
#include "workload/workload.hpp"
#include "protocol/phase_protocol.hpp"
#include "mechanics/input_file.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu {
namespace {


// The workload follows from the configuration; the file's description of it must say the same.
std::unique_ptr<const Workload> derived_workload(const MeasureConfiguration& request,
                                                 const JsonObjectReader& configuration,
                                                 const JsonObjectReader& document) {
  std::unique_ptr<const Workload> workload;
  try {
    workload = workload_for(request);
  } catch (const UsageError& error) {
    configuration.fail(error.field(), error.reason());
  }
  workload->check_json(document);
  return workload;
}

// The rows run_phase_protocol produces, in its order: model_load, inputs, cold_forward,
// warmup (when warmup > 0, all its forwards in one row), one warm_forward per repeat.
void check_row_sequence(const std::vector<PhaseRow>& rows, const MeasureConfiguration& request,
                        const JsonObjectReader& json) {
  std::vector<PhaseRow> expected(3);
  expected[0].phase = "model_load";
  expected[1].phase = "inputs";
  expected[2].phase = "cold_forward";
  expected[2].forwards = 1;
  if (request.warmup > 0) {
    expected.emplace_back();
    expected.back().phase = "warmup";
    expected.back().forwards = request.warmup;
  }
  for (int repeat = 1; repeat <= request.repeats; ++repeat) {
    expected.emplace_back();
    expected.back().phase = "warm_forward";
    expected.back().repeat = repeat;
    expected.back().forwards = 1;
  }
  if (rows.size() != expected.size() || static_cast<int>(rows.size()) != phase_row_count(request))
    json.fail("phases", "has " + std::to_string(rows.size()) + " rows but the configuration gives " +
                            std::to_string(expected.size()));
  for (std::size_t index = 0; index < rows.size(); ++index) {
    const PhaseRow& row = rows[index];
    const PhaseRow& want = expected[index];
    if (row.phase != want.phase || row.repeat != want.repeat || row.forwards != want.forwards)
      json.fail("phases/" + std::to_string(index),
                "is " + row.phase + " (repeat " + std::to_string(row.repeat) + ", " +
                    std::to_string(row.forwards) + " forwards) where the protocol has " + want.phase +
                    " (repeat " + std::to_string(want.repeat) + ", " + std::to_string(want.forwards) +
                    " forwards)");
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
  derived_workload(measurement.configuration, configuration, json);
  measurement.model = SyntheticModel::from(measurement.configuration);

  const std::vector<JsonObjectReader> rows = json.objects("phases");
  for (const JsonObjectReader& row : rows) measurement.phases.push_back(read_phase_row_members(row));
  check_row_sequence(measurement.phases, measurement.configuration, json);

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
                                          : summarize_warm_repeats(measurement.phases);
  return measurement;
}

}  // namespace

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
