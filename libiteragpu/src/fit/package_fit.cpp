// Which packages' GPU holds a checkpoint (package_fit.hpp): one prediction per compute
// capability, each GPU model's memory from data/gpu-memory.csv, and the cost per million
// generated or trained tokens from a rate measured on that GPU model.

#include "iteragpu/package_fit.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "iteragpu/decoder_checkpoint.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measurement.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/csv_reader.hpp"
#include "mechanics/json_output.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/installation.hpp"
#include "mechanics/text_table.hpp"
#include "mechanics/wording.hpp"
#include "workload/configuration_json.hpp"
#include "workload/decoder_workload.hpp"
#include "workload/workload.hpp"

namespace iteragpu {
namespace {

constexpr const char* kFitSchema = "iteragpu.package-fit";
constexpr int kFitSchemaVersion = 2;
const std::vector<std::string> kGpuMemoryHeader = {"gpu", "compute_capability", "memory_bytes", "memory_source",
                                                   "outside_allocator_bytes", "outside_allocator_source"};
// The headroom a fit needs where a figure is not this project's own measurement: a published
// runtime total moves with the driver (up to ~115 MiB between the readings found of one GPU
// model), and an allowance for the footprint outside the allocator is another GPU's figure
// (2 % of the memory). Within it the answer is "uncertain".
constexpr std::uint64_t kPublishedTotalMargin = std::uint64_t{256} << 20;
constexpr std::uint64_t kAllowanceMarginPerMille = 20;
// The headroom a verdict keeps where the needed bytes carry caveats that were each checked
// against recorded measurements (PredictionCaveat::recorded_bound_bytes: 8 MiB in the small
// cells, one MLP activation's segment for training): 1 GiB, since the recorded cells are few,
// or the bound itself where it is larger. Within it the answer is "uncertain".
constexpr std::uint64_t kRecordedCaveatMargin = std::uint64_t{1} << 30;
// Figures in the table stay below this, so that needed bytes and headroom are exact in 64 bits.
constexpr std::uint64_t kMaxTableBytes = std::uint64_t{1} << 62;
constexpr std::pair<const char*, GpuMemory::Figure> kMemoryFigures[] = {
    {"measured:", GpuMemory::Figure::kMeasured},
    {"reported:", GpuMemory::Figure::kReported},
    {"nominal:", GpuMemory::Figure::kNominal}};

std::uint64_t byte_count(const CsvRecord& record, std::size_t column, const std::string& path) {
  try {
    const std::uint64_t bytes = parse_whole_number_up_to_uint64(record.fields[column], kGpuMemoryHeader[column]);
    if (bytes >= kMaxTableBytes)
      throw data_file_error(path, record.line, kGpuMemoryHeader[column] + ": " + std::to_string(bytes) +
                                                   " is beyond any GPU; expected fewer than 2^62 bytes");
    return bytes;
  } catch (const UsageError& error) {
    throw data_file_error(path, record.line, error.field() + ": " + error.reason());
  }
}


// The needed memory as the table shows it: ">=" before a lower bound, "~" before a figure a
// caveat leaves unchecked either way (as predict marks its counters).
std::string needed_text(const PackageFit& fit) {
  const bool lower_bound = fit.required_unchecked == "at least";
  const std::string mark = lower_bound ? ">=" : fit.required_unchecked.empty() ? "" : "~";
  return mark + memory_size(fit.required_bytes, lower_bound ? exact::Rounding::kDown : exact::Rounding::kHalfAwayFromZero);
}

// The headroom as the table shows it: the memory less the needed bytes, so "<=" (rounded up)
// where the need is a lower bound, "~" where a caveat leaves it unchecked either way.
std::string headroom_text(const PackageFit& fit) {
  const bool upper_bound = fit.required_unchecked == "at least";
  const std::string mark = upper_bound ? "<=" : fit.required_unchecked.empty() ? "" : "~";
  return mark + memory_size(fit.headroom_bytes, upper_bound ? exact::Rounding::kUp : exact::Rounding::kHalfAwayFromZero);
}


constexpr const char* kTrainedTokensMethod =
    "The cost per million trained tokens is the package price per GPU-hour (the package price over its GPUs x "
    "days x 24 hours) / (trained tokens/s x 3600) x 10^6. The rate is the measurement's double (batch x sequence "
    "length over the median host time of a warm step: the forward, backward and optimizer rows of steps 2 and on, "
    "on the one GPU measured) written as its shortest decimal text and taken as exact; displayed in US dollars "
    "rounded to 4 decimal places, halves away from zero. It holds for the GPU, batch, sequence length and "
    "fine-tuning options measured, with the GPU training for every hour paid for.";

// The token rate of a checkpoint measurement of this very model and configuration: its decode
// rate (generation) or its trained tokens per second (fine-tuning).
struct MeasuredRate {
  std::string device;
  bool trained = false;
  double tokens_per_second = 0;
};

MeasuredRate measured_rate(const std::string& path, const MeasureConfiguration& configuration,
                           const DecoderCheckpoint& checkpoint) {
  Measurement measurement;
  try {
    measurement = Measurement::read(path);
  } catch (const NotAMeasurement& error) {
    throw UsageError("measurement", quoted_for_message(path) + " is not an iteragpu measurement (" +
                                        error.problem() + "); expected the JSON file of iteragpu measure --model");
  }
  const bool training = configuration.workload_options.has("train");
  auto refuse = [&](const std::string& why) {
    throw UsageError("measurement", quoted_for_message(path) + " " + why + "; expected a measure --model" +
                                        (training ? " --train" : "") +
                                        " run of the same checkpoint, batch, context, dtype and workload options");
  };
  if (!measurement.checkpoint) refuse("measured the synthetic MLP, not a checkpoint");
  if (measurement.environment.from_other_than_libtorch())
    refuse("was made by a test double (scripted figures, not a GPU)");
  const CheckpointRecord& record = *measurement.checkpoint;
  const MeasureConfiguration& measured = measurement.configuration;
  const std::string measured_kind = workload_kind_of(measured).name;
  if (measured_kind != workload_kind_of(configuration).name)
    refuse("ran the " + measured_kind + " workload, not " + workload_kind_of(configuration).name);
  auto differs = [&](const std::string& what, const std::string& measured_value, const std::string& asked) {
    if (measured_value != asked)
      refuse("has " + what + " " + printable(measured_value) + ", not " + printable(asked));
  };
  const DecoderArchitecture& a = checkpoint.architecture;
  differs("architecture", record.architecture.architecture, a.architecture);
  differs("parameter count", std::to_string(record.parameter_count), std::to_string(checkpoint.parameter_count));
  differs("layers", std::to_string(record.architecture.layers), std::to_string(a.layers));
  differs("hidden size", std::to_string(record.architecture.hidden_size), std::to_string(a.hidden_size));
  differs("batch", std::to_string(measured.batch), std::to_string(configuration.batch));
  differs("context", std::to_string(measured.context), std::to_string(configuration.context));
  differs("dtype", measured.dtype, configuration.dtype);
  // Every option of the workload but the number of steps (the rate is the warm steps' median).
  for (const auto& [name, value] : configuration.workload_options.values()) {
    if (name == "steps") continue;
    const WorkloadOptions::Value* given = measured.workload_options.find(name);
    differs(name, given ? WorkloadOptions::text_of(*given) : "(none)", WorkloadOptions::text_of(value));
  }
  MeasuredRate rate;
  rate.trained = training;
  const std::optional<double> tokens_per_second = measured_tokens_per_second(measurement);
  if (!tokens_per_second)
    refuse(training ? "has no trained-token rate (no warm step)" : "has no decode rate");
  rate.tokens_per_second = *tokens_per_second;
  const GpuDevice* gpu = measurement.environment.selected_gpu();
  if (gpu == nullptr) refuse("names no GPU");
  rate.device = gpu->name;
  return rate;
}

// The predicted peak reserved bytes, whether a caveat leaves that peak unchecked: "" (exact),
// "at least" or "may differ" (PackageFit::required_unchecked), and where each such caveat was
// checked against recorded measurements, the most they moved it (PhasePrediction).
struct PredictedPeak {
  std::uint64_t bytes = 0;
  std::string unchecked;
  std::uint64_t recorded_bound_bytes = 0;
};
PredictedPeak peak_reserved(const MemoryPrediction& prediction) {
  PredictedPeak peak;
  for (const PhasePrediction& row : prediction.phases) peak.bytes = std::max(peak.bytes, row.end.peak_reserved_bytes);
  // The rows at the peak whose peak a caveat marks.
  const auto marked_peak = [&peak](const PhasePrediction& row) {
    return row.end.peak_reserved_bytes == peak.bytes &&
           std::find(row.uncertain_counters.begin(), row.uncertain_counters.end(), "peak_reserved_bytes") !=
               row.uncertain_counters.end();
  };
  for (const PhasePrediction& row : prediction.phases)
    if (marked_peak(row) && peak.unchecked != "may differ") peak.unchecked = row.lower_bound ? "at least" : "may differ";
  peak.recorded_bound_bytes = recorded_bound_bytes(prediction.phases, marked_peak);
  return peak;
}

// The verdict and its reason (PackageFit::Verdict): "fits" only on figures that all hold on
// the real card. A need whose caveats each moved it by a few MiB at most in the recorded cells
// (`recorded_bound`) is judged as exact with kRecordedCaveatMargin (or the bound, if larger) kept either way.
void judge(PackageFit& fit, std::uint64_t recorded_bound) {
  const GpuMemory& memory = fit.memory;
  const bool exact_need = fit.required_unchecked.empty();
  const bool need_is_lower_bound = fit.required_unchecked == "at least";
  const bool recorded_need = !exact_need && !need_is_lower_bound && recorded_bound > 0;
  const std::string unchecked_need = "the needed bytes are " +
                                     std::string(need_is_lower_bound ? "a lower bound" : "unchecked either way") +
                                     " here (a caveat below)";
  const std::string recorded_caveats = "the caveats below moved the needed bytes by at most " +
                                       memory_size(recorded_bound) + " in the recorded cells";
  const std::uint64_t recorded_margin = std::max(kRecordedCaveatMargin, recorded_bound);
  if (fit.headroom_bytes < 0) {
    const std::string short_by = "short by " + bytes_and_size(-fit.headroom_bytes);
    if (exact_need || need_is_lower_bound) {
      fit.verdict = PackageFit::Verdict::kDoesNotFit;
      fit.reason = short_by + (memory.memory_is_runtime_total() ? "" : " even of the nominal size, more than the runtime reports");
    } else if (recorded_need && static_cast<std::uint64_t>(-fit.headroom_bytes) >= recorded_margin) {
      fit.verdict = PackageFit::Verdict::kDoesNotFit;
      fit.reason = short_by + ", more than the " + memory_size(recorded_margin) + " kept because " +
                   recorded_caveats;
    } else {
      fit.verdict = PackageFit::Verdict::kUncertain;
      fit.reason = short_by + ", but " + (recorded_need ? recorded_caveats + " (" + memory_size(recorded_margin) +
                                                              " is kept)"
                                                        : unchecked_need);
    }
    return;
  }
  fit.verdict = PackageFit::Verdict::kUncertain;
  if (!exact_need && !recorded_need) {
    fit.reason = unchecked_need;
  } else if (!memory.memory_is_runtime_total()) {
    fit.reason = "the memory is the vendor's nominal size; the runtime reports less, by an amount not known here";
  } else {
    const bool published = memory.memory_figure == GpuMemory::Figure::kReported;
    const bool allowance = !memory.outside_allocator_measured();
    const std::uint64_t margin = std::max({published ? kPublishedTotalMargin : 0,
                                           allowance ? memory.memory_bytes / 1000 * kAllowanceMarginPerMille : 0,
                                           recorded_need ? recorded_margin : 0});
    std::string figures = published ? "a published runtime total (drivers differ by up to ~115 MiB)"
                                    : "the runtime total measured";
    figures += allowance ? " and an allowance for the footprint outside the allocator" : ", the footprint too";
    if (recorded_need) figures += "; " + recorded_caveats;
    if (static_cast<std::uint64_t>(fit.headroom_bytes) < margin) {
      fit.reason = "less than " + memory_size(margin) + " to spare on " + figures;
    } else {
      fit.verdict = PackageFit::Verdict::kFits;
      fit.reason = figures + (margin ? ", with " + memory_size(margin) + " to spare" : "");
    }
  }
}

}  // namespace

std::vector<GpuMemory> load_gpu_memory(const std::string& path) {
  const CsvTable table = read_csv_file(path);
  if (table.header.fields != kGpuMemoryHeader)
    throw data_file_error(path, table.header.line, "header is not 'gpu,compute_capability,memory_bytes,"
                                                   "memory_source,outside_allocator_bytes,outside_allocator_source'");
  std::vector<GpuMemory> rows;
  std::set<std::string> seen;
  for (const CsvRecord& record : table.rows) {
    GpuMemory row;
    row.line = record.line;
    row.gpu = record.fields[0];
    if (row.gpu.empty()) throw data_file_error(path, record.line, "gpu: empty");
    if (!seen.insert(row.gpu).second) throw data_file_error(path, record.line, "gpu " + row.gpu + " is listed twice");
    row.compute_capability = record.fields[1];
    int major = 0, minor = 0;
    if (!row.compute_capability.empty() && !parse_compute_capability(row.compute_capability, major, minor))
      throw data_file_error(path, record.line, "compute_capability: '" + row.compute_capability +
                                                   "' is not MAJOR.MINOR (or empty for a GPU not assessed)");
    row.memory_bytes = byte_count(record, 2, path);
    if (row.memory_bytes == 0) throw data_file_error(path, record.line, "memory_bytes: 0");
    row.memory_source = record.fields[3];
    const auto figure = std::find_if(std::begin(kMemoryFigures), std::end(kMemoryFigures),
                                     [&](const auto& kind) { return row.memory_source.rfind(kind.first, 0) == 0; });
    if (figure == std::end(kMemoryFigures))
      throw data_file_error(path, record.line, "memory_source: " + quoted_for_message(row.memory_source) +
                                                   " does not say what the figure is; expected it to start "
                                                   "'measured:', 'reported:' (the runtime's total) or 'nominal:'");
    row.memory_figure = figure->second;
    row.outside_allocator_bytes = byte_count(record, 4, path);
    row.outside_allocator_source = record.fields[5];
    for (const std::string* source : {&row.memory_source, &row.outside_allocator_source})
      if (source->empty()) throw data_file_error(path, record.line, "a source column is empty: say where the figure comes from");
    rows.push_back(std::move(row));
  }
  return rows;
}

const char* verdict_text(PackageFit::Verdict verdict) {
  switch (verdict) {
    case PackageFit::Verdict::kFits: return "fits";
    case PackageFit::Verdict::kDoesNotFit: return "does not fit";
    case PackageFit::Verdict::kUncertain: return "uncertain";
    case PackageFit::Verdict::kNotAssessed: return "not assessed";
  }
  return "";
}

std::string shipped_gpu_memory_path() { return shipped_data_path("gpu-memory.csv", "GPU memory table"); }

PackageFitReport fit_packages(const PackageFitRequest& request, const PackageCalculator& calculator,
                              const std::vector<GpuMemory>& gpu_memory, const std::string& gpu_memory_path) {
  if (request.configuration.model.empty())
    throw UsageError("model", "required: the checkpoint folder whose fit to judge");
  const MeasureConfiguration configuration = request.configuration.checked();
  PackageFitReport report;
  report.request = request;
  report.request.configuration = configuration;
  report.catalog_path = calculator.catalog().path();
  report.gpu_memory_path = gpu_memory_path;

  std::optional<MeasuredRate> rate;
  if (!request.measurement_file.empty())
    rate = measured_rate(request.measurement_file, configuration, checkpoint_of(configuration));

  // A duration is priced where the catalog has it; one it never has is a mistake.
  std::set<std::pair<std::string, std::string>> priced_durations;  // (gpu, days)
  std::set<int> durations;
  for (const CatalogEntry& entry : calculator.catalog().entries()) {
    priced_durations.emplace(entry.gpu, std::to_string(entry.days));
    durations.insert(entry.days);
  }
  if (request.days && std::none_of(durations.begin(), durations.end(),
                                   [&](int days) { return std::to_string(days) == *request.days; })) {
    std::string accepted;
    for (int days : durations) accepted += (accepted.empty() ? "" : ", ") + std::to_string(days);
    throw UsageError("days", quoted_for_message(*request.days) + " is not a duration of the catalog; expected " +
                                 accepted);
  }

  std::map<std::string, const GpuMemory*> memory_of;
  for (const GpuMemory& row : gpu_memory) memory_of[row.gpu] = &row;
  // The predicted peak reserved, and whether a caveat leaves it unchecked (PackageFit).
  std::map<std::tuple<std::uint64_t, std::uint64_t, bool>, PredictedPeak> peak_of;
  std::set<std::string> priced;
  for (const CatalogEntry& entry : calculator.catalog().entries()) {
    if (!priced.insert(entry.gpu).second) continue;  // one row per GPU model
    PackageFit fit;
    fit.gpu_name = entry.gpu_name;
    fit.memory.gpu = entry.gpu;
    const auto found = memory_of.find(entry.gpu);
    if (found == memory_of.end()) {
      fit.reason = "the GPU memory table has no row for " + entry.gpu;
      report.packages.push_back(std::move(fit));
      continue;
    }
    fit.memory = *found->second;
    if (request.days && priced_durations.count({entry.gpu, *request.days}))
      fit.quote = calculator.quote({entry.gpu, *request.days, "1", std::nullopt});
    if (fit.memory.compute_capability.empty()) {
      fit.reason = fit.memory.outside_allocator_source;
      report.packages.push_back(std::move(fit));
      continue;
    }
    // GPUs whose prediction targets agree (the same workspaces, the same caveats) share one
    // prediction: the catalog's 14 NVIDIA models need two.
    const PredictionTarget target = PredictionTarget::resolve("", fit.memory.compute_capability);
    const bool checked_capability = target.compute_capability_major == 9 && target.compute_capability_minor == 0;
    const auto key = std::make_tuple(target.cublas_workspace_bytes, target.cublaslt_workspace_bytes, checked_capability);
    auto predicted = peak_of.find(key);
    if (predicted == peak_of.end()) {
      const MemoryPrediction prediction = MemoryPredictor::predict(configuration, target);
      predicted = peak_of.emplace(key, peak_reserved(prediction)).first;
      for (const std::string& caveat : prediction.caveats)
        if (std::find(report.caveats.begin(), report.caveats.end(), caveat) == report.caveats.end())
          report.caveats.push_back(caveat);
    }
    fit.predicted_peak_reserved_bytes = predicted->second.bytes;
    fit.required_unchecked = predicted->second.unchecked;
    std::uint64_t recorded_bound = predicted->second.recorded_bound_bytes;
    fit.required_bytes = fit.predicted_peak_reserved_bytes + fit.memory.outside_allocator_bytes;
    fit.headroom_bytes = static_cast<std::int64_t>(fit.memory.memory_bytes) - static_cast<std::int64_t>(fit.required_bytes);
    // Past the card's memory the allocator frees its cached segments before it gives up
    // (tests/cpp/allocator_capacity_test.cpp, on the H100): predicted again with this card's
    // capacity, the run either holds after all or runs out of memory there too.
    std::string capped_note;
    if (fit.headroom_bytes < 0) {
      PredictionTarget capped = target;
      capped.allocator_capacity_bytes = fit.memory.memory_bytes > fit.memory.outside_allocator_bytes
                                            ? fit.memory.memory_bytes - fit.memory.outside_allocator_bytes
                                            : 1;
      try {
        const PredictedPeak peak = peak_reserved(MemoryPredictor::predict(configuration, capped));
        capped_note = "; only once the allocator has freed " +
                      grouped_count(fit.predicted_peak_reserved_bytes - peak.bytes) + " bytes of cached segments";
        fit.predicted_peak_reserved_bytes = peak.bytes;
        fit.required_unchecked = peak.unchecked;
        recorded_bound = peak.recorded_bound_bytes;
        fit.required_bytes = peak.bytes + fit.memory.outside_allocator_bytes;
        fit.headroom_bytes = static_cast<std::int64_t>(fit.memory.memory_bytes) - static_cast<std::int64_t>(fit.required_bytes);
      } catch (const OutOfMemory&) {
        capped_note = ": out of memory even after the allocator frees its cached segments";
      }
    }
    judge(fit, recorded_bound);
    fit.reason += capped_note;
    if (rate && fit.quote && entry.covers_device(rate->device))
      fit.tokens_cost = PackageTokensCost{rate->device, rate->trained, million_tokens_price(rate->tokens_per_second, *fit.quote)};
    report.packages.push_back(std::move(fit));
  }
  report.heading = workload_for(configuration)->heading();
  return report;
}

std::string PackageFitReport::to_text() const {
  const MeasureConfiguration& c = request.configuration;
  std::string text = "Which GPU holds " + heading + "\n" + c.model_origin().heading_line();
  text += "Needed on one GPU: the predicted peak reserved bytes (iteragpu predict --model, per compute capability) "
          "plus the process's memory outside the caching allocator (CUDA context and libraries).\n";
  text += "GPU memory: " + gpu_memory_path + "\nCatalog: " + catalog_path + "\n\n";
  // Sizes in GiB (MiB below 1 GiB) in the table, the exact bytes in the lines under it
  // and in JSON; with --days one lot's price and, where a rate was measured on that GPU
  // model, the cost of a million generated (or trained) tokens.
  TextTable table;
  table.header = {"gpu", "cc", "memory", "needed", "headroom", "verdict"};
  table.right_aligned = {false, false, true, true, true, false};
  if (request.days) {
    table.header.insert(table.header.end(), {*request.days + "-day lot", "GPUs", "per 1M tokens"});
    table.right_aligned.insert(table.right_aligned.end(), {true, true, true});
  }
  for (const PackageFit& fit : packages) {
    const bool assessed = fit.verdict != PackageFit::Verdict::kNotAssessed;
    std::vector<std::string> row = {fit.memory.gpu,
                                    fit.memory.compute_capability.empty() ? "-" : fit.memory.compute_capability,
                                    memory_size(fit.memory.memory_bytes),
                                    fit.required_bytes ? needed_text(fit) : "-",
                                    assessed ? headroom_text(fit) : "-",
                                    verdict_text(fit.verdict)};
    if (request.days) {
      row.push_back(fit.quote ? "$" + fit.quote->total_usd.grouped(2) : "-");
      row.push_back(fit.quote ? std::to_string(fit.quote->entry.gpus_per_lot) : "-");
      row.push_back(fit.tokens_cost ? "$" + fit.tokens_cost->price.display_usd : "-");
    }
    table.rows.push_back(std::move(row));
  }
  text += table.to_text("");
  text += "\nWhy:\n";
  for (const PackageFit& fit : packages) {
    text += "  " + fit.memory.gpu + ": " + fit.reason;
    if (fit.required_bytes)
      text += " (needed " + std::string(fit.required_unchecked == "at least" ? "at least " : "") +
              bytes_and_size(fit.required_bytes) + " of " + bytes_and_size(fit.memory.memory_bytes) + ")";
    text += "\n";
  }
  // Where each figure comes from, each source once with the GPU models it is used for.
  std::vector<std::pair<std::string, std::string>> sources;  // (source, gpus)
  auto add_source = [&sources](const std::string& source, const std::string& gpu) {
    for (auto& [text, gpus] : sources)
      if (text == source) return void(gpus += ", " + gpu);
    sources.emplace_back(source, gpu);
  };
  for (const PackageFit& fit : packages) {
    add_source("memory " + fit.memory.memory_source, fit.memory.gpu);
    add_source("outside the allocator " + fit.memory.outside_allocator_source, fit.memory.gpu);
  }
  text += "Sources:\n";
  for (const auto& [source, gpus] : sources) text += "  " + gpus + ": " + source + "\n";
  if (request.days) {
    text += "\nPrices: " + *request.days + "-day packages, one lot; ";
    text += "the shipped catalog's prices are illustrative (invented, not an offer).\n";
    const bool training = c.workload_options.has("train");
    if (request.measurement_file.empty())
      text += std::string("Cost per million tokens: not computed: no ") +
              (training ? "trained-token rate given (--measurement FILE of a measure --model --train "
                        : "decode rate given (--measurement FILE of a measure --model ") +
              "run of this checkpoint and configuration on that GPU model).\n";
    else if (training)
      text += "Cost per million trained tokens, only on the GPU model the training rate of " + request.measurement_file +
              " was measured on: " + kTrainedTokensMethod + "\n";
    else
      text += "Cost per million generated tokens, only on the GPU model the decode rate of " + request.measurement_file +
              " was measured on: " + std::string(GeneratedTokensCost::method()) + "\n";
  }
  // What each row ran: generation's new tokens, or a fine-tuning run's method and steps.
  const std::string run = c.workload_options.has("new-tokens")
                              ? std::to_string(c.workload_options.whole_number("new-tokens")) + " new tokens"
                              : c.workload_options.text("train") + " fine-tuning, " +
                                    std::to_string(c.workload_options.whole_number("steps")) + " steps";
  text += "\nOne GPU per model instance: splitting a model over several GPUs is not modelled. batch " +
          std::to_string(c.batch) + ", context " + std::to_string(c.context) + ", " + run + ", " + c.dtype + ".\n";
  for (const std::string& caveat : caveats) text += "Caveat: " + caveat + "\n";
  return text;
}

std::string PackageFitReport::to_json() const {
  JsonWriter json(kFitSchema, kFitSchemaVersion);
  write_measure_configuration(json, "device", request.configuration);
  json.key("heading").value(heading).key("catalog").value(catalog_path).key("gpu_memory_table").value(gpu_memory_path);
  json.key("days");
  if (request.days) {
    json.value(std::stoi(*request.days));  // a duration of the catalog: checked digits
  } else {
    json.null();
  }
  json.key("measurement").text_or_null(request.measurement_file);
  json.key("packages").begin_array();
  for (const PackageFit& fit : packages) {
    json.begin_object()
        .key("gpu").value(fit.memory.gpu)
        .key("gpu_name").value(fit.gpu_name)
        .key("compute_capability").text_or_null(fit.memory.compute_capability)
        .key("memory_bytes").value(fit.memory.memory_bytes)
        .key("memory_source").value(fit.memory.memory_source)
        .key("outside_allocator_bytes").value(fit.memory.outside_allocator_bytes)
        .key("outside_allocator_source").value(fit.memory.outside_allocator_source)
        .key("verdict").value(verdict_text(fit.verdict))
        .key("reason").value(fit.reason);
    if (fit.verdict == PackageFit::Verdict::kNotAssessed) {
      json.key("predicted_peak_reserved_bytes").null().key("required_bytes").null().key("headroom_bytes").null();
    } else {
      json.key("predicted_peak_reserved_bytes").value(fit.predicted_peak_reserved_bytes)
          .key("required_bytes").value(fit.required_bytes)
          .key("headroom_bytes").value(fit.headroom_bytes);
    }
    json.key("required_unchecked").text_or_null(fit.required_unchecked);
    json.key("price");
    if (fit.quote) {  // money as an exact decimal string, never a binary float
      json.begin_object()
          .key("lot_price_cents").value(std::to_string(fit.quote->entry.lot_price_cents))
          .key("gpus_per_lot").value(fit.quote->entry.gpus_per_lot)
          .key("source").value(fit.quote->entry.source)
          .end_object();
    } else {
      json.null();
    }
    json.key("cost_per_million_tokens");
    if (fit.tokens_cost) {
      json.begin_object()
          .key("measured_gpu").value(fit.tokens_cost->measured_gpu)
          .key(fit.tokens_cost->trained ? "trained_tokens_per_second" : "decode_tokens_per_second")
          .value(fit.tokens_cost->price.tokens_per_second)
          .key("numerator_cents").value(fit.tokens_cost->price.numerator_cents)
          .key("denominator").value(fit.tokens_cost->price.denominator)
          .key("display_usd").value(fit.tokens_cost->price.display_usd)
          .end_object();
    } else {
      json.null();
    }
    json.end_object();
  }
  json.end_array();
  json.key("caveats").value(caveats);
  json.key("notes").value(std::vector<std::string>{
      "Needed on one GPU = the predicted peak reserved bytes + the process's GPU memory outside the caching "
      "allocator. \"fits\" needs exact needed bytes, the memory the runtime reports (measured or published) and, "
      "where the footprint outside the allocator is an allowance, 2 % of the memory to spare; a nominal memory "
      "figure only ever gives \"does not fit\" or \"uncertain\".",
      "One GPU per model instance: splitting a model over several GPUs is not modelled.",
      "Prices are those of the catalog; the shipped catalog's are illustrative, invented, not an offer."});
  return json.finish();
}

}  // namespace iteragpu
