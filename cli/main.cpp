// iteragpu: honest GPU memory, time and rental-cost numbers before you pay.
// The process around the command: signal handling, then the dispatch (dispatch.cpp).

#include <signal.h>

#include <string>
#include <vector>

#include "commands.hpp"
#include "iteragpu/output_files.hpp"

namespace {

// A write to a closed pipe becomes an error the command reports (EPIPE), not a silent death;
// an interrupting signal first removes the temporary files this process is writing, then
// ends it as the signal would (`measure` installs its own handlers while it measures). Once
// the command's result is in place the signal is let pass: the command finishes and says
// what it did, so its status never contradicts the file on disk.
void install_signal_handling() {
  signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = [](int signal_number) {
    if (iteragpu::output_committed()) return;
    iteragpu::remove_live_temporary_files();
    signal(signal_number, SIG_DFL);
    raise(signal_number);
  };
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal_number, &action, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  install_signal_handling();
  return iteragpu::cli::run_iteragpu(std::vector<std::string>(argv + 1, argv + argc));
}
