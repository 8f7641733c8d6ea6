// Whole command lines, in-process, for the commands that need no GPU and write no file:
// estimate, predict, packages, help, unknown commands and options. One argument per line
// of the input. Reports and errors go to /dev/null.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Reports (written to descriptor 1) and the commands' error lines (std::cerr) go nowhere;
  // the sanitizers and libFuzzer keep stderr for their own reports.
  static std::ofstream nowhere;
  static const bool silenced = [] {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    std::cerr.rdbuf(nowhere.rdbuf());
    std::cout.rdbuf(nowhere.rdbuf());
    return true;
  }();
  (void)silenced;
  std::vector<std::string> args(1);
  for (std::size_t i = 0; i < size && args.size() <= 16; ++i) {
    if (data[i] == '\n') {
      args.emplace_back();
    } else {
      args.back() += static_cast<char>(data[i]);
    }
  }
  // Commands that measure, load a GPU backend from the environment or write files are the
  // fault-injection suite's; here, only what runs in memory.
  for (const char* excluded : {"measure", "environment", "results", "kit"})
    if (args.front() == excluded) return 0;
  for (const std::string& arg : args)
    if (arg == "--device" || arg.rfind("--device=", 0) == 0 || arg == "--catalog" ||
        arg.rfind("--catalog=", 0) == 0 || arg == "--backend" || arg.rfind("--backend=", 0) == 0)
      return 0;
  (void)iteragpu::cli::run_iteragpu(args);
  return 0;
}
