// The steps of today's workloads as allocations: load_model, create_inputs and forward, each
// the Workload's own allocate_model, allocate_inputs and forward_allocations.

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

std::unique_ptr<StepAllocations> Workload::step_allocations() const {
  return std::make_unique<ModelInputsAndForwards>(*this);
}

}  // namespace iteragpu
