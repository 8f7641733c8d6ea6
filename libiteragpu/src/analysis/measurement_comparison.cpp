// Measurements side by side: one list of rows per section, built once, then rendered as
// text, Markdown, CSV or JSON from the same rows. The synthetic MLP's sections, a checkpoint's
// generation's (the decoder workload) and its fine-tuning's (the training workload) have the
// same five names; their rows differ.

#include "iteragpu/measurement_comparison.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>

#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "iteragpu/workload_options.hpp"
#include "mechanics/json_output.hpp"
#include "mechanics/text_table.hpp"
#include "mechanics/wording.hpp"
#include "workload/training_payload.hpp"
#include "workload/workload.hpp"

namespace iteragpu {
namespace {

constexpr const char* kComparisonSchema = "iteragpu.comparison";
constexpr int kComparisonSchemaVersion = 1;
// A phase of the peaks section: its rows' name, and what its figure is when the phase has
// several rows.
struct ComparedPhase {
  const char* phase;
  const char* several;  // appended to the label: " (largest of the repeats)", or ""
};
// The synthetic MLP's phases in protocol order; warm_forward's rows are one figure per measurement.
constexpr ComparedPhase kPhases[] = {{"model_load", ""}, {"inputs", ""}, {"cold_forward", ""},
                                     {"warmup", ""}, {"warm_forward", " (largest of the repeats)"}};
// A checkpoint's: every sequence (cold, warm-up, warm) has a prefill row and a decode row per
// new token; each figure is the largest over them.
constexpr ComparedPhase kCheckpointPhases[] = {{"weights_load", ""},
                                               {"inputs", ""},
                                               {"prefill", " (largest of the sequences)"},
                                               {"decode", " (largest of the steps)"}};
// Fine-tuning's: each step has a forward, a backward and an optimizer row; each figure is the
// largest over the steps.
constexpr ComparedPhase kTrainingPhases[] = {{"weights_load", ""},
                                             {"adapters", ""},
                                             {"inputs", ""},
                                             {"forward", " (largest of the steps)"},
                                             {"backward", " (largest of the steps)"},
                                             {"optimizer", " (largest of the steps)"}};

using Kind = ComparedValue::Kind;

// Which workload the measurements compared ran (of() refuses a mix).
enum class Compared { kSyntheticMlp, kGeneration, kTraining };
Compared compared_of(const MeasurementComparison& c) {
  return c.training ? Compared::kTraining : c.checkpoints ? Compared::kGeneration : Compared::kSyntheticMlp;
}

ComparedValue absent() { return {}; }
ComparedValue text_value(std::string text) {
  ComparedValue value;
  value.kind = Kind::kText;
  value.text = std::move(text);
  return value;
}
ComparedValue text_value(const std::optional<std::string>& text) { return text ? text_value(*text) : absent(); }
ComparedValue integer_value(std::uint64_t integer) {
  ComparedValue value;
  value.kind = Kind::kInteger;
  value.integer = integer;
  return value;
}
ComparedValue integer_value(std::int64_t integer) { return integer_value(static_cast<std::uint64_t>(integer)); }
ComparedValue integer_value(int integer) { return integer_value(static_cast<std::uint64_t>(integer)); }
// A workload's own option as a measurement's configuration holds it; absent for a workload
// that does not declare it.
ComparedValue option_value(const Measurement& x, const WorkloadOption& option) {
  const WorkloadOptions& options = x.configuration.workload_options;
  if (!options.has(option.name)) return absent();
  if (option.type == WorkloadOption::Type::kWholeNumber) return integer_value(options.whole_number(option.name));
  if (option.type == WorkloadOption::Type::kSwitch) return text_value(std::string(options.whole_number(option.name) ? "on" : "off"));
  return text_value(options.text(option.name));
}
// "new tokens" for new-tokens: how rows and headings name an option.
std::string option_label(const WorkloadOption& option) {
  std::string label = option.name;
  std::replace(label.begin(), label.end(), '-', ' ');
  return label;
}
// ", 16 new tokens": the workload's own options a measurement ran with, for its heading.
std::string options_text(const Measurement& x) {
  std::string text;
  for (const WorkloadOption& option : workload_kind_of(x.configuration).options) {
    const WorkloadOptions& options = x.configuration.workload_options;
    if (!options.has(option.name)) continue;
    if (option.type == WorkloadOption::Type::kSwitch) {  // named when on
      if (options.whole_number(option.name)) text += ", " + option_label(option);
      continue;
    }
    text += ", " + (option.type == WorkloadOption::Type::kWholeNumber
                        ? std::to_string(options.whole_number(option.name)) + " " + option_label(option)
                        : option_label(option) + " " + printable(options.text(option.name)));
  }
  return text;
}
ComparedValue number_value(Kind kind, double number) {
  ComparedValue value;
  value.kind = kind;
  value.number = number;
  return value;
}

double as_double(const ComparedValue& value) {
  return value.kind == Kind::kInteger ? static_cast<double>(value.integer) : value.number;
}

bool numeric(const ComparedValue& value) {
  return value.kind == Kind::kInteger || value.kind == Kind::kSeconds || value.kind == Kind::kFraction ||
         value.kind == Kind::kRate;
}

std::optional<double> ratio_of(const ComparedValue& value, const ComparedValue& first) {
  if (!numeric(value) || !numeric(first) || as_double(first) == 0) return std::nullopt;
  return as_double(value) / as_double(first);
}

enum class Ratios { kNone, kToFirst };

// A row of one value per measurement.
ComparisonRow make_row(const std::string& name, const std::string& label, const std::string& unit,
                       const std::vector<Measurement>& measurements,
                       const std::function<ComparedValue(const Measurement&)>& value_of,
                       Ratios ratios = Ratios::kNone) {
  ComparisonRow row;
  row.name = name;
  row.label = label;
  row.unit = unit;
  for (const Measurement& measurement : measurements) row.values.push_back(value_of(measurement));
  row.same = std::all_of(row.values.begin(), row.values.end(),
                         [&row](const ComparedValue& value) { return value == row.values.front(); });
  if (ratios == Ratios::kToFirst)
    for (const ComparedValue& value : row.values) row.ratios.push_back(ratio_of(value, row.values.front()));
  return row;
}

const GpuDevice* selected_gpu(const Measurement& measurement) { return measurement.environment.selected_gpu(); }

ComparedValue optional_number(Kind kind, const std::optional<double>& number) {
  return number ? number_value(kind, *number) : absent();
}

// A checkpoint measurement's recorded architecture (every measurement of a checkpoint
// comparison has a checkpoint: of() refuses a mix).
const DecoderArchitecture& architecture_of(const Measurement& x) { return x.checkpoint->architecture; }

// The run's report figure `member`, absent when the file has no run report.
template <typename T>
std::optional<T> run_figure(const Measurement& x, std::optional<T> DecoderRun::*member) {
  return x.decoder_run() ? x.decoder_run()->*member : std::nullopt;
}
template <typename T>
std::optional<T> run_figure(const Measurement& x, std::optional<T> TrainingRun::*member) {
  return x.training_run() ? x.training_run()->*member : std::nullopt;
}
// The device memory in use at the end, whichever checkpoint workload recorded it.
std::optional<std::uint64_t> device_used_bytes(const Measurement& x) {
  if (x.training_run()) return run_figure(x, &TrainingRun::device_used_bytes);
  return run_figure(x, &DecoderRun::device_used_bytes);
}

ComparisonSection configuration_section(const std::vector<Measurement>& m) {
  ComparisonSection section{"configuration", "Configuration", {}};
  auto& rows = section.rows;
  rows.push_back(make_row("device", "device", "", m, [](const Measurement& x) { return text_value(x.configuration.device); }));
  rows.push_back(make_row("batch", "batch", "", m, [](const Measurement& x) { return integer_value(x.model.batch); }, Ratios::kToFirst));
  rows.push_back(make_row("context", "context (positions)", "", m, [](const Measurement& x) { return integer_value(x.model.context); }, Ratios::kToFirst));
  rows.push_back(make_row("width", "width", "", m, [](const Measurement& x) { return integer_value(x.model.width); }, Ratios::kToFirst));
  rows.push_back(make_row("hidden", "hidden", "", m, [](const Measurement& x) { return integer_value(x.model.hidden); }, Ratios::kToFirst));
  rows.push_back(make_row("dtype", "dtype", "", m, [](const Measurement& x) { return text_value(x.model.dtype); }));
  rows.push_back(make_row("warmup", "warm-up forwards", "", m, [](const Measurement& x) { return integer_value(x.configuration.warmup); }));
  rows.push_back(make_row("repeats", "warm repeats", "", m, [](const Measurement& x) { return integer_value(x.configuration.repeats); }));
  rows.push_back(make_row("seed", "seed", "", m, [](const Measurement& x) { return integer_value(x.configuration.seed); }));
  return section;
}

ComparisonSection model_section(const std::vector<Measurement>& m) {
  ComparisonSection section{"model", "Synthetic model", {}};
  auto& rows = section.rows;
  rows.push_back(make_row("dtype_bytes", "bytes per value", "bytes", m, [](const Measurement& x) { return integer_value(x.model.dtype_bytes); }, Ratios::kToFirst));
  rows.push_back(make_row("parameter_count", "parameters", "", m, [](const Measurement& x) { return integer_value(x.model.parameter_count); }, Ratios::kToFirst));
  rows.push_back(make_row("parameter_bytes", "parameter bytes", "bytes", m, [](const Measurement& x) { return integer_value(x.model.parameter_bytes); }, Ratios::kToFirst));
  rows.push_back(make_row("input_bytes", "input bytes", "bytes", m, [](const Measurement& x) { return integer_value(x.model.input_bytes); }, Ratios::kToFirst));
  return section;
}

// A checkpoint run's configuration: no width or hidden (the checkpoint has its own sizes,
// in the model section), the folder it was read from and the decode steps instead.
ComparisonSection checkpoint_configuration_section(const std::vector<Measurement>& m, bool training) {
  ComparisonSection section{"configuration", "Configuration", {}};
  auto& rows = section.rows;
  rows.push_back(make_row("device", "device", "", m, [](const Measurement& x) { return text_value(x.configuration.device); }));
  rows.push_back(make_row("model", "checkpoint folder", "", m, [](const Measurement& x) { return text_value(x.configuration.model); }));
  rows.push_back(make_row("batch", "batch", "", m, [](const Measurement& x) { return integer_value(x.configuration.batch); }, Ratios::kToFirst));
  rows.push_back(make_row("context", "context (prompt positions)", "", m, [](const Measurement& x) { return integer_value(x.configuration.context); }, Ratios::kToFirst));
  // The workloads' own options (generation's new tokens, fine-tuning's method, steps, LoRA's
  // rank...), each where at least one of the measurements has it.
  for (const WorkloadOption& option : declared_workload_options()) {
    if (std::none_of(m.begin(), m.end(), [&](const Measurement& x) { return x.configuration.workload_options.has(option.name); }))
      continue;
    const bool number = option.type == WorkloadOption::Type::kWholeNumber;
    rows.push_back(make_row(option.keyword, option_label(option), "", m, [&option](const Measurement& x) { return option_value(x, option); },
                            number ? Ratios::kToFirst : Ratios::kNone));
  }
  rows.push_back(make_row("dtype", "dtype", "", m, [](const Measurement& x) { return text_value(x.configuration.dtype); }));
  if (!training) {  // a fine-tuning run's repeats are its steps
    rows.push_back(make_row("warmup", "warm-up sequences", "", m, [](const Measurement& x) { return integer_value(x.configuration.warmup); }));
    rows.push_back(make_row("repeats", "warm sequences", "", m, [](const Measurement& x) { return integer_value(x.configuration.repeats); }));
  }
  rows.push_back(make_row("seed", "seed", "", m, [](const Measurement& x) { return integer_value(x.configuration.seed); }));
  return section;
}

// What the measurement file recorded of the checkpoint (its folder may not be here).
ComparisonSection checkpoint_model_section(const std::vector<Measurement>& m) {
  ComparisonSection section{"model", "Checkpoint", {}};
  auto& rows = section.rows;
  const auto size = [&m, &rows](const char* name, const char* label, std::int64_t DecoderArchitecture::*member,
                                Ratios ratios) {
    rows.push_back(make_row(name, label, "", m, [member](const Measurement& x) {
      return integer_value(architecture_of(x).*member);
    }, ratios));
  };
  rows.push_back(make_row("architecture", "architecture", "", m, [](const Measurement& x) { return text_value(architecture_of(x).architecture); }));
  rows.push_back(make_row("model_type", "model type", "", m, [](const Measurement& x) { return text_value(architecture_of(x).model_type); }));
  size("layers", "layers", &DecoderArchitecture::layers, Ratios::kToFirst);
  size("hidden_size", "hidden size", &DecoderArchitecture::hidden_size, Ratios::kToFirst);
  size("intermediate_size", "MLP intermediate size", &DecoderArchitecture::intermediate_size, Ratios::kToFirst);
  size("attention_heads", "attention heads", &DecoderArchitecture::attention_heads, Ratios::kNone);
  size("kv_heads", "key/value heads", &DecoderArchitecture::kv_heads, Ratios::kNone);
  size("head_dim", "head dimension", &DecoderArchitecture::head_dim, Ratios::kNone);
  size("vocab_size", "vocabulary", &DecoderArchitecture::vocab_size, Ratios::kNone);
  rows.push_back(make_row("checkpoint_dtype", "checkpoint dtype", "", m, [](const Measurement& x) { return text_value(architecture_of(x).dtype); }));
  rows.push_back(make_row("tensors", "tensors", "", m, [](const Measurement& x) { return integer_value(x.checkpoint->tensors); }));
  rows.push_back(make_row("parameter_count", "parameters", "", m, [](const Measurement& x) { return integer_value(x.checkpoint->parameter_count); }, Ratios::kToFirst));
  rows.push_back(make_row("parameter_bytes", "parameter bytes", "bytes", m, [](const Measurement& x) { return integer_value(x.checkpoint->parameter_bytes); }, Ratios::kToFirst));
  return section;
}

ComparisonSection environment_section(const std::vector<Measurement>& m) {
  ComparisonSection section{"environment", "Environment", {}};
  auto& rows = section.rows;
  const auto stack_text = [](std::optional<std::string> StackReport::*member) {
    return [member](const Measurement& x) {
      return x.environment.stack ? text_value(x.environment.stack.value().*member) : absent();
    };
  };
  rows.push_back(make_row("gpu", "GPU", "", m, [](const Measurement& x) {
    const GpuDevice* gpu = selected_gpu(x);
    return gpu ? text_value(gpu->name) : absent();
  }));
  rows.push_back(make_row("compute_capability", "compute capability", "", m, [](const Measurement& x) {
    const GpuDevice* gpu = selected_gpu(x);
    return gpu ? text_value(std::to_string(gpu->compute_capability_major) + "." +
                            std::to_string(gpu->compute_capability_minor))
               : absent();
  }));
  rows.push_back(make_row("gpu_memory_bytes", "GPU memory", "bytes", m, [](const Measurement& x) {
    const GpuDevice* gpu = selected_gpu(x);
    return gpu ? integer_value(gpu->total_memory_bytes) : absent();
  }));
  rows.push_back(make_row("visible_gpus", "GPUs visible", "", m, [](const Measurement& x) {
    return x.environment.stack ? integer_value(static_cast<std::uint64_t>(x.environment.stack->gpus.size())) : absent();
  }));
  rows.push_back(make_row("nvidia_driver", "NVIDIA kernel driver", "", m, [](const Measurement& x) {
    return text_value(x.environment.nvidia_driver_version);
  }));
  rows.push_back(make_row("libtorch", "LibTorch", "", m, [](const Measurement& x) {
    return x.environment.stack ? text_value(x.environment.stack->torch_version) : absent();
  }));
  rows.push_back(make_row("cuda_build", "CUDA LibTorch was built with", "", m, stack_text(&StackReport::cuda_build_version)));
  rows.push_back(make_row("hip_build", "HIP LibTorch was built with", "", m, stack_text(&StackReport::hip_build_version)));
  rows.push_back(make_row("cudnn", "cuDNN", "", m, stack_text(&StackReport::cudnn_version)));
  rows.push_back(make_row("iteragpu", "iteragpu", "", m, [](const Measurement& x) { return text_value(x.environment.iteragpu_version); }));
  rows.push_back(make_row("iteragpu_build", "iteragpu build", "", m, [](const Measurement& x) { return text_value(x.environment.iteragpu_build); }));
  rows.push_back(make_row("os", "operating system", "", m, [](const Measurement& x) {
    return text_value(x.environment.os_distribution.value_or(x.environment.os_name));
  }));
  rows.push_back(make_row("kernel", "kernel", "", m, [](const Measurement& x) { return text_value(x.environment.kernel_release); }));
  rows.push_back(make_row("libc", "C library", "", m, [](const Measurement& x) { return text_value(x.environment.libc); }));
  rows.push_back(make_row("architecture", "architecture", "", m, [](const Measurement& x) { return text_value(x.environment.architecture); }));
  return section;
}

// The largest of a counter over the rows of `phase` (all rows when `phase` is null); absent
// when the measurement has no such row.
ComparedValue largest(const Measurement& measurement, const char* phase, std::uint64_t AllocatorCounters::*counter) {
  ComparedValue value;
  for (const PhaseRow& row : measurement.phases) {
    if (phase != nullptr && row.phase != phase) continue;
    value = integer_value(std::max(value.integer, row.end.*counter));
  }
  return value;
}

template <std::size_t N>
ComparisonSection peaks_section(const std::vector<Measurement>& m, const ComparedPhase (&phases)[N]) {
  ComparisonSection section{"peaks", "Peak bytes per phase", {}};
  const struct {
    const char* name;
    const char* label;
    std::uint64_t AllocatorCounters::*counter;
  } counters[] = {{"peak_allocated_bytes", "peak allocated", &AllocatorCounters::peak_allocated_bytes},
                  {"peak_reserved_bytes", "peak reserved", &AllocatorCounters::peak_reserved_bytes}};
  for (const ComparedPhase& compared : phases) {
    const char* phase = compared.phase;
    const bool anywhere = std::any_of(m.begin(), m.end(), [phase](const Measurement& x) {
      return std::any_of(x.phases.begin(), x.phases.end(), [phase](const PhaseRow& row) { return row.phase == phase; });
    });
    if (!anywhere) continue;  // no measurement ran a warmup
    const std::string repeats = compared.several;
    for (const auto& counter : counters)
      section.rows.push_back(make_row(std::string(phase) + "." + counter.name,
                                      std::string(phase) + " " + counter.label + repeats, "bytes", m,
                                      [&](const Measurement& x) { return largest(x, phase, counter.counter); },
                                      Ratios::kToFirst));
  }
  for (const auto& counter : counters)
    section.rows.push_back(make_row(std::string("all.") + counter.name,
                                    std::string("largest ") + counter.label + " of all phases", "bytes", m,
                                    [&](const Measurement& x) { return largest(x, nullptr, counter.counter); },
                                    Ratios::kToFirst));
  return section;
}

// A checkpoint's peaks, then what is held when the run ends: the allocator's reservation
// after the last row, and the device memory in use as the driver reports it.
ComparisonSection checkpoint_peaks_section(const std::vector<Measurement>& m, bool training) {
  ComparisonSection section = training ? peaks_section(m, kTrainingPhases) : peaks_section(m, kCheckpointPhases);
  section.title = "Memory per phase";
  section.rows.push_back(make_row("end.reserved_bytes",
                                  training ? "reserved at the end (after the last optimizer step)"
                                           : "reserved at the end (after the last decode step)",
                                  "bytes", m,
                                  [](const Measurement& x) {
                                    return x.phases.empty() ? absent() : integer_value(x.phases.back().end.reserved_bytes);
                                  }, Ratios::kToFirst));
  section.rows.push_back(make_row("device_used_bytes", "device memory in use at the end (driver)", "bytes", m,
                                  [](const Measurement& x) {
                                    const auto used = device_used_bytes(x);
                                    return used ? integer_value(*used) : absent();
                                  }, Ratios::kToFirst));
  return section;
}

// The spread of the warm repeats (generation: of its warm decode steps; fine-tuning: of its
// warm steps), then, for a checkpoint, the rates its run report derived from the warm medians.
ComparisonSection times_section(const std::vector<Measurement>& m, Compared compared) {
  const bool checkpoints = compared == Compared::kGeneration;
  const bool training = compared == Compared::kTraining;
  ComparisonSection section{"times", checkpoints ? "Warm decode steps and rates (spread of the warm sequences' steps)"
                                     : training  ? "Warm training steps and rate (spread of steps 2 and on, each its "
                                                   "forward, backward and optimizer rows)"
                                                 : "Warm forward times (spread of the warm repeats)", {}};
  auto& rows = section.rows;
  rows.push_back(make_row("warm_repeats", checkpoints ? "warm decode steps" : training ? "warm steps" : "warm repeats",
                          "", m, [](const Measurement& x) { return integer_value(x.timing.warm_repeats); }));
  const struct {
    const char* name;
    const char* label;
    bool gpu;
  } clocks[] = {{"host", "host", false}, {"gpu_event", "GPU event", true}};
  for (const auto& clock : clocks) {
    const auto spread = [gpu = clock.gpu](const Measurement& x) -> const SpreadStatistics* {
      if (!gpu) return &x.timing.host_seconds;
      return x.timing.gpu_event_seconds ? &*x.timing.gpu_event_seconds : nullptr;
    };
    const std::string name = clock.name,
                      label = std::string(checkpoints ? "decode step " : training ? "step " : "") + clock.label;
    rows.push_back(make_row(name + ".median", label + " median", "seconds", m, [&](const Measurement& x) {
      return spread(x) ? number_value(Kind::kSeconds, spread(x)->median) : absent();
    }, Ratios::kToFirst));
    rows.push_back(make_row(name + ".iqr", label + " IQR", "seconds", m, [&](const Measurement& x) {
      return spread(x) ? number_value(Kind::kSeconds, spread(x)->iqr) : absent();
    }));
    rows.push_back(make_row(name + ".cv", label + " CV", "fraction", m, [&](const Measurement& x) {
      return spread(x) ? number_value(Kind::kFraction, spread(x)->cv) : absent();
    }));
  }
  if (checkpoints) {
    rows.push_back(make_row("time_to_first_token", "time to first token (warm prefill, host median)", "seconds", m,
                            [](const Measurement& x) {
                              return optional_number(Kind::kSeconds, run_figure(x, &DecoderRun::time_to_first_token_seconds));
                            }, Ratios::kToFirst));
    rows.push_back(make_row("prefill_tokens_per_second", "prefill (batch × context over the prefill)", "tokens_per_second", m,
                            [](const Measurement& x) {
                              return optional_number(Kind::kRate, run_figure(x, &DecoderRun::prefill_tokens_per_second));
                            }, Ratios::kToFirst));
    rows.push_back(make_row("decode_tokens_per_second", "decode (batch over a decode step)", "tokens_per_second", m,
                            [](const Measurement& x) {
                              return optional_number(Kind::kRate, run_figure(x, &DecoderRun::decode_tokens_per_second));
                            }, Ratios::kToFirst));
  }
  if (training)
    rows.push_back(make_row("trained_tokens_per_second", "trained tokens (batch × context over a warm step's host median)",
                            "tokens_per_second", m, [](const Measurement& x) {
                              return optional_number(Kind::kRate, run_figure(x, &TrainingRun::trained_tokens_per_second));
                            }, Ratios::kToFirst));
  rows.push_back(make_row("warnings", "timing warnings", "", m, [](const Measurement& x) {
    std::string codes;
    for (const TimingWarning& warning : x.timing.warnings)
      codes += (codes.empty() ? "" : ", ") + warning.code + " (" + warning.clock + ")";
    return text_value(codes.empty() ? "none" : codes);
  }));
  return section;
}

// --- display ---------------------------------------------------------------------------------

std::string fixed(double number, int places) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", places, number);
  return text;
}

// The shortest text that reads back as the same double (what the JSON holds too).
std::string shortest(double number) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof text, number);
  return std::string(text, result.ptr);
}

