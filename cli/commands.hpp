#pragma once
// The subcommands. Each takes the arguments after its name and returns an exit code.

#include <string>
#include <vector>

namespace iteragpu::cli {

// A whole command line without the program name ("estimate", "--parameters", "7B", ...):
// the exit code; reports on stdout, errors on stderr.
int run_iteragpu(const std::vector<std::string>& args);

int run_estimate(const std::vector<std::string>& args);
int run_packages(const std::vector<std::string>& args);
int run_environment(const std::vector<std::string>& args);
int run_measure(const std::vector<std::string>& args);
int run_predict(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);
int run_results(const std::vector<std::string>& args);
int run_kit(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);

}  // namespace iteragpu::cli
