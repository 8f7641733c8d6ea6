// iteragpu-measure-worker: one process, one measurement, so that its allocator counters are
// its own on its own GPU (SPEC §3) and a Jupyter kernel's earlier work never pollutes them.
// Started by the measurement runner (src/runner/measurement_runner.cpp), never by hand: it
// reads the request on stdin, measures, and reports on its original stdout through
// src/runner/worker_protocol.hpp; its exit code is that of the error class, 0 on success.

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "iteragpu/error.hpp"
#include "iteragpu/measurement_runner.hpp"
#include "iteragpu/output_files.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "mechanics/interrupts_held.hpp"
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

// Set once the result (or the error) record is sent: the worker then has nothing to stop.
std::atomic<bool> outcome_sent{false};
static_assert(std::atomic<bool>::is_always_lock_free);

// What a signal handler needs, made before any handler is installed: the channel and the
// record that says the worker was interrupted, and where (a handler only writes it and exits).
int channel_fd = -1;
std::string interrupted_record;

void say_interrupted(const std::string& when) {
  interrupted_record = worker_protocol::error_record(record_of(Interrupted("interrupted " + when + "; nothing was written")));
}

// Sends a record whole. `outcome` marks the last record: after it there is nothing to stop.
void send(int fd, const std::string& record, bool outcome = false) {
  const InterruptsHeld held;
  write_all(fd, record);
  if (outcome) outcome_sent.store(true);
}

// SIGINT, SIGTERM, SIGHUP, and the runner's death (PR_SET_PDEATHSIG): the worker stops at
// once, in any phase (planning, the prediction, a GPU phase), its temporary file removed; the
// driver frees its GPU memory with the process. Once its result is published it finishes
// instead, so its status never contradicts the file.
void stop_at_once(int) {
  if (output_committed() || outcome_sent.load()) return;
  remove_live_temporary_files();
  write_all(channel_fd, interrupted_record);
  _exit(static_cast<int>(ExitCode::kInterrupted));
}

int run_measure_worker(const char* runner_pid) {
  // The channel is the original stdout; fd 1 then goes to stderr, so nothing LibTorch or a
  // driver prints can corrupt a record.
  const int channel = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  channel_fd = channel;
  say_interrupted("before the measurement started");
  signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = stop_at_once;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGHUP, &action, nullptr);
  // A runner that dies (killed, or a signal it does not handle) takes its worker with it. One
  // gone before this line has left the worker to another parent: it stops here.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (runner_pid == nullptr || std::to_string(getppid()) != runner_pid) stop_at_once(SIGTERM);

  try {
    const worker_protocol::WorkerRequest task = worker_protocol::parse_request(read_request_record());
    const MeasureConfiguration& configuration = task.configuration;
    if (task.task == worker_protocol::Task::kPlan) {
      send(channel, worker_protocol::plan_record(plan_device_targets(configuration)), true);
      return 0;
    }
    const PhaseProgress progress = [channel](const PhaseRow& row, int done, int total) {
      {
        const InterruptsHeld held;
        write_all(channel, worker_protocol::progress_record(row, done, total));
        say_interrupted("after phase " + row.phase);
      }
      if (!runner_says_continue()) PhaseMeasurer::request_interrupt();  // stops at the next boundary
    };
    const PhaseMeasurer measurer;
    std::string json;  // the document published is the one sent: built once
    if (configuration.output.empty()) {
      json = measurer.run(configuration, progress).to_json();
    } else {
      measurer.measure(configuration, progress, &json);
    }
    send(channel, worker_protocol::record(json), true);
    return 0;
  } catch (const Error& error) {
    send(channel, worker_protocol::error_record(record_of(error)), true);
    return static_cast<int>(error.exit_code());
  } catch (const std::exception& error) {
    send(channel, worker_protocol::error_record({"Error", "", std::string("internal error: ") + error.what()}), true);
    return static_cast<int>(ExitCode::kInternalError);
  }
}

}  // namespace
}  // namespace iteragpu

// argv[1]: the runner's process id (WorkerProcess passes it).
int main(int argc, char** argv) { return iteragpu::run_measure_worker(argc > 1 ? argv[1] : nullptr); }