// "34,739.5": one decimal, the integer part grouped.
std::string grouped_fixed(double number) {
  const std::string text = fixed(number, 1);
  const std::size_t point = text.find('.');
  const std::string whole = text.substr(0, point);
  if (whole.find_first_not_of("0123456789") != std::string::npos) return text;  // not a plain number
  return grouped_count(std::stoull(whole)) + text.substr(point);
}

// For people: grouped integers, microseconds, percentages, tokens per second; "-" when absent.
std::string shown(const ComparedValue& value) {
  switch (value.kind) {
    case Kind::kAbsent: return "-";
    case Kind::kText: return value.text;
    case Kind::kInteger: return grouped_count(value.integer);
    case Kind::kSeconds: return fixed(value.number * 1e6, 1) + " µs";
    case Kind::kFraction: return fixed(value.number * 100, 1) + " %";
    case Kind::kRate: return grouped_fixed(value.number) + " tokens/s";
  }
  return "";
}

// For CSV: exact integers, seconds and fractions as they are; empty when absent.
std::string raw(const ComparedValue& value) {
  switch (value.kind) {
    case Kind::kAbsent: return "";
    case Kind::kText: return value.text;
    case Kind::kInteger: return std::to_string(value.integer);
    case Kind::kSeconds:
    case Kind::kFraction:
    case Kind::kRate: return shortest(value.number);
  }
  return "";
}

