#include "protocol/phase_protocol.hpp"

#include <chrono>
#include <string>
#include <utility>

#include "iteragpu/error.hpp"

namespace iteragpu {
namespace {

std::string configuration_text(const MeasureConfiguration& request, const Workload& workload) {
  return request.device + ", " + workload.shape_text() + ", warmup " + std::to_string(request.warmup) +
         ", repeats " + std::to_string(request.repeats);
}

// One phase: the order of calls is the protocol of SPEC §3 (see Backend). Nothing in the
// timed region allocates or formats; failures leave it by exception.
class PhaseProtocol {
 public:
  PhaseProtocol(Backend& backend, const MeasureConfiguration& request, const Workload& workload)
      : backend_(backend), request_(request), workload_(workload) {}

  template <typename Work>
  PhaseRow run(const char* phase, int repeat, int forwards, Work&& work) {
    using Clock = std::chrono::steady_clock;
    PhaseRow row;
    row.phase = phase;
    row.repeat = repeat;
    row.forwards = forwards;
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

int phase_row_count(const MeasureConfiguration& request) {
  return 3 + (request.warmup > 0 ? 1 : 0) + request.repeats;
}

void run_phase_protocol(Backend& backend, const MeasureConfiguration& request, const Workload& workload,
                        int device_index, const std::function<void(PhaseRow row)>& record) {
  PhaseProtocol protocol(backend, request, workload);
  BackendSession session{backend};
  protocol.check(backend.open(workload.model_spec(device_index, request.seed)), "device selection");

  bool output_alive = false;
  // The previous forward's output lives until its phase has recorded its end values.
  auto release_previous_output = [&](const char* phase) {
    if (output_alive) protocol.check(backend.release_output(), phase);
    output_alive = false;
  };
  auto one_forward = [&] {
    output_alive = true;
    return backend.forward();
  };

  record(protocol.run("model_load", 0, 0, [&] { return backend.load_model(); }));
  record(protocol.run("inputs", 0, 0, [&] { return backend.create_inputs(); }));
  record(protocol.run("cold_forward", 0, 1, one_forward));
  if (request.warmup > 0) {
    release_previous_output("warmup");
    record(protocol.run("warmup", 0, request.warmup, [&] {
      for (int i = 0; i < request.warmup; ++i) {
        if (output_alive) {
          BackendStatus released = backend.release_output();
          if (!released.ok()) return released;
        }
        BackendStatus status = one_forward();
        if (!status.ok()) return status;
      }
      return BackendStatus::Ok();
    }));
  }
  for (int repeat = 1; repeat <= request.repeats; ++repeat) {
    release_previous_output("warm_forward");
    record(protocol.run("warm_forward", repeat, 1, one_forward));
  }
}

// The spread of the warm_forward rows' times; GPU event times only when every row has one.
TimingSummary summarize_warm_repeats(const std::vector<PhaseRow>& phases) {
  std::vector<double> host;
  std::vector<double> gpu;
  bool every_gpu_time = true;
  for (const PhaseRow& row : phases) {
    if (row.phase != "warm_forward") continue;
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
