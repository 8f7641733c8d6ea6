#pragma once
// The seam between the measurement protocol and what runs inside its phases. A workload is
// what a configuration asks to run: its steps and payload (the backend's WorkloadSpec), the
// allocations its ops make (for the predictor), its description in text and JSON (for
// messages, the measurement file and its reader) and the record of what its run produced. The
// protocol, the predictor, the measurer, the reader and the runner's summary use this interface
// only. Which workload a configuration asks for, and which one a measurement file describes, is
// the registry's answer (workload_kinds() below, workload_registry.cpp): the synthetic MLP
// (synthetic_model.cpp) and the decoder checkpoint (decoder_workload.cpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"
#include "iteragpu/decoder_architecture.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/phase_row.hpp"
#include "iteragpu/timing_statistics.hpp"
#include "iteragpu/workload_options.hpp"
#include "iteragpu/workload_run.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"

namespace iteragpu {

// Where a workload's predicted allocations go: the predictor's model of PyTorch's caching
// allocator, with the GEMM workspaces the process's first GEMMs allocate.
class AllocationRecorder {
 public:
  using Block = std::uint64_t;
  virtual ~AllocationRecorder() = default;
  // A request of 0 bytes allocates nothing (PyTorch hands out no block): not passed here.
  virtual Block allocate(std::uint64_t bytes) = 0;
  virtual void free(Block block) = 0;
  // Called inside every GEMM, after its output is allocated: the first one allocates the
  // cuBLAS workspace, the first bias-fused one (at::addmm's cuBLASLt path) the cuBLASLt
  // workspace.
  virtual void gemm_workspaces(bool bias_fused) = 0;
  // Called inside every GEMM on the autograd engine's thread (a backward's, a gradient
  // checkpoint's recomputation), after its output is allocated: that thread's cuBLAS handle has
  // its own workspaces, the cuBLAS one allocated by its first GEMM, the cuBLASLt one by its first
  // bias-fused GEMM (only a recomputation has any: a backward's GEMMs are mm's).
  virtual void backward_gemm_workspaces(bool bias_fused) = 0;
};

// The allocations of one run's forwards, and what they keep from one forward to the next
// (the synthetic MLP's output; a checkpoint's KV cache and last token).
class ForwardAllocations {
 public:
  virtual ~ForwardAllocations() = default;
  virtual void forward(AllocationRecorder& allocator) = 0;
  // What the backend's release_output frees.
  virtual void release_output(AllocationRecorder& allocator) = 0;
};

// The allocations of one run's steps, by the names its phase plan gives them, and what they
// keep from one step to the next: what the predictor runs in place of the backend's steps.
class StepAllocations {
 public:
  virtual ~StepAllocations() = default;
  // The allocations of `step`; false when none are modelled for it.
  virtual bool run(const std::string& step, AllocationRecorder& allocator) = 0;
  // What the backend's release_output frees.
  virtual void release_output(AllocationRecorder& allocator) = 0;
};

// One row of the protocol as a workload plans it: the row's name (phase, repeat, forwards,
// sequence, step; counters and times empty) and what the backend does inside it.
struct PlannedPhase {
  PhaseRow row;
  // The workload's step the backend runs inside the row (Backend::run_step; today's names in
  // workload_steps.hpp), and how many times: once, or once per forward of a row of forwards.
  std::string step;
  int runs = 1;
  // Whether each run leaves an output alive until release_output (a forward's): runs inside
  // one row release each other's outputs in between.
  bool keeps_output = false;
  // Release the previous output (outside the row's timing) before the row.
  bool release_first = false;
};

// Why a prediction may not hold (one line), and the counters it leaves unchecked.
struct PredictionCaveat {
  enum class Reach {
    // Every counter of every row (another PyTorch, allocator settings).
    kEveryCounter,
    // Temporaries of the forward that the rules may not know: from the first row that runs a
    // forward, its peaks and reserved end, and every reserved counter and peak after it;
    // allocated baselines and ends stay exact (temporaries are freed by each row's end).
    kForwardTemporaries,
    // Allocations of the forward that stay (the GEMM workspaces): from the first row that runs
    // a forward, every counter but its baselines.
    kForwardAllocations,
  };
  std::string text;
  Reach reach = Reach::kEveryCounter;
  bool lower_bound = false;  // the counters can only be higher than predicted
  // The most a counter it reaches differed from the measurement, either way, in the recorded
  // cells it applies to (the text says which); 0 where nothing bounds it.
  std::uint64_t recorded_bound_bytes = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;