// Three decimals, or three significant digits below 0.1 (×0.00394, not ×0.004).
std::string shown_ratio(const std::optional<double>& ratio) {
  if (!ratio) return "-";
  if (*ratio >= 0.1 || *ratio == 0) return "×" + fixed(*ratio, 3);
  char text[64];
  std::snprintf(text, sizeof text, "×%.3g", *ratio);
  return text;
}

std::string tag(std::size_t index) { return "[" + std::to_string(index + 1) + "]"; }

// --- findings --------------------------------------------------------------------------------

// "dtype (float32 → bfloat16), batch (2 → 4)": the rows of `section` where measurement
// `index` differs from the first.
std::vector<std::string> changes(const ComparisonSection& section, std::size_t index) {
  std::vector<std::string> changed;
  for (const ComparisonRow& row : section.rows)
    if (row.values[index] != row.values[0])
      changed.push_back(row.name + " (" + shown(row.values[0]) + " → " + shown(row.values[index]) + ")");
  return changed;
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator = ", ") {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

std::string finding(const MeasurementComparison& c, std::size_t index) {
  const std::vector<std::string> configuration = changes(*c.section("configuration"), index);
  const ComparisonSection& environment = *c.section("environment");
  const std::vector<std::string> environment_changes = changes(environment, index);
  std::string text = tag(index) + " against [1]: ";
  text += configuration.empty() ? "the same configuration"
                                : "configuration differs in " + joined(configuration);
  text += environment_changes.empty()
              ? "; the same environment in the " + std::to_string(environment.rows.size()) + " fields compared"
              : "; environment differs in " + joined(environment_changes);

  const auto ratio = [&c, index](const char* section, const char* row) {
    const ComparisonRow* found = c.section(section)->row(row);
    return found ? found->ratios[index] : std::nullopt;
  };
  std::vector<std::string> ratios;
  const auto add = [&ratios](const std::string& what, const std::optional<double>& value, const std::string& note = "") {
    if (value) ratios.push_back(what + " " + shown_ratio(value) + note);
  };
  // A median time within the repeats' interquartile range of either run is no difference.
  const auto spread_note = [&c, index](const char* clock) -> std::string {
    const ComparisonRow* median = c.section("times")->row(std::string(clock) + ".median");
    const ComparisonRow* iqr = c.section("times")->row(std::string(clock) + ".iqr");
    if (!median || !iqr || median->values[index].kind != Kind::kSeconds ||
        median->values[0].kind != Kind::kSeconds)
      return "";
    const double gap = std::fabs(median->values[index].number - median->values[0].number);
    return gap <= std::max(iqr->values[index].number, iqr->values[0].number) ? " (within the repeats' IQR)" : "";
  };
  add("parameter bytes", ratio("model", "parameter_bytes"));
  add("largest peak allocated", ratio("peaks", "all.peak_allocated_bytes"));
  add("largest peak reserved", ratio("peaks", "all.peak_reserved_bytes"));
  if (c.training) {
    add("device memory in use at the end", ratio("peaks", "device_used_bytes"));
    add("trained tokens/s", ratio("times", "trained_tokens_per_second"));
    add("warm step host median", ratio("times", "host.median"), spread_note("host"));
    add("warm step GPU event median", ratio("times", "gpu_event.median"), spread_note("gpu_event"));
  } else if (c.checkpoints) {
    add("device memory in use at the end", ratio("peaks", "device_used_bytes"));
    add("decode tokens/s", ratio("times", "decode_tokens_per_second"));
    add("time to first token", ratio("times", "time_to_first_token"));
    add("warm decode step host median", ratio("times", "host.median"), spread_note("host"));
    add("warm decode step GPU event median", ratio("times", "gpu_event.median"), spread_note("gpu_event"));
  } else {
    add("warm host median", ratio("times", "host.median"), spread_note("host"));
    add("warm GPU event median", ratio("times", "gpu_event.median"), spread_note("gpu_event"));
  }
  if (!ratios.empty()) text += "; " + joined(ratios);

  // Why the peaks do not follow the weights when the dtype changes: from the first forward on
  // every peak holds the cuBLAS (and cuBLASLt) workspaces, whose sizes do not depend on it.
  const Measurement& first = c.measurements[0];
  const Measurement& other = c.measurements[index];
  const auto workspaces = [](const MemoryPrediction& p) {
    return std::make_pair(p.target.cublas_workspace_bytes, p.cublaslt_used ? p.target.cublaslt_workspace_bytes : 0);
  };
  const std::optional<double> weights = ratio("model", "parameter_bytes");
  const std::optional<double> peak = ratio("peaks", "all.peak_allocated_bytes");
  if (!c.checkpoints && first.model.dtype != other.model.dtype && first.prediction && other.prediction &&
      workspaces(*first.prediction) == workspaces(*other.prediction) &&
      workspaces(*first.prediction).first > 0 && weights && peak && *peak > *weights) {
    const auto [cublas, cublaslt] = workspaces(*first.prediction);
    text += "; the peaks change less than the weights because from the first forward on they hold the "
            "cuBLAS workspace (" + grouped_count(cublas) + " bytes" +
            (cublaslt > 0 ? ") and the cuBLASLt one (" + grouped_count(cublaslt) + " bytes" : std::string()) +
            "), the same whatever the dtype";
  }
  if (configuration.empty() && environment_changes.empty())
    text += "; with nothing changed, the differences are run-to-run variation";
  return text + ".";
}

std::vector<std::string> comparison_notes(Compared compared) {
  if (compared == Compared::kTraining)
    return {
        "Ratios are to the first measurement ([1]); ×1.000 is no change.",
        "Peaks are this process's caching-allocator maxima over each phase on the selected GPU; "
        "allocated is part of reserved (never add them), and the two peaks are separate maxima "
        "(never subtract them). forward, backward and optimizer show the largest over every step "
        "(the first optimizer step makes AdamW's state).",
        "Reserved at the end is the allocator's reservation after the last optimizer step; device "
        "memory in use is cudaMemGetInfo's figure at the end of the run: the CUDA context, the "
        "libraries and the allocator's segments together, and any other process on the card.",
        "Times are host wall clock and GPU event time of the warm steps (2 and on, each its forward, "
        "backward and optimizer rows), as medians with their interquartile range (IQR) and "
        "coefficient of variation (CV); a ratio of medians within the IQR is no evidence of a "
        "difference. Trained tokens per second is batch × context over the warm steps' host median, "
        "as each measurement's run report computed it.",
    };
  if (compared == Compared::kGeneration)
    return {
        "Ratios are to the first measurement ([1]); ×1.000 is no change.",
        "Peaks are this process's caching-allocator maxima over each phase on the selected GPU; "
        "allocated is part of reserved (never add them), and the two peaks are separate maxima "
        "(never subtract them). prefill shows the largest over every sequence's prefill (cold, "
        "warm-up and warm), decode the largest over every decode step of every sequence.",
        "Reserved at the end is the allocator's reservation after the last decode step; device "
        "memory in use is cudaMemGetInfo's figure at the end of the run: the CUDA context, the "
        "libraries and the allocator's segments together, and any other process on the card.",
        "Times are host wall clock (overhead and synchronization included) and GPU event time of "
        "the warm sequences' decode steps, as medians with their interquartile range (IQR) and "
        "coefficient of variation (CV); a ratio of medians within the IQR is no evidence of a "
        "difference. Time to first token is the warm prefills' host median; prefill is batch × "
        "context over it; decode is batch over the warm decode steps' host median, as each "
        "measurement's run report computed them.",
    };
  return {
      "Ratios are to the first measurement ([1]); ×1.000 is no change.",
      "Peaks are this process's caching-allocator maxima over each phase on the selected GPU; "
      "allocated is part of reserved (never add them), and the two peaks are separate maxima "
      "(never subtract them). warm_forward shows the largest over its repeats.",
      "Times are host wall clock (overhead and synchronization included) and GPU event time, "
      "as medians of the warm repeats with their interquartile range (IQR) and coefficient of "
      "variation (CV); a ratio of medians within the IQR is no evidence of a difference.",
  };
}

// Column headers: "", "[1]", "[2]", ..., then "[2]/[1]", ... when any row has ratios.
// Rows named in `listed_apart` are left out (render() lists them below the table).
TextTable section_table(const ComparisonSection& section, std::size_t count, bool only_differing,
                        const std::string& listed_apart = "") {
  const bool any_ratio = std::any_of(section.rows.begin(), section.rows.end(),
                                     [](const ComparisonRow& row) { return !row.ratios.empty(); });
  TextTable table;
  table.header = {""};
  table.right_aligned = {false};
  for (std::size_t i = 0; i < count; ++i) {
    table.header.push_back(tag(i));
    table.right_aligned.push_back(true);
  }
  if (any_ratio)
    for (std::size_t i = 1; i < count; ++i) {
      table.header.push_back(tag(i) + "/[1]");
      table.right_aligned.push_back(true);
    }
  for (const ComparisonRow& row : section.rows) {
    if ((only_differing && row.same) || row.name == listed_apart) continue;
    std::vector<std::string> cells = {(row.same ? "  " : "≠ ") + row.label};
    for (const ComparedValue& value : row.values) cells.push_back(shown(value));
    if (any_ratio)
      for (std::size_t i = 1; i < count; ++i) cells.push_back(row.ratios.empty() ? "" : shown_ratio(row.ratios[i]));
    table.rows.push_back(std::move(cells));
  }
  return table;
}

// "GPU NVIDIA H200, LibTorch 2.11.0, ...": the environment fields every measurement shares.
std::string shared_environment(const ComparisonSection& environment) {
  std::vector<std::string> same;
  for (const ComparisonRow& row : environment.rows)
    if (row.same)
      same.push_back(row.label + " " + (row.values[0].kind == Kind::kAbsent ? "none" : shown(row.values[0])));
  return joined(same, "; ");
}

enum class Style { kText, kMarkdown };

std::string render(const MeasurementComparison& c, Style style) {
  const bool markdown = style == Style::kMarkdown;
  const auto heading = [markdown](const std::string& title) {
    return markdown ? "**" + title + "**\n\n" : title + "\n";
  };
  const auto table_text = [markdown](const TextTable& table) {
    return markdown ? table.to_markdown() : table.to_text();
  };
  const auto item = [markdown](const std::string& text) { return (markdown ? "- " : "  ") + text + "\n"; };
  const std::size_t count = c.measurements.size();

  std::string text = heading("Comparison of " + std::to_string(count) + " measurements (ratios are to [1])");
  for (std::size_t i = 0; i < count; ++i) {
    const Measurement& x = c.measurements[i];
    const GpuDevice* gpu = selected_gpu(x);
    const std::string gpu_name = gpu ? printable(gpu->name) : std::string("unknown GPU");
    const std::string test_double = x.environment.from_test_double() ? std::string(" — ") + kTestDoubleMark : "";
    if (c.checkpoints) {
      const DecoderArchitecture& architecture = architecture_of(x);
      text += item(tag(i) + " " + printable(c.sources[i]) + ": " + gpu_name + ", " + printable(architecture.architecture) +
                   " (" + std::to_string(architecture.layers) + " layers, hidden " +
                   std::to_string(architecture.hidden_size) + "), " + x.configuration.dtype + ", batch " +
                   std::to_string(x.configuration.batch) + ", context " + std::to_string(x.configuration.context) + options_text(x) + test_double);
      continue;
    }
    text += item(tag(i) + " " + printable(c.sources[i]) + ": " + gpu_name + ", " +
                 x.model.dtype + ", batch " + std::to_string(x.model.batch) + ", context " +
                 std::to_string(x.model.context) + ", width " + std::to_string(x.model.width) + test_double);
  }
  text += "\n" + heading("Findings");
  for (const std::string& finding : c.findings) text += item(printable(finding));
  for (const ComparisonSection& section : c.sections) {
    text += "\n";
    if (section.name == "environment") {
      const bool any_difference = std::any_of(section.rows.begin(), section.rows.end(),
                                              [](const ComparisonRow& row) { return !row.same; });
      text += heading(any_difference ? "Environment fields that differ" : "Environment");
      if (any_difference) text += table_text(section_table(section, count, /*only_differing=*/true)) + "\n";
      text += (markdown ? "" : "  ") + std::string("The same in every measurement: ") + shared_environment(section) + ".\n";
      continue;
    }
    if (section.name == "times") {
      // Warning codes are too long for a column: one line per measurement under the table.
      text += heading(section.title) + table_text(section_table(section, count, false, "warnings"));
      const ComparisonRow* warnings = section.row("warnings");
      text += (markdown ? "\n" : "") + std::string(markdown ? "" : "  ") + "Timing warnings:";
      for (std::size_t i = 0; i < count; ++i)
        text += std::string(i ? ";" : "") + " " + tag(i) + " " + shown(warnings->values[i]);
      text += ".\n";
      continue;
    }
    text += heading(section.title) + table_text(section_table(section, count, false));
  }
  text += "\n" + heading("Notes");
  text += item("A ≠ before a figure marks one that is not the same in every measurement.");
  for (const std::string& note : comparison_notes(compared_of(c))) text += item(note);
  return text;
}

}  // namespace

