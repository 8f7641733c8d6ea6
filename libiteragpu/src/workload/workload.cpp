// A measurement's notes around the workload's own, and the steps of today's workloads as
// allocations: load_model, create_inputs and forward, each the Workload's own allocate_model,
// allocate_inputs and forward_allocations.

#include "workload/workload.hpp"

#include "workload/workload_steps.hpp"

namespace iteragpu {
namespace {

class ModelInputsAndForwards final : public StepAllocations {
 public:
  explicit ModelInputsAndForwards(const Workload& workload)
      : workload_(workload), forwards_(workload.forward_allocations()) {}

  bool run(const std::string& step, AllocationRecorder& allocator) override {
    if (step == kLoadModelStep) {
      workload_.allocate_model(allocator);
    } else if (step == kCreateInputsStep) {
      workload_.allocate_inputs(allocator);
    } else if (step == kForwardStep) {
      forwards_->forward(allocator);
    } else {
      return false;
    }
    return true;
  }
  void release_output(AllocationRecorder& allocator) override { forwards_->release_output(allocator); }

 private:
  const Workload& workload_;
  std::unique_ptr<ForwardAllocations> forwards_;
};

}  // namespace

std::vector<std::string> measurement_notes(const Workload& workload) {
  std::vector<std::string> notes = {
      "allocated_bytes is part of reserved_bytes: never add them.",
      "peak_allocated_bytes and peak_reserved_bytes are separate maxima over the phase (the "
      "peaks are reset at its start): never subtract one from the other.",
  };
  for (std::string& note : workload.notes()) notes.push_back(std::move(note));
  notes.push_back("The figures depend on the allocator and the software versions: keep the environment "
                  "section with the results.");
  return notes;
}

std::unique_ptr<StepAllocations> Workload::step_allocations() const {
  return std::make_unique<ModelInputsAndForwards>(*this);
}

TimingSummary timing_of_rows(const std::vector<PhaseRow>& rows, bool (*is_repeat)(const PhaseRow& row)) {
  std::vector<double> host;
  std::vector<double> gpu;
  bool every_gpu_time = true;
  for (const PhaseRow& row : rows) {
    if (!is_repeat(row)) continue;
    host.push_back(row.host_seconds);
    if (row.gpu_event_seconds) {
      gpu.push_back(*row.gpu_event_seconds);
    } else {
      every_gpu_time = false;
    }
  }
  return TimingSummary::of_warm_repeats(host, every_gpu_time && !host.empty()
                                                  ? std::optional<std::vector<double>>(gpu)
                                                  : std::nullopt);
}

}  // namespace iteragpu
