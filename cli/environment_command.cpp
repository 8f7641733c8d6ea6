// `iteragpu environment`: a diagnostic of the LibTorch/CUDA/GPU stack. "No GPU" and "no
// LibTorch backend" are valid reports (exit 0).

#include <iostream>

#include "command_support.hpp"
#include "commands.hpp"
#include "model_options.hpp"
#include "iteragpu/environment.hpp"
#include "iteragpu/error.hpp"

namespace iteragpu::cli {

int run_environment(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("device", po::value<std::string>()->default_value("cuda:0"),
       "GPU whose free/total memory is reported: cuda:N")
      ("output", po::value<std::string>(),
       "also write the JSON report to this new file (an existing path is refused)");
  add_backend_option(options);
  const ParsedOptions parsed = parse_options("environment", options, args);
  if (parsed.help_requested) {
    print_help("environment",
               "Reports iteragpu's build, the OS, the LibTorch version and the CUDA/HIP/cuDNN\n"
               "versions it was built with, the visible GPUs and the selected GPU's free/total\n"
               "memory. Collects no environment variable values, host or user names.",
               options);
    return 0;
  }
  EnvironmentRequest request;
  request.device = option_text(parsed.values, "device");
  request.backend_path = option_text(parsed.values, "backend");
  request.output = output_option(parsed.values);

  const EnvironmentReport report = Environment().collect(request);
  const bool json = parsed.format == OutputFormat::kJson;
  const std::string written = request.output.empty() ? "" : "JSON report written to " + request.output;
  const std::string text = json ? report.to_json() : report.to_text() + (written.empty() ? "" : written + "\n");
  if (written.empty()) {
    print_report(text);
  } else {
    print_report_after_commit(text, "the report was written to " + request.output);
  }
  // stdout holds only the JSON document; say where the file went on stderr.
  if (json && !written.empty()) std::cerr << "iteragpu environment: " << written << std::endl;
  return 0;
}

}  // namespace iteragpu::cli
