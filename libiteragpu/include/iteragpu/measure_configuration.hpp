#pragma once
// What a measurement (or a prediction) is asked for: as the user wrote it (MeasureRequest,
// text from the command line or a Python keyword), parsed once at that edge into the typed
// MeasureConfiguration that everything inside the core takes, and the model derived from it.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "iteragpu/model_origin.hpp"
#include "iteragpu/workload_options.hpp"

namespace iteragpu {

class ModelFiles;  // a model's files, found once (estimate/model_files.hpp)

// The largest batch, context, width or hidden size a bounded measurement accepts.
inline constexpr std::int64_t kMaxModelDimension = std::int64_t{1} << 24;  // 16,777,216
// The most forwards a warmup phase or the warm repeats may have.
inline constexpr int kMaxForwardCount = 100000;

// As written on the command line or in a Python keyword: text, parsed by
// MeasureConfiguration::parse, the one parser and the one set of checks of measurement
// requests for both faces. An option left out is absent (std::nullopt), which is not the same
// as given empty: `--model ''` or model="" is refused, never taken for the synthetic MLP.
struct MeasureRequest {
  std::string device = "cuda:0";  // cuda:N; `all` or cuda:0,cuda:1 for the runner
  std::string batch = "1";
  std::string context = "16";     // the synthetic MLP's positions, or a checkpoint's prompt length
  std::optional<std::string> width;       // the synthetic MLP's; absent: 64
  std::optional<std::string> hidden;      // the synthetic MLP's; absent: 4 × width
  std::optional<std::string> dtype;       // float32 | float16 | bfloat16; absent: float32, or the checkpoint's
  std::optional<std::string> warmup;     // absent: 1 (a workload without warm-ups refuses one given)
  std::optional<std::string> repeats;    // absent: 2 (likewise)
  std::string seed = "20260924";
  std::string output;             // JSON file to create; must not exist
  std::string backend_path;       // explicit plugin file; empty = default search
  std::optional<std::string> model;       // a checkpoint folder: the decoder workload; absent: the synthetic MLP
  std::optional<std::string> timeout;     // with a Hub id: seconds per HTTP request; absent: 10
  // The options a workload declares for itself (workload_options.hpp), as written, by the
  // name the command line spells ("new-tokens"); one left out is not here (its default).
  std::map<std::string, std::string> workload_options;
};

// A request checked and resolved: whole numbers in range, hidden given (4 × width when the
// request left it out), dtype known (a checkpoint's own when the request left it out), and
// every option its workload declares given (its default when the request left it out).
struct MeasureConfiguration {
  std::string device = "cuda:0";
  std::int64_t batch = 1;
  std::int64_t context = 16;
  std::int64_t width = 64;
  std::int64_t hidden = 256;      // 0 before checked(): 4 × width
  bool hidden_is_default = false;  // hidden was left out, so it follows the width (a sweep)
  std::string dtype = "float32";
  int warmup = 1;
  int repeats = 2;
  std::uint64_t seed = 20260924;
  std::string output;
  std::string backend_path;
  std::string model;              // empty: the synthetic MLP (width, hidden); else a checkpoint folder
  // The workload's own options, checked (with a model: new-tokens, the decode steps after
  // the prefill); the ones left out get their declared default from checked().
  WorkloadOptions workload_options;
  long hub_timeout_ms = 10000;    // with a Hub id: per HTTP request
  // The model's files (a folder, a cache snapshot, a Hub snapshot of headers), found by the
  // first checked() and shared by every copy, so a model is read from the Hub once.
  std::shared_ptr<const ModelFiles> model_files;

  // Where the model was read from; a Kind::kPath origin for a folder or no model.
  ModelOrigin model_origin() const;

  // Throws UsageError naming the field and what is accepted: a value out of range, an empty
  // one, an option of another workload (width or hidden with a model, new tokens without).
  // The device text is kept as written: a single measurement checks it is cuda:N, the runner
  // also accepts lists.
  static MeasureConfiguration parse(const MeasureRequest& request);
  // This configuration with every value checked as parse checks it (UsageError), hidden
  // resolved and the workload's options completed with their defaults (an option its
  // workload does not declare refused): what the core's entry points run, whoever built it.
  MeasureConfiguration checked() const;
};

}  // namespace iteragpu