  // The rows a measurement runs, in order; the reader expects exactly these.
  virtual std::vector<PlannedPhase> phase_plan(int warmup, int repeats) const = 0;
  // Whether the predictor models its allocations (allocate_* below); when not, a prediction
  // is refused with UsageError(field, reason) from prediction_refusal().
  virtual bool predictable() const { return true; }
  virtual std::string prediction_refusal() const { return {}; }
  // Why a prediction for a GPU of this compute capability may not hold, and which counters.
  virtual std::vector<PredictionCaveat> prediction_caveats(int major, int minor) const {
    (void)major, (void)minor;
    return {};
  }
  // How the predictor's allocator model lays out new segments (CachingAllocatorModel: which of
  // two equal free blocks a best fit takes depends on where CUDA put their segments, which a
  // prediction cannot know). kUpward: one after another. kLargerOfBoth: the model runs with
  // each segment above the previous and with each below, and the prediction is, counter by
  // counter, the larger of the two, so that where the order matters it errs high.
  enum class SegmentLayout { kUpward, kLargerOfBoth };
  virtual SegmentLayout segment_layout() const { return SegmentLayout::kUpward; }
  // The checkpoint it runs, as a measurement records it; none for the synthetic MLP.
  virtual std::optional<CheckpointRecord> checkpoint_record() const { return std::nullopt; }

  // How messages name the configuration's shape: "batch 1, context 16, width 64, hidden 256,
  // dtype float32".
  virtual std::string shape_text() const = 0;
  // How the configuration's warm-up and repeats read after it ("warmup 1, repeats 2"); empty
  // for a workload whose repeats are not the common ones (a training run's are its steps).
  virtual std::string repetition_text(const MeasureConfiguration& configuration) const {
    return "warmup " + std::to_string(configuration.warmup) + ", repeats " + std::to_string(configuration.repeats);
  }
  // What the backend runs on `device_index`: its kind and its payload, from its codec.
  virtual WorkloadSpec workload_spec(int device_index, std::uint64_t seed) const = 0;

  // The allocations of the backend's steps, in the order its ops make them.
  virtual void allocate_model(AllocationRecorder& allocator) const = 0;
  virtual void allocate_inputs(AllocationRecorder& allocator) const = 0;
  // The forwards of one run, in the order the protocol calls them.
  virtual std::unique_ptr<ForwardAllocations> forward_allocations() const = 0;
  // The steps of one run as allocations: by default the model's, the inputs' and the
  // forwards' above for the steps load_model, create_inputs and forward (workload.cpp); a
  // workload with other steps gives its own.
  virtual std::unique_ptr<StepAllocations> step_allocations() const;
  // Bytes the weights and the inputs take on the GPU (elements × the run's dtype bytes).
  virtual std::uint64_t parameter_bytes() const = 0;
  virtual std::uint64_t input_bytes() const = 0;
  // Whether its GEMMs take at::addmm's bias-fused cuBLASLt path (and its workspace), unless
  // the environment disables it.
  virtual bool uses_cublaslt() const = 0;
  // The prediction rules its forward adds to the allocator's.
  virtual std::vector<std::string> forward_rules() const = 0;

  // The heading of a prediction: "Linear(64→256) → GELU → Linear(256→64), float32, input [1, 16, 64]".
  virtual std::string heading() const = 0;
  // The model and input lines of a measurement's text.
  virtual std::string measurement_text() const = 0;
  // Writes its section of a measurement file (key and object).
  virtual void write_json(JsonWriter& json) const = 0;
  // Checks the section a measurement file wrote against this workload (the reader);
  // DataFileError naming the member that differs.
  virtual void check_json(const JsonObjectReader& document) const = 0;
  // What its rows mean, for a measurement's notes (between the notes every measurement has:
  // measurement_notes()).
  virtual std::vector<std::string> notes() const = 0;
  // The width of the text's phase column ("cold_forward", "warmup decode 16").
  virtual int phase_column_width() const = 0;
  // The spread of the warm repeats' times, from its rows (the measurement's timing summary):
  // which rows make a repeat is the workload's (a warm forward, a warm decode step, a warm
  // training step's three rows).
  virtual TimingSummary warm_repeats(const std::vector<PhaseRow>& rows) const = 0;
  // Why a measurement's text shows no prediction, in parentheses.
  virtual std::string no_prediction_reason() const = 0;

