// iteragpu: honest GPU memory, time and rental-cost numbers before you pay.
// A table of subcommands; each one maps its options onto the core library's API.

#include <signal.h>

#include <iostream>
#include <string>
#include <vector>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/output_files.hpp"
#include "iteragpu/version.hpp"

namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const Subcommand kSubcommands[] = {
    {"estimate", "weight memory from a parameter count and a bit width (no GPU needed)",
     iteragpu::cli::run_estimate},
    {"environment", "diagnostic of the LibTorch/CUDA/GPU stack", iteragpu::cli::run_environment},
    {"measure", "bounded memory and time measurement of a tiny MLP on one GPU",
     iteragpu::cli::run_measure},
    {"predict", "the allocator counters measure will record, before the GPU is touched",
     iteragpu::cli::run_predict},
    {"packages", "rental package prices and cost per accepted result",
     iteragpu::cli::run_packages},
    {"results", "the raw-results table: add a run, check, report cost per accepted result",
     iteragpu::cli::run_results},
    {"kit", "verify an unpacked lab kit against its MANIFEST.json", iteragpu::cli::run_kit},
};

void print_usage(std::ostream& out) {
  out << "Usage: iteragpu <command> [options]\n       iteragpu --version\n\nCommands:\n";
  for (const auto& command : kSubcommands)
    out << "  " << command.name << std::string(14 - std::string(command.name).size(), ' ')
        << command.summary << "\n";
  out << "\nRun 'iteragpu <command> --help' for a command's options.\n";
}

std::string command_names() {
  std::string names;
  for (const auto& command : kSubcommands) names += (names.empty() ? "" : ", ") + std::string(command.name);
  return names;
}

// A write to a closed pipe becomes an error the command reports (EPIPE), not a silent death;
// an interrupting signal first removes the temporary files this process is writing, then
// ends it as the signal would (`measure` installs its own handlers while it measures).
void install_signal_handling() {
  signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = [](int signal_number) {
    iteragpu::remove_live_temporary_files();
    signal(signal_number, SIG_DFL);
    raise(signal_number);
  };
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal_number, &action, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  using iteragpu::ExitCode;
  const std::vector<std::string> args(argv + 1, argv + argc);
  install_signal_handling();
  if (args.empty()) {
    std::cerr << "iteragpu: error: no command; expected one of " << command_names()
              << " (see iteragpu --help)" << std::endl;
    return static_cast<int>(ExitCode::kBadInputOrUnavailable);
  }
  const std::string& name = args[0];
  if (name == "--help" || name == "-h" || name == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (name == "--version") {
    std::cout << "iteragpu " << iteragpu::version() << " (" << iteragpu::build_description()
              << ")\n";
    return 0;
  }
  for (const auto& command : kSubcommands) {
    if (name == command.name) {
      const std::vector<std::string> rest(args.begin() + 1, args.end());
      return iteragpu::cli::run_guarded(name, [&] { return command.run(rest); });
    }
  }
  std::cerr << "iteragpu: error: unknown command '" << name << "'; expected one of " << command_names()
            << " (see iteragpu --help)" << std::endl;
  return static_cast<int>(ExitCode::kBadInputOrUnavailable);
}
