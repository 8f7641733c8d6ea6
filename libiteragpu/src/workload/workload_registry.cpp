// The registry of workloads: which one a configuration asks for. Each kind is defined in its
// workload's own file; a new workload adds its file and a line here, and the protocol, the
// predictor, the measurer and the measurement file's reader take it through the Workload
// interface without change.

#include <string>
#include <vector>

#include "iteragpu/error.hpp"
#include "workload/workload.hpp"

namespace iteragpu {

const WorkloadKind& decoder_workload_kind();  // decoder_workload.cpp
const WorkloadKind& synthetic_mlp_kind();     // synthetic_model.cpp
const WorkloadKind& training_workload_kind();  // training_workload.cpp

const std::vector<WorkloadKind>& workload_kinds() {
  // A checkpoint asked to train, before the decoder, which takes every other checkpoint.
  static const std::vector<WorkloadKind> kinds{training_workload_kind(), decoder_workload_kind(),
                                               synthetic_mlp_kind()};
  return kinds;
}

const WorkloadKind& workload_kind_of(const MeasureConfiguration& configuration) {
  for (const WorkloadKind& kind : workload_kinds())
    if (kind.asked_for(configuration)) return kind;
  throw UsageError("model", "names no workload this build has");  // the synthetic MLP asks for the rest
}

bool is_workload_phase(const std::string& phase) {
  for (const WorkloadKind& kind : workload_kinds())
    for (const std::string& name : kind.phases)
      if (name == phase) return true;
  return false;
}

std::unique_ptr<const Workload> workload_for(const MeasureConfiguration& configuration) {
  return workload_kind_of(configuration).make(configuration);
}

}  // namespace iteragpu