  // The record of what the run produced besides the rows, after the phases, from the
  // backend's report and the rows; null when the workload keeps none (the synthetic MLP).
  // MeasurementFailed when the backend gives no report.
  virtual std::shared_ptr<const WorkloadRun> run_record(Backend& backend, const std::vector<PhaseRow>& rows,
                                                        const TimingSummary& warm_repeats) const {
    (void)backend, (void)rows, (void)warm_repeats;
    return nullptr;
  }
  // Its record in a measurement file and text, and read back (null when the file has none).
  // `run` is a record this workload made or read.
  virtual void write_run_json(JsonWriter& json, const WorkloadRun& run) const { (void)json, (void)run; }
  virtual std::string run_text(const WorkloadRun& run) const {
    (void)run;
    return {};
  }
  virtual std::shared_ptr<const WorkloadRun> read_run(const JsonObjectReader& document) const {
    (void)document;
    return nullptr;
  }
};

// A measurement's notes: how to read the counters, the workload's own notes, and what the
// figures depend on (workload.cpp).
std::vector<std::string> measurement_notes(const Workload& workload);

// One kind of workload as the registry knows it: its name (the backend plugin's module is
// registered under the same name), which configurations ask for it, how it is made from a
// configuration and from a measurement file, and the options it has besides the shared ones.
// A new workload is a new entry of workload_kinds().
struct WorkloadKind {
  const char* name;
  // Whether a configuration (checked or read back from a file) asks for this workload.
  bool (*asked_for)(const MeasureConfiguration& configuration);
  // The workload a checked configuration asks for: reads its model's files (shared by every
  // copy of the configuration, so read once) and checks the configuration against it
  // (UsageError, DataFileError).
  std::unique_ptr<const Workload> (*make)(const MeasureConfiguration& configuration);
  // The workload a measurement file describes, from its configuration and its own section of
  // the document, without the model's files (which may not be on this machine): it describes
  // the run and cannot run it. UsageError for values that do not make one.
  std::unique_ptr<const Workload> (*recorded)(const MeasureConfiguration& configuration,
                                               const JsonObjectReader& document);
  // What the workload decides in a configuration being checked (a checkpoint's dtype and
  // sizes, the synthetic MLP's hidden size when left out), then the check of the rest
  // (UsageError, DataFileError): MeasureConfiguration::checked() calls it once the options are
  // completed and the model's files found.
  void (*resolve)(MeasureConfiguration& configuration);
  // Its own options, in the order the command line, Python and the configuration's JSON give
  // them (after the model): MeasureConfiguration::parse checks them, checked() gives the ones
  // left out their default, and the workload reads them from configuration.workload_options.
  std::vector<WorkloadOption> options;
  // The phases its rows name (PhaseRow::phase): what a row read back may be.
  std::vector<std::string> phases;
  // Null when its rows have warm-ups and warm repeats (--warmup, --repeats); else what its
  // rows are instead, for the refusal of those options.
  const char* rows_instead_of_repeats = nullptr;
};

// The spread of the times of the rows `is_repeat` selects, one repeat each; GPU event times
// only when every such row has one (workload.cpp).
TimingSummary timing_of_rows(const std::vector<PhaseRow>& rows, bool (*is_repeat)(const PhaseRow& row));

// Whether some workload's rows name `phase`.
bool is_workload_phase(const std::string& phase);

// Every workload, in the order the registry asks them; the last one asks for nothing in
// particular (the synthetic MLP: a configuration without a model).
const std::vector<WorkloadKind>& workload_kinds();
// The kind a configuration asks for.
const WorkloadKind& workload_kind_of(const MeasureConfiguration& configuration);

// UsageError when `kind` does not declare the option `name`: the declaring workload's reason
// (WorkloadOption::elsewhere), or that no workload has it (workload_options.cpp).
void require_declared_by(const WorkloadKind& kind, const std::string& name);
// `given` in `kind`'s order, each option it leaves out at its default (checked); UsageError for
// an option `kind` does not declare. The values given are kept: the workload checks them.
WorkloadOptions completed_options(const WorkloadKind& kind, const WorkloadOptions& given);

// The workload a checked configuration asks for (UsageError when its values do not make one).
std::unique_ptr<const Workload> workload_for(const MeasureConfiguration& configuration);

// A measurement loads a model's weights: refused (UsageError "model") for a checked
// configuration whose Hub id was read as headers only, with how to download it.
void require_weights_here(const MeasureConfiguration& configuration);

}  // namespace iteragpu