bool ComparedValue::operator==(const ComparedValue& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case Kind::kAbsent: return true;
    case Kind::kText: return text == other.text;
    case Kind::kInteger: return integer == other.integer;
    case Kind::kSeconds:
    case Kind::kFraction:
    case Kind::kRate: return number == other.number;
  }
  return false;
}

const ComparisonRow* ComparisonSection::row(const std::string& row_name) const {
  for (const ComparisonRow& candidate : rows)
    if (candidate.name == row_name) return &candidate;
  return nullptr;
}

const ComparisonSection* MeasurementComparison::section(const std::string& section_name) const {
  for (const ComparisonSection& candidate : sections)
    if (candidate.name == section_name) return &candidate;
  return nullptr;
}

MeasurementComparison MeasurementComparison::of(const std::vector<std::string>& sources,
                                                const std::vector<Measurement>& measurements) {
  if (measurements.size() < 2)
    throw UsageError("", "a comparison needs at least two measurements, got " +
                                         std::to_string(measurements.size()) +
                                         "; expected two or more JSON files written by iteragpu measure");
  if (sources.size() != measurements.size())
    throw UsageError("", std::to_string(sources.size()) + " labels for " +
                                         std::to_string(measurements.size()) + " measurements");
  // A synthetic-MLP measurement beside a checkpoint one is refused rather than shown with
  // the rows they have in common: those would be the environment, the device, batch, context,
  // dtype, seed and the largest peaks, and a table of them would read "the same
  // configuration" with peak and time ratios between an MLP forward and a decoder's prefill
  // and decode steps, which are different experiments; their model rows and phases have no
  // counterpart in each other. One line saying which file is which is the clearer answer.
  const auto checkpoint = std::find_if(measurements.begin(), measurements.end(),
                                       [](const Measurement& x) { return x.checkpoint.has_value(); });
  const auto synthetic = std::find_if(measurements.begin(), measurements.end(),
                                      [](const Measurement& x) { return !x.checkpoint.has_value(); });
  if (checkpoint != measurements.end() && synthetic != measurements.end())
    throw UsageError("", "cannot compare a synthetic-MLP measurement with a checkpoint measurement: " +
                             printable(sources[static_cast<std::size_t>(synthetic - measurements.begin())]) +
                             " measured the synthetic MLP, " +
                             printable(sources[static_cast<std::size_t>(checkpoint - measurements.begin())]) +
                             " a checkpoint (" + printable(checkpoint->checkpoint->architecture.architecture) +
                             "); their phases and model figures differ, so compare measurements of one workload");
  // A checkpoint's generation beside its fine-tuning: their rows and times have no counterpart
  // in each other either (a decode step is not a training step).
  const std::string first_kind = workload_kind_of(measurements.front().configuration).name;
  for (std::size_t index = 1; index < measurements.size(); ++index) {
    const std::string kind = workload_kind_of(measurements[index].configuration).name;
    if (kind != first_kind)
      throw UsageError("", "cannot compare a measurement of the " + first_kind + " workload with one of the " + kind +
                               " workload: " + printable(sources[0]) + " ran " + first_kind + ", " +
                               printable(sources[index]) + " " + kind +
                               " (generation or fine-tuning); compare measurements of one workload");
  }
  MeasurementComparison comparison;
  comparison.sources = sources;
  comparison.measurements = measurements;
  comparison.checkpoints = checkpoint != measurements.end();
  comparison.training = first_kind == kTrainingKind;
  if (comparison.checkpoints) {
    comparison.sections = {checkpoint_configuration_section(measurements, comparison.training),
                           checkpoint_model_section(measurements), environment_section(measurements),
                           checkpoint_peaks_section(measurements, comparison.training),
                           times_section(measurements, compared_of(comparison))};
  } else {
    comparison.sections = {configuration_section(measurements), model_section(measurements),
                           environment_section(measurements), peaks_section(measurements, kPhases),
                           times_section(measurements, Compared::kSyntheticMlp)};
  }
  for (std::size_t index = 1; index < measurements.size(); ++index)
    comparison.findings.push_back(finding(comparison, index));
  return comparison;
}

