// `iteragpu compare A.json B.json ...`: measurements side by side, with ratios to the first.

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measurement_comparison.hpp"

namespace iteragpu::cli {
namespace {

constexpr const char* kSummary =
    "Compares two or more files written by `iteragpu measure`: the configurations side by\n"
    "side, the environment fields that differ, each phase's peak allocated and reserved bytes,\n"
    "the warm forwards' median times with their spread, every figure's ratio to the first\n"
    "file's, and one finding per file saying what differs from the first.\n"
    "Example: iteragpu compare mesures-float32.json mesures-bfloat16.json --format markdown";

}  // namespace

int run_compare(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()("measurement", po::value<std::vector<std::string>>(),
                        "a measurement file; give two or more, as arguments (the first is the "
                        "reference of the ratios)");
  const ParsedOptions parsed = parse_options("compare", options, args, /*csv_allowed=*/true,
                                             /*positional_option=*/"measurement",
                                             /*markdown_allowed=*/true, /*positional_max=*/-1);
  if (parsed.help_requested) {
    print_help("compare A.json B.json ...", kSummary, options);
    return 0;
  }
  const std::vector<std::string> paths =
      parsed.values.count("measurement") ? parsed.values["measurement"].as<std::vector<std::string>>()
                                         : std::vector<std::string>();
  const MeasurementComparison comparison = MeasurementComparison::of_files(paths);
  switch (parsed.format) {
    case OutputFormat::kJson: print_report(comparison.to_json()); break;
    case OutputFormat::kCsv: print_report(comparison.to_csv()); break;
    case OutputFormat::kMarkdown: print_report(comparison.to_markdown()); break;
    case OutputFormat::kText: print_report(comparison.to_text()); break;
  }
  return 0;
}

}  // namespace iteragpu::cli
