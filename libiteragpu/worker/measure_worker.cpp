// iteragpu-measure-worker: one process, one measurement, so that its allocator counters are
// its own on its own GPU (SPEC §3) and a Jupyter kernel's earlier work never pollutes them.
// Started by the measurement runner (src/runner/measurement_runner.cpp), never by hand: it
// reads the request on stdin, measures, and reports on its original stdout through
// src/runner/worker_protocol.hpp; its exit code is that of the error class, 0 on success.

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "iteragpu/error.hpp"
#include "iteragpu/measurement_runner.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "runner/worker_protocol.hpp"

namespace iteragpu {
namespace {

// Writes everything or gives up silently: a runner that has gone cannot be told anything.
void write_all(int fd, const std::string& text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t count = write(fd, text.data() + written, text.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return;
    written += static_cast<std::size_t>(count);
  }
}

// The request record: everything up to the first LF on stdin, bounded.
std::string read_request_record() {
  std::string text;
  char c = 0;
  while (text.size() < worker_protocol::kMaxRecordBytes) {
    const ssize_t count = read(STDIN_FILENO, &c, 1);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0 || c == '\n') break;
    text += c;
  }
  if (!text.empty() && text.front() == worker_protocol::kRecordSeparator) text.erase(0, 1);
  return text;
}

// True when the runner said go on; anything else (its end of the pipe closed, a refusal)
// means stop.
bool runner_says_continue() {
  char answer = 0;
  ssize_t count = 0;
  do {
    count = read(STDIN_FILENO, &answer, 1);
  } while (count < 0 && errno == EINTR);
  return count == 1 && answer == worker_protocol::kContinue;
}

int run_measure_worker() {
  // The channel is the original stdout; fd 1 then goes to stderr, so nothing LibTorch or a
  // driver prints can corrupt a record.
  const int channel = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = [](int) { PhaseMeasurer::request_interrupt(); };
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
  // A runner that dies (killed, or a signal it does not handle) must not leave its worker to
  // publish a result nobody waits for: the worker is interrupted with it and stops at the
  // next phase boundary, writing nothing. (A runner gone before this line is seen at that
  // boundary too: its end of the request pipe is closed.)
  prctl(PR_SET_PDEATHSIG, SIGINT);

  try {
    const worker_protocol::WorkerRequest task = worker_protocol::parse_request(read_request_record());
    const MeasureConfiguration& configuration = task.configuration;
    if (task.task == worker_protocol::Task::kPlan) {
      write_all(channel, worker_protocol::plan_record(plan_device_targets(configuration)));
      return 0;
    }
    const PhaseProgress progress = [channel](const PhaseRow& row, int done, int total) {
      write_all(channel, worker_protocol::progress_record(row, done, total));
      if (!runner_says_continue()) PhaseMeasurer::request_interrupt();  // stops at the next boundary
    };
    const PhaseMeasurer measurer;
    std::string json;  // the document published is the one sent: built once
    if (configuration.output.empty()) {
      json = measurer.run(configuration, progress).to_json();
    } else {
      measurer.measure(configuration, progress, &json);
    }
    write_all(channel, worker_protocol::record(json));
    return 0;
  } catch (const Error& error) {
    write_all(channel, worker_protocol::error_record(record_of(error)));
    return static_cast<int>(error.exit_code());
  } catch (const std::exception& error) {
    write_all(channel, worker_protocol::error_record({"Error", "", std::string("internal error: ") + error.what()}));
    return static_cast<int>(ExitCode::kInternalError);
  }
}

}  // namespace
}  // namespace iteragpu

int main() { return iteragpu::run_measure_worker(); }
