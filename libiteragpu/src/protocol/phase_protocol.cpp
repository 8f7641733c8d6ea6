#include "protocol/phase_protocol.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "iteragpu/error.hpp"

namespace iteragpu {
namespace {

std::string configuration_text(const MeasureConfiguration& request, const Workload& workload) {
  const std::string repetition = workload.repetition_text(request);
  return request.device + ", " + workload.shape_text() + (repetition.empty() ? "" : ", " + repetition);
}

// One phase: the order of calls is the protocol of SPEC §3 (see Backend). Nothing in the
// timed region allocates or formats; failures leave it by exception.
class PhaseProtocol {
 public:
  PhaseProtocol(Backend& backend, const MeasureConfiguration& request, const Workload& workload)
      : backend_(backend), request_(request), workload_(workload) {}

  template <typename Work>
  PhaseRow run(const PhaseRow& planned, Work&& work) {
    using Clock = std::chrono::steady_clock;
    PhaseRow row = planned;
    const char* phase = planned.phase.c_str();
    check(backend_.synchronize(), phase);
    check(backend_.read_counters(row.baseline), phase);
    check(backend_.reset_peaks(), phase);
    check(backend_.start_gpu_timer(), phase);
    const Clock::time_point start = Clock::now();
    check(work(), phase);
    check(backend_.stop_gpu_timer(), phase);
    check(backend_.synchronize(), phase);
    const Clock::time_point stop = Clock::now();
    check(backend_.read_counters(row.end), phase);
    double gpu_seconds = 0;
    const BackendStatus timer = backend_.gpu_timer_seconds(gpu_seconds);
    if (timer.ok()) {
      row.gpu_event_seconds = gpu_seconds;
    } else if (timer.code != BackendStatus::Code::kUnsupported) {  // unsupported: no figure
      check(timer, phase);
    }
    row.host_seconds = std::chrono::duration<double>(stop - start).count();
    return row;
  }

  void check(const BackendStatus& status, const char* phase) const {
    if (!status.ok()) fail(status, phase);
  }

  [[noreturn]] void fail(const BackendStatus& status, const std::string& phase) const {
    const std::string configuration = configuration_text(request_, workload_);
    const std::string detail = status.message.empty() ? "" : ": " + status.message;
    switch (status.code) {
      case BackendStatus::Code::kOutOfMemory:
        throw OutOfMemory("out of GPU memory during phase " + phase + " (" + configuration + ")" +
                          detail + "; nothing was written");
      case BackendStatus::Code::kDeviceUnavailable:
        throw DeviceUnavailable(request_.device + " is not available (" + phase + ")" + detail +
                                "; nothing was measured");
      case BackendStatus::Code::kUnsupported:
        throw UsageError("dtype", request_.dtype + " is not supported on " + request_.device + " (" +
                                      phase + ")" + detail);
      default:
        throw MeasurementFailed("the measurement failed during phase " + phase + " (" +
                                configuration + ")" + detail + "; nothing was written");
    }
  }

 private:
  Backend& backend_;
  const MeasureConfiguration& request_;
  const Workload& workload_;
};

// The backend frees the model, inputs and output whatever happens.
struct BackendSession {
  Backend& backend;
  ~BackendSession() { backend.close(); }
};

}  // namespace

int phase_row_count(const MeasureConfiguration& request, const Workload& workload) {
  return static_cast<int>(workload.phase_plan(request.warmup, request.repeats).size());
}

void run_phase_protocol(Backend& backend, const MeasureConfiguration& request, const Workload& workload,
                        int device_index, const std::function<void(PhaseRow row)>& record) {
  PhaseProtocol protocol(backend, request, workload);
  BackendSession session{backend};
  protocol.check(backend.open(workload.workload_spec(device_index, request.seed)), "device selection");

  // The protocol knows no step: it runs the ones the plan names and releases the outputs the
  // plan says they keep.
  bool output_alive = false;
  for (const PlannedPhase& planned : workload.phase_plan(request.warmup, request.repeats)) {
    const char* phase = planned.row.phase.c_str();
    // The previous output lives until its phase has recorded its end values.
    if (planned.release_first && output_alive) {
      protocol.check(backend.release_output(), phase);
      output_alive = false;
    }
    record(protocol.run(planned.row, [&] {
      for (int run = 0; run < planned.runs; ++run) {
        if (run > 0 && output_alive) {
          BackendStatus released = backend.release_output();
          if (!released.ok()) return released;
        }
        if (planned.keeps_output) output_alive = true;
        BackendStatus status = backend.run_step(planned.step);
        if (!status.ok()) return status;
      }
      return BackendStatus::Ok();
    }));
  }
}

}  // namespace iteragpu