MeasurementComparison MeasurementComparison::of_files(const std::vector<std::string>& paths) {
  if (paths.size() < 2) return of(paths, std::vector<Measurement>(paths.size()));  // the count's error first
  std::vector<Measurement> measurements;
  for (const std::string& path : paths) measurements.push_back(Measurement::read(path));
  return of(paths, measurements);
}

std::string MeasurementComparison::to_text() const { return render(*this, Style::kText); }

std::string MeasurementComparison::to_markdown() const { return render(*this, Style::kMarkdown); }

std::string MeasurementComparison::to_csv() const {
  TextTable table;
  table.header = {"section", "name", "label", "unit", "same"};
  for (std::size_t i = 0; i < measurements.size(); ++i) table.header.push_back("value_" + std::to_string(i + 1));
  for (std::size_t i = 1; i < measurements.size(); ++i) table.header.push_back("ratio_" + std::to_string(i + 1));
  for (const ComparisonSection& section : sections)
    for (const ComparisonRow& row : section.rows) {
      std::vector<std::string> cells = {section.name, row.name, row.label, row.unit, row.same ? "true" : "false"};
      for (const ComparedValue& value : row.values) cells.push_back(raw(value));
      for (std::size_t i = 1; i < measurements.size(); ++i)
        cells.push_back(row.ratios.empty() || !row.ratios[i] ? "" : shortest(*row.ratios[i]));
      table.rows.push_back(std::move(cells));
    }
  return table.to_csv();
}

