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
#include "measurement/measurement_json.hpp"
#include "measurement/phase_protocol.hpp"
#include "mechanics/input_file.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu {
namespace {

constexpr const char* kPhaseRowSchema = "iteragpu.phase-row";
constexpr int kPhaseRowSchemaVersion = 1;

MeasureConfiguration read_configuration(const JsonObjectReader& json) {
  MeasureConfiguration request;
  json.read("device", request.device).read("batch", request.batch).read("context", request.context)
      .read("width", request.width).read("hidden", request.hidden).read("dtype", request.dtype)
      .read("warmup", request.warmup).read("repeats", request.repeats).read("seed", request.seed);
  request.output.clear();  // where the file was written is not part of it
  return request;
}

// The model follows from the configuration; the file's synthetic_model must say the same.
SyntheticModel derived_model(const MeasureConfiguration& request, const JsonObjectReader& configuration,
                             const JsonObjectReader& written) {
  SyntheticModel model;
  try {
    model = SyntheticModel::from(request);
  } catch (const UsageError& error) {
    configuration.fail(error.field(), error.reason());
  }
  const auto expect = [&written](const char* name, std::int64_t value) {
    if (written.int64(name) != value)
      written.fail(name, "is " + std::to_string(written.int64(name)) + " but the configuration gives " +
                             std::to_string(value));
  };
  if (written.text("dtype") != model.dtype) written.fail("dtype", "differs from the configuration's");
  expect("dtype_bytes", model.dtype_bytes);
  expect("parameter_count", model.parameter_count);
  expect("parameter_bytes", model.parameter_bytes);
  expect("input_bytes", model.input_bytes);
  const std::vector<std::int64_t> shape = {model.batch, model.context, model.width};
  if (written.int64s("input_shape") != shape) written.fail("input_shape", "differs from the configuration's");
  if (written.int64s("output_shape") != shape) written.fail("output_shape", "differs from the configuration's");
  return model;
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
  if (measurement.environment.stack)
    for (const GpuDevice& gpu : measurement.environment.stack->gpus)
      if (gpu.index == measurement.environment.selected_index) target.gpu_name = gpu.name;
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
  if (row.phase != "model_load" && row.phase != "inputs" && row.phase != "cold_forward" &&
      row.phase != "warmup" && row.phase != "warm_forward")
    json.fail("phase", quoted_for_message(row.phase) + " is not a phase of the protocol");
  // A repeat number belongs to warm_forward rows only.
  if ((row.phase == "warm_forward") == json.is_null("repeat"))
    json.fail("repeat", row.phase == "warm_forward" ? "missing for a warm_forward row" : "set for a " + row.phase + " row");
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

Measurement Measurement::from_json(const std::string& text, const std::string& source) {
  rapidjson::Document document;
  const std::string problem =
      parse_schema_document(text, kMeasurementSchema, "measurement.schema.json", document);
  if (!problem.empty()) {
    // `measure --device all` writes a summary beside the per-device measurements: say which.
    const bool summary = document.IsObject() && document.HasMember("schema") && document["schema"].IsString() &&
                         std::string(document["schema"].GetString()) == "iteragpu.measurement-summary";
    throw DataFileError(source + ": not an iteragpu measurement (" + problem + ")" +
                        (summary ? "; this is a multi-device summary: use the per-device measurement "
                                   "files it lists"
                                 : ""));
  }
  // The measurement schema requires only what a measurement needs of its environment
  // section; the section as a whole follows the environment report's own schema.
  const std::string environment_problem = schema_violation_of(document["environment"], "environment.schema.json");
  if (!environment_problem.empty())
    throw DataFileError(source + ": not an iteragpu measurement (environment invalid " + environment_problem + ")");

  const JsonObjectReader json(document, source);
  Measurement measurement;
  measurement.environment = read_environment_members(json.object("environment"));
  const JsonObjectReader configuration = json.object("configuration");
  measurement.configuration = read_configuration(configuration);
  if (measurement.configuration.device != measurement.environment.selected_device)
    configuration.fail("device", measurement.configuration.device + " is not the environment's selected device " +
                                     measurement.environment.selected_device);
  measurement.model = derived_model(measurement.configuration, configuration, json.object("synthetic_model"));

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

Measurement Measurement::read(const std::string& path) {
  return from_json(read_input_file(path, "measurement", kMaxJsonDocumentBytes), path);
}

}  // namespace iteragpu
