#pragma once
// Predicted caching-allocator counters for every phase of a measurement, before the GPU is
// touched. The rules (tensor sizes, 512-byte rounding, small and large pools and their
// segments, the rounding of large requests, the cuBLAS and cuBLASLt workspaces, the order in
// which the workload's ops allocate and free) are PyTorch's, written down once: the allocator
// in libiteragpu/src/prediction/caching_allocator_model.cpp, each workload's ops in its own
// file under libiteragpu/src/workload/. The prediction runs the measurement's own phase
// protocol against that model.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"
#include "iteragpu/environment.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/synthetic_model.hpp"

namespace iteragpu {

// What the prediction needs to know of the GPU and its LibTorch.
struct PredictionTarget {
  int compute_capability_major = 9;
  int compute_capability_minor = 0;
  std::string gpu_name;  // empty when predicting for a compute capability alone
  // The LibTorch the backend reported ("2.11.0+cu130"); empty for the table (PyTorch 2.11).
  std::string torch_version;
  // The workspaces LibTorch gives cuBLAS and cuBLASLt, per (handle, stream), on this GPU.
  std::uint64_t cublas_workspace_bytes = 0;
  std::uint64_t cublaslt_workspace_bytes = 0;
  // "reported by LibTorch 2.11.0+cu130" or "table for compute capability 9.0 (PyTorch 2.11
  // defaults)".
  std::string workspace_source;
  // The bytes the caching allocator may reserve on this GPU (its total less the process's
  // footprint outside the allocator), where a question is asked of a given card (packages
  // --model); 0: unlimited. Near it the allocator frees its cached segments before it fails,
  // and a prediction that runs out throws OutOfMemory naming the phase.
  std::uint64_t allocator_capacity_bytes = 0;

  // The documented table (PyTorch's defaults): cuBLAS 32 MiB on compute capability 9.0,
  // otherwise 8 MiB + 128 KiB; cuBLASLt 1 MiB. Used when no backend reports the sizes.
  // Only for the compute capabilities of real NVIDIA GPUs (5.0 to 12.1): UsageError naming
  // them otherwise.
  static PredictionTarget from_table(int major, int minor);
  // The sizes the backend read from LibTorch for the selected GPU, else the table for its
  // compute capability. Throws UsageError when the report names no selected GPU.
  static PredictionTarget from_environment(const EnvironmentReport& environment);
  // What `predict` is given: exactly one of a device ("cuda:N": the backend plugin, loaded
  // from `backend_path` or the usual places, reports the GPU without allocating) or a
  // compute capability ("9.0": the table, no backend). UsageError, BackendUnavailable or
  // DeviceUnavailable otherwise, each naming the way out.
  static PredictionTarget resolve(const std::string& device, const std::string& compute_capability,
                                  const std::string& backend_path = "");
};

// Predicted counters of one phase row, and what was predicted for it.
struct PhasePrediction {
  std::string phase;
  int repeat = 0;
  int forwards = 0;
  std::string sequence;     // a checkpoint's rows: cold, warmup or warm (PhaseRow)
  std::optional<int> step;  // a checkpoint's rows: 0 for the prefill, then each decode step
  AllocatorCounters baseline;  // allocated/reserved before
  AllocatorCounters end;       // allocated/reserved after, and the peaks during the phase
  // The counters a caveat of the prediction leaves unchecked, as the JSON names them
  // ("peak_reserved_bytes", "reserved_bytes.end", ...); empty when every one is exact by the
  // rules. `lower_bound`: every caveat that reaches this row says its counters can only be
  // higher (an SDPA backend that allocates more than its output); otherwise they may differ
  // either way (another PyTorch, allocator settings).
  std::vector<std::string> uncertain_counters;
  bool lower_bound = false;
  // Where every caveat that reaches this row was measured against recorded cells: the sum of
  // the most each moved a counter there, either way (a package's fit keeps a margin for it).
  // 0 where none reaches the row or one has no such record.
  std::uint64_t recorded_bound_bytes = 0;
};

// Over the rows a caveat marks that `counted` selects: the most those caveats moved a counter
// in the recorded cells (the largest recorded_bound_bytes), or 0 when one of them has no such
// record or none is selected. The text's "at most" line and a package's margin both use it.
std::uint64_t recorded_bound_bytes(const std::vector<PhasePrediction>& rows,
                                   const std::function<bool(const PhasePrediction&)>& counted);

class Workload;  // what the prediction ran (libiteragpu/src/workload/workload.hpp), opaque here

struct MemoryPrediction {
  MeasureConfiguration configuration;  // output ignored
  SyntheticModel model;                // the synthetic MLP's; empty for a checkpoint
  std::uint64_t parameter_bytes = 0;   // the weights on the GPU, in the run's dtype
  std::uint64_t input_bytes = 0;
  PredictionTarget target;
  bool cublaslt_used = true;     // the bias-fused GEMM path of at::addmm (cuBLASLt)
  std::vector<PhasePrediction> phases;
  // Why a prediction may not hold here (allocator settings in the environment, ...). Empty
  // when every rule applies.
  std::vector<std::string> caveats;

  // What was predicted, as the text's first line says it: "Linear(64→256) → GELU →
  // Linear(256→64), float32, input [1, 16, 64]", or the checkpoint's architecture and input.
  std::string heading;
  // The workload predicted, which describes itself in the text and JSON; null in a prediction
  // built by hand or read back from a measurement file: found from the configuration.
  std::shared_ptr<const Workload> workload;

  std::string to_json() const;  // schema "iteragpu.prediction"
  std::string to_text() const;
};

class MemoryPredictor {
 public:
  // Checks `configuration` like PhaseMeasurer (UsageError) and predicts every phase row.
  // Touches no GPU and loads no backend.
  static MemoryPrediction predict(const MeasureConfiguration& configuration, const PredictionTarget& target);
};

}  // namespace iteragpu
