// One child process per GPU, started together: each re-executes this program as a plain
// single-device `iteragpu measure`, so its counters are its own process's on its own GPU
// only (one measurement per process, SPEC §3). The parent checks everything first, then
// waits for the children, forwards SIGINT/SIGTERM to them, and writes the summary.

#include "multi_device_measure.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "iteragpu/error.hpp"
#include "iteragpu/multi_device_measurement.hpp"

namespace iteragpu::cli {
namespace {

// At most one child per device index (cuda:0 to cuda:127, no duplicates).
constexpr std::size_t kMaxChildren = 128;
// A child's stderr is one line; keep no more than this of it whatever happens.
constexpr std::size_t kMaxStderrBytes = 64 * 1024;

// Written by the signal handler: lock-free atomics only.
std::atomic<int> received_signal{0};
std::atomic<pid_t> running_children[kMaxChildren];
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void forward_to_children(int signal_number) {
  received_signal.store(signal_number);
  for (auto& child : running_children) {
    const pid_t pid = child.load();
    if (pid > 0) kill(pid, signal_number);
  }
}

// While alive, SIGINT and SIGTERM are passed on to the running children (each stops between
// phases and writes nothing), every time they arrive; this process keeps waiting for them
// and still writes the summary.
class SignalForwarding {
 public:
  SignalForwarding() {
    received_signal.store(0);
    for (auto& child : running_children) child.store(0);
    struct sigaction action {};
    action.sa_handler = forward_to_children;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_interrupt_);
    sigaction(SIGTERM, &action, &previous_terminate_);
  }
  ~SignalForwarding() {
    sigaction(SIGINT, &previous_interrupt_, nullptr);
    sigaction(SIGTERM, &previous_terminate_, nullptr);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;
  bool received() const { return received_signal.load() != 0; }

 private:
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
};

// Holds SIGINT/SIGTERM back while a child is started and recorded, so that a signal cannot
// fall between the two and miss it; a held signal is handled when this ends.
class HeldSignals {
 public:
  HeldSignals() {
    sigset_t held;
    sigemptyset(&held);
    sigaddset(&held, SIGINT);
    sigaddset(&held, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &held, &previous_);
  }
  ~HeldSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  HeldSignals(const HeldSignals&) = delete;
  HeldSignals& operator=(const HeldSignals&) = delete;

