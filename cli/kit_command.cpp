// `iteragpu kit verify DIR`: checks an unpacked lab kit against its MANIFEST.json.

#include <iostream>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/lab_kit.hpp"

namespace iteragpu::cli {
namespace {

const char* kSummary =
    "The lab kit (iteragpu-lab-v1.zip, built as the lab_kit target) is one folder whose\n"
    "MANIFEST.json lists every member with its size and SHA-256 (not its own).\n"
    "  verify DIR  check an unpacked kit: every listed file present with its size and\n"
    "              SHA-256, no unlisted file; exit 0 when intact, 2 otherwise";

int run_verify(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()("kit", po::value<std::string>(),
                        "the unpacked kit folder, e.g. iteragpu-lab-v1 (or give it as DIR)");
  const ParsedOptions parsed = parse_options("kit verify", options, args, /*csv_allowed=*/false,
                                             /*positional_option=*/"kit");
  if (parsed.help_requested) {
    print_help("kit verify DIR", kSummary, options);
    return 0;
  }
  const std::string directory = option_text(parsed.values, "kit");
  if (directory.empty())
    throw UsageError("kit", "required; expected the unpacked kit folder: iteragpu kit verify DIR");
  const LabKitVerification report = verify_lab_kit(directory);
  print_report(parsed.format == OutputFormat::kJson ? report.to_json() : report.to_text());
  // The report above details every member; the error line counts and names the problems.
  if (!report.intact()) throw DataFileError(report.problem_summary());
  return 0;
}

}  // namespace

int run_kit(const std::vector<std::string>& args) {
  const std::string action = args.empty() ? "" : args[0];
  if (action == "verify") return run_verify(std::vector<std::string>(args.begin() + 1, args.end()));
  if (action == "--help" || action == "-h") {
    std::cout << "Usage: iteragpu kit verify DIR [--format text|json]\n\n" << kSummary << "\n";
    return 0;
  }
  throw UsageError(
      "", (action.empty() ? std::string("missing action") : "unknown action '" + action + "'") +
              "; expected verify (see iteragpu kit --help)");
}

}  // namespace iteragpu::cli
