// The table of subcommands and the dispatch of a command line to one of them; main.cpp
// calls it, and so does the command-line fuzzer (in-process).

#include <iostream>
#include <string>
#include <vector>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/version.hpp"

namespace iteragpu::cli {
namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const Subcommand kSubcommands[] = {
    {"estimate", "weight memory from a parameter count and a bit width, or of a safetensors\n"
                 "                checkpoint (file, folder or Hub id) from its headers; no GPU needed",
     run_estimate},
    {"environment", "diagnostic of the LibTorch/CUDA/GPU stack", run_environment},
    {"measure", "bounded memory and time measurement on a GPU: a synthetic MLP, or with\n"
                "                --model a checkpoint's prefill and decode steps (one worker per GPU)",
     run_measure},
    {"predict", "the allocator counters measure will record, before the GPU is touched\n"
                "                (the MLP, or --model: a folder or Hub id, from its headers)",
     run_predict},
    {"sweep", "the largest batch, context or width under a memory budget, by measurement\n"
              "                (--model: batch, context or new tokens; --package: that GPU's memory)",
     run_sweep},
    {"compare", "measurements side by side: what differs, peaks, times, ratios to the first",
     run_compare},
    {"packages", "rental package prices and cost per accepted result; with --model, which\n"
                 "                GPUs hold a checkpoint, the price and the cost per million tokens",
     run_packages},
    {"results", "the raw-results table: add a run, check, report cost per accepted result",
     run_results},
    {"kit", "verify an unpacked lab kit against its MANIFEST.json", run_kit},
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

}  // namespace

int run_iteragpu(const std::vector<std::string>& args) {
  using iteragpu::ExitCode;
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
      return run_guarded(name, [&] { return command.run(rest); });
    }
  }
  std::cerr << "iteragpu: error: unknown command '" << name << "'; expected one of " << command_names()
            << " (see iteragpu --help)" << std::endl;
  return static_cast<int>(ExitCode::kBadInputOrUnavailable);
}

}  // namespace iteragpu::cli