 private:
  sigset_t previous_;
};

struct ChildProcess {
  DeviceTarget target;
  std::size_t slot = 0;
  bool started = false;
  std::string start_error;  // why it could not be started
  pid_t pid = -1;
  int stderr_fd = -1;       // read end of the pipe on its stderr; -1 once at end of file
  std::string stderr_text;
  int exit_code = 0;        // 128 + N when ended by signal N
  int end_signal = 0;
};

// The single-device command with the very configuration the parent validated.
std::vector<std::string> child_arguments(const MeasureRequest& request, const DeviceTarget& target) {
  std::vector<std::string> args = {
      "iteragpu", "measure",
      "--device=" + target.device,
      "--output=" + target.result_file,
      "--format=json",  // its stdout (the JSON) is discarded: the parent reads the file
      "--batch=" + std::to_string(request.batch),
      "--context=" + std::to_string(request.context),
      "--width=" + std::to_string(request.width),
      "--dtype=" + request.dtype,
      "--warmup=" + std::to_string(request.warmup),
      "--repeats=" + std::to_string(request.repeats),
      "--seed=" + std::to_string(request.seed),
  };
  if (request.hidden != 0) args.push_back("--hidden=" + std::to_string(request.hidden));
  if (!request.backend_path.empty()) args.push_back("--backend=" + request.backend_path);
  return args;
}

// Starts `/proc/self/exe measure ...` with stdin and stdout on /dev/null and stderr on a pipe.
void start_child(ChildProcess& child, const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    child.start_error = "could not start a process for " + child.target.device + ": " + std::strerror(errno);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group: a terminal's Ctrl-C reaches only this process, which passes it
  // on once (a second copy would end a child before it could stop cleanly).
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t signals;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&attributes, &signals);  // none held, whatever HeldSignals does
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  posix_spawnattr_setsigdefault(&attributes, &signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const int status = posix_spawn(&child.pid, "/proc/self/exe", &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(pipe_fds[1]);
  if (status != 0) {
    close(pipe_fds[0]);
    child.start_error = "could not start a process for " + child.target.device + ": " + std::strerror(status);
    return;
  }
  child.started = true;
  child.stderr_fd = pipe_fds[0];
  running_children[child.slot].store(child.pid);
}

void reap(ChildProcess& child) {
  running_children[child.slot].store(0);  // no signal for a pid that may be reused
  int status = 0;
  pid_t waited = 0;
  do {
    waited = waitpid(child.pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (waited < 0) {
    child.exit_code = static_cast<int>(ExitCode::kInternalError);
    child.stderr_text += std::string("its exit status was lost: ") + std::strerror(errno) + "\n";
  } else if (WIFSIGNALED(status)) {
    child.end_signal = WTERMSIG(status);
    child.exit_code = 128 + child.end_signal;
  } else {
    child.exit_code = WEXITSTATUS(status);
  }
}

// Reads every child's stderr until it closes (the child has ended), then reaps it.
// `on_finished` is called once per child, in the order they end.
template <typename OnFinished>
void wait_for_children(std::vector<ChildProcess>& children, OnFinished&& on_finished) {
  char buffer[4096];
  for (;;) {
    std::vector<pollfd> watched;
    std::vector<ChildProcess*> owners;
    for (ChildProcess& child : children)
      if (child.stderr_fd >= 0) {
        watched.push_back({child.stderr_fd, POLLIN, 0});
        owners.push_back(&child);
      }
    if (watched.empty()) return;
    if (poll(watched.data(), watched.size(), -1) < 0) {
      if (errno == EINTR) continue;  // a forwarded signal
      throw Error(std::string("cannot wait for the measuring processes: ") + std::strerror(errno));
    }
    for (std::size_t i = 0; i < watched.size(); ++i) {
      if (watched[i].revents == 0) continue;
      ChildProcess& child = *owners[i];
      const ssize_t count = read(child.stderr_fd, buffer, sizeof buffer);
      if (count < 0 && errno == EINTR) continue;
      if (count > 0) {
        child.stderr_text.append(buffer, static_cast<std::size_t>(count));
        if (child.stderr_text.size() > kMaxStderrBytes)
          child.stderr_text.erase(0, child.stderr_text.size() - kMaxStderrBytes);
        continue;
      }
      close(child.stderr_fd);
      child.stderr_fd = -1;
      reap(child);
      on_finished(child);
    }
  }
}

// The child's last line without the command prefix: "out of GPU memory during phase ...",
// "internal error: ...".
std::string error_line(const std::string& stderr_text) {
  const std::size_t end = stderr_text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  const std::size_t newline = stderr_text.find_last_of('\n', end);
  const std::size_t start = newline == std::string::npos ? 0 : newline + 1;
  std::string line = stderr_text.substr(start, end + 1 - start);
  for (const char* prefix : {"iteragpu measure: ", "error: "})
    if (line.compare(0, std::strlen(prefix), prefix) == 0) line.erase(0, std::strlen(prefix));
  return line;
}

bool file_exists(const std::string& path) {
  struct stat info {};
  return lstat(path.c_str(), &info) == 0;
}

DeviceOutcome outcome_of(const ChildProcess& child) {
  DeviceOutcome outcome;
  outcome.device = child.target.device;
  if (!child.start_error.empty()) {
    outcome.exit_code = static_cast<int>(ExitCode::kBadInputOrUnavailable);
    outcome.error = child.start_error;
    return outcome;
  }
  if (!child.started) {
    outcome.exit_code = static_cast<int>(ExitCode::kInterrupted);
    outcome.error = "not started: the run was interrupted first";
    return outcome;
  }
  outcome.exit_code = child.exit_code;
  if (child.exit_code != 0) {
    outcome.error = error_line(child.stderr_text);
    if (outcome.error.empty())
      outcome.error = child.end_signal != 0
                          ? "ended by signal " + std::to_string(child.end_signal) + " without an error line"
                          : "exited with code " + std::to_string(child.exit_code) + " without an error line";
    return outcome;
  }
  if (file_exists(child.target.result_file)) outcome.result_file = child.target.result_file;
  try {
    outcome.figures = DeviceResultFigures::read(child.target.result_file, child.target.device);
  } catch (const Error& error) {
    outcome.error = std::string("the result could not be read back: ") + error.what();
  }
  return outcome;
}

std::string device_list_text(const std::vector<DeviceTarget>& targets) {
  std::string text;
  for (const DeviceTarget& target : targets) text += (text.empty() ? "" : ", ") + target.device;
  return text;
}

}  // namespace

int measure_several_devices(const MeasureRequest& request, OutputFormat format) {
  const std::vector<DeviceTarget> targets = plan_device_targets(request);
  if (targets.size() > kMaxChildren) throw Error("more devices than device indices");
  const bool progress = isatty(STDERR_FILENO) == 1;
  if (progress)
    std::cerr << "iteragpu measure: measuring " << device_list_text(targets)
              << " at the same time, one process each..." << std::endl;

  MeasurementSummary summary;
  summary.request = request;
  std::vector<ChildProcess> children(targets.size());
  {
    SignalForwarding forwarding;
    std::size_t started = 0;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      children[i].target = targets[i];
      children[i].slot = i;
      HeldSignals held;
      if (forwarding.received()) continue;  // interrupted: start no more
      start_child(children[i], child_arguments(request, targets[i]));
      if (children[i].started) ++started;
    }
    if (started == 0 && forwarding.received())
      throw Interrupted("interrupted before the measurement started; nothing was written");
    std::size_t finished = 0;
    wait_for_children(children, [&](const ChildProcess& child) {
      ++finished;
      if (!progress) return;
      std::cerr << "iteragpu measure: " << child.target.device
                << (child.exit_code == 0 ? " done" : " failed, exit " + std::to_string(child.exit_code))
                << " [" << finished << "/" << started << "]" << std::endl;
    });
    summary.interrupted = forwarding.received();
  }
  for (const ChildProcess& child : children) summary.devices.push_back(outcome_of(child));
  summary.publish();

  for (const DeviceOutcome& outcome : summary.devices)
    if (!outcome.ok())
      std::cerr << "iteragpu measure: " << outcome.device << " failed (exit " << outcome.exit_code
                << "): " << outcome.error << std::endl;
  const std::string written = "Summary written to " + request.output;
  if (format == OutputFormat::kJson) {
    print_report_after_commit(summary.to_json(), written);
    std::cerr << "iteragpu measure: " << written << std::endl;  // stdout holds only the JSON
  } else {
    print_report_after_commit(summary.to_text() + "\n" + written + "\n", written);
  }
  return summary.exit_code();
}

}  // namespace iteragpu::cli