std::string MeasurementComparison::to_json() const {
  JsonWriter json(kComparisonSchema, kComparisonSchemaVersion);
  json.key("measurements").begin_array();
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const Measurement& x = measurements[i];
    const GpuDevice* gpu = selected_gpu(x);
    json.begin_object()
        .key("index").value(static_cast<int>(i + 1))
        .key("source").value(sources[i])
        .key("device").value(x.configuration.device)
        .key("gpu");
    if (gpu) {
      json.value(gpu->name);
    } else {
      json.null();
    }
    if (!x.checkpoint) {
      json.key("dtype").value(x.model.dtype).end_object();
      continue;
    }
    // A checkpoint's run dtype is its configuration's (its synthetic model is unused).
    json.key("dtype").value(x.configuration.dtype)
        .key("checkpoint").begin_object()
        .key("directory").value(x.checkpoint->directory)
        .key("architecture").value(x.checkpoint->architecture.architecture)
        .end_object()
        .end_object();
  }
  json.end_array();
  json.key("findings").value(findings);
  json.key("sections").begin_array();
  for (const ComparisonSection& section : sections) {
    json.begin_object().key("name").value(section.name).key("title").value(section.title).key("rows").begin_array();
    for (const ComparisonRow& row : section.rows) {
      json.begin_object().key("name").value(row.name).key("label").value(row.label).key("unit");
      json.text_or_null(row.unit);
      json.key("same").value(row.same).key("values").begin_array();
      for (const ComparedValue& value : row.values) {
        switch (value.kind) {
          case Kind::kAbsent: json.null(); break;
          case Kind::kText: json.value(value.text); break;
          case Kind::kInteger: json.value(value.integer); break;
          case Kind::kSeconds:
          case Kind::kFraction:
          case Kind::kRate: json.value(value.number); break;
        }
      }
      json.end_array().key("ratios");
      if (row.ratios.empty()) {
        json.null();
      } else {
        json.begin_array();
        for (const std::optional<double>& ratio : row.ratios) json.value(ratio);
        json.end_array();
      }
      json.end_object();
    }
    json.end_array().end_object();
  }
  json.end_array();
  json.key("notes").value(comparison_notes(compared_of(*this)));
  return json.finish();
}

}  // namespace iteragpu
