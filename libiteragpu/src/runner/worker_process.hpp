#pragma once
// One measurement worker process, seen from the runner: started with its request, its
// records read as they come, its progress answered, interrupted, reaped.

#include <sys/types.h>

#include <string>
#include <vector>

namespace iteragpu {

class WorkerProcess {
 public:
  // Starts `executable` in its own process group (a terminal's Ctrl-C reaches the runner,
  // which decides) with `request_record` on its stdin, its stdout on a pipe to this process
  // and its stderr shared (library warnings are shown, not hidden). Throws Error when it
  // cannot be started.
  WorkerProcess(const std::string& executable, const std::string& request_record);
  ~WorkerProcess();  // a worker still running is killed and reaped
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // The descriptor to poll for records; -1 once the worker closed it.
  int channel() const { return channel_; }
  // Reads what is available and appends each whole record to `records`. At end of file it
  // closes the channel. Throws Error on a record longer than the protocol allows.
  void read_records(std::vector<std::string>& records);
  // After a progress record: let the worker go on, or stop it at this phase boundary.
  void answer(bool go_on);
  // SIGINT: the worker stops between two phases and writes nothing.
  void interrupt();
  // Waits for the worker to end: its exit code, or 128 + N when signal N ended it.
  int wait();

 private:
  pid_t pid_ = -1;
  int requests_ = -1;  // our end of its stdin (a socket: answers never raise SIGPIPE)
  int channel_ = -1;   // our end of its stdout
  std::string pending_;
  bool reaped_ = false;
  int exit_code_ = 0;
};

}  // namespace iteragpu
