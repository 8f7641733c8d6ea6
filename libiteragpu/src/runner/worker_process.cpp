#include "runner/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "iteragpu/error.hpp"
#include "runner/worker_protocol.hpp"

extern char** environ;

namespace iteragpu {
namespace {

void close_if_open(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

WorkerProcess::WorkerProcess(const std::string& executable, const std::string& request_record) {
  int requests[2] = {-1, -1};
  int channel[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, requests) != 0 || pipe2(channel, O_CLOEXEC) != 0) {
    const std::string reason = std::strerror(errno);
    for (int fd : {requests[0], requests[1], channel[0], channel[1]})
      if (fd >= 0) close(fd);
    throw Error("cannot start a measurement worker: " + reason);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, requests[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, channel[1], STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t signals;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&attributes, &signals);  // none held, whatever the caller holds
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  // The worker checks that its parent is still this process (measure_worker.cpp).
  const std::string runner_pid = std::to_string(getpid());
  char* argv[] = {const_cast<char*>(executable.c_str()), const_cast<char*>(runner_pid.c_str()), nullptr};
  const int status = posix_spawn(&pid_, executable.c_str(), &actions, &attributes, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(requests[1]);
  close(channel[1]);
  requests_ = requests[0];
  channel_ = channel[0];
  if (status != 0) {
    close_if_open(requests_);
    close_if_open(channel_);
    reaped_ = true;
    throw Error("cannot start the measurement worker " + executable + ": " + std::strerror(status));
  }
  // Far smaller than a socket buffer: this never blocks.
  if (send(requests_, request_record.data(), request_record.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request_record.size()))
    close_if_open(requests_);  // the worker then reads a broken request and says so
}

WorkerProcess::~WorkerProcess() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    wait();
  }
  close_if_open(requests_);
  close_if_open(channel_);
}

void WorkerProcess::read_records(std::vector<std::string>& records) {
  if (channel_ < 0) return;
  char buffer[65536];
  const ssize_t count = read(channel_, buffer, sizeof buffer);
  if (count < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (count <= 0) {  // end of file: a record cut short is no record
    close_if_open(channel_);
    pending_.clear();
    return;
  }
  pending_.append(buffer, static_cast<std::size_t>(count));
  // A record is RS, one line of JSON, LF; anything outside records is ignored.
  std::size_t end = 0;
  for (std::size_t newline = pending_.find('\n'); newline != std::string::npos;
       newline = pending_.find('\n', end)) {
    const std::size_t start = pending_.find(worker_protocol::kRecordSeparator, end);
    if (start != std::string::npos && start < newline) records.push_back(pending_.substr(start + 1, newline - start - 1));
    end = newline + 1;
  }
  pending_.erase(0, end);
  if (pending_.size() > worker_protocol::kMaxRecordBytes)
    throw Error("a measurement worker sent a record longer than " +
                std::to_string(worker_protocol::kMaxRecordBytes) + " bytes");
}

void WorkerProcess::answer(bool go_on) {
  if (requests_ < 0) return;
  const char byte = worker_protocol::kContinue;
  if (!go_on || send(requests_, &byte, 1, MSG_NOSIGNAL) != 1) close_if_open(requests_);
}

void WorkerProcess::interrupt() {
  if (!reaped_) kill(pid_, SIGINT);
}

int WorkerProcess::wait() {
  if (reaped_) return exit_code_;
  int status = 0;
  pid_t waited = 0;
  do {
    waited = waitpid(pid_, &status, 0);
  } while (waited < 0 && errno == EINTR);
  reaped_ = true;
  if (waited < 0) {
    exit_code_ = static_cast<int>(ExitCode::kInternalError);
  } else if (WIFSIGNALED(status)) {
    exit_code_ = 128 + WTERMSIG(status);
  } else {
    exit_code_ = WEXITSTATUS(status);
  }
  return exit_code_;
}

}  // namespace iteragpu
