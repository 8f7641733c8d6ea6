#pragma once
// What every subcommand shares: option parsing with Boost.Program_options, --help,
// --format, printing, and the one place where exceptions become exit codes.

#include <boost/program_options.hpp>
#include <functional>
#include <string>
#include <vector>

namespace iteragpu::cli {

namespace po = boost::program_options;

enum class OutputFormat { kText, kJson, kCsv, kMarkdown };

struct ParsedOptions {
  po::variables_map values;
  bool help_requested = false;
  OutputFormat format = OutputFormat::kText;
};

// Adds --help and --format to `options`, parses `args` strictly (unknown options, missing
// values and positional arguments are UsageErrors), and checks --format (text or json, csv
// where `csv_allowed`, markdown where `markdown_allowed`). Where `positional_option` names
// one of `options`, up to `positional_max` positional arguments (-1: any number) are
// accepted as its values (`iteragpu kit verify DIR`, `iteragpu compare A.json B.json`).
ParsedOptions parse_options(const std::string& command, po::options_description& options,
                            const std::vector<std::string>& args, bool csv_allowed = false,
                            const char* positional_option = nullptr, bool markdown_allowed = false,
                            int positional_max = 1);

// Prints "Usage: iteragpu <command> [options]" and the option table on stdout.
void print_help(const std::string& command, const std::string& summary,
                const po::options_description& options);

// Runs `body` and turns every exception into one line on stderr and an exit code
// (iteragpu::ExitCode). The only catch-all of the program.
int run_guarded(const std::string& command, const std::function<int()>& body);

// The option's value, or "" when absent.
std::string option_text(const po::variables_map& values, const char* name);
// --output as written, "" when absent; an empty path given is refused (UsageError): every
// command that writes a file names a new one.
std::string output_option(const po::variables_map& values);

// Writes a report on stdout; OutputUnwritable (exit 2) when stdout cannot be written.
void print_report(const std::string& report);
// For a command that has already committed its work (a row added, a file published): the
// report is printed, and when stdout cannot be written the command still succeeds, saying
// on stderr what was done (so that a retry does not do it twice).
void print_report_after_commit(const std::string& report, const std::string& committed);

}  // namespace iteragpu::cli
