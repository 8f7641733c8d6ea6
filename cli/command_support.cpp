#include "command_support.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>

#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"

namespace iteragpu::cli {
namespace {

// An error line: one line, whatever the message holds (paths, names from files): control
// characters and line breaks are escaped by the one rule for text from outside.
std::string one_line(const std::string& message) { return printable(message); }

// Boost 1.74 builds an option error's message by replacing each "%name%" placeholder until
// none is left, so a token that itself holds a placeholder (-=%canonical_option%, found by
// the command-line fuzzer) makes what() run without end. The same message, built in one pass
// over the template: text from the command line is inserted, never searched again.
struct OptionErrorMessage : po::error_with_option_name {
  static std::string of(const po::error_with_option_name& e) {
    std::map<std::string, std::string> values = e.*(&OptionErrorMessage::m_substitutions);
    values["canonical_option"] = e.get_option_name();
    values["prefix"] = (e.*(&OptionErrorMessage::get_canonical_option_prefix))();
    std::string text = e.m_error_template;
    // Boost's defaults are its own fixed words ("argument ('%value%')" -> "argument") for a
    // placeholder with no value; they hold no command-line text.
    for (const auto& [name, replacement] : e.*(&OptionErrorMessage::m_substitution_defaults)) {
      if (!values[name].empty()) continue;
      for (std::size_t at = text.find(replacement.first); at != std::string::npos;
           at = text.find(replacement.first, at + replacement.second.size()))
        text.replace(at, replacement.first.size(), replacement.second);
    }
    std::string message;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t close = text[at] == '%' ? text.find('%', at + 1) : std::string::npos;
      const auto value = close == std::string::npos
                             ? values.end()
                             : values.find(text.substr(at + 1, close - at - 1));
      if (value != values.end()) {
        message += value->second;
        at = close + 1;
      } else {
        message += text[at++];
      }
    }
    return message;
  }
};

}  // namespace

ParsedOptions parse_options(const std::string& command, po::options_description& options,
                            const std::vector<std::string>& args, bool csv_allowed,
                            const char* positional_option, bool markdown_allowed, int positional_max) {
  const std::string formats = std::string("text") + (csv_allowed ? ", json" : "") +
                              (markdown_allowed ? ", markdown" : "") + (csv_allowed ? " or csv" : " or json");
  options.add_options()
      ("format", po::value<std::string>()->default_value("text"),
       ("output format: " + formats).c_str())
      ("help,h", "show this help and exit");
  ParsedOptions parsed;
  try {
    // No positional arguments (except the one a command names) and no abbreviations: every
    // option is spelt out.
    const auto style = po::command_line_style::unix_style ^ po::command_line_style::allow_guessing;
    po::command_line_parser parser(args);
    parser.options(options).style(style);
    po::positional_options_description positional;
    if (positional_option) parser.positional(positional.add(positional_option, positional_max));
    const po::parsed_options tokens = parser.run();
    for (const auto& token : tokens.options)
      if (token.position_key >= 0 && !token.value.empty() && !positional_option)
        throw UsageError("", "unexpected argument '" + token.value.front() +
                                 "'; every value follows its --option (see iteragpu " + command +
                                 " --help)");
    po::store(tokens, parsed.values);
    po::notify(parsed.values);
  } catch (const po::error_with_option_name& e) {
    throw UsageError("", OptionErrorMessage::of(e) + " (see iteragpu " + command + " --help)");
  } catch (const po::error& e) {
    throw UsageError("", std::string(e.what()) + " (see iteragpu " + command + " --help)");
  }
  parsed.help_requested = parsed.values.count("help") > 0;
  const std::string format = parsed.values["format"].as<std::string>();
  if (format == "json") {
    parsed.format = OutputFormat::kJson;
  } else if (format == "csv" && csv_allowed) {
    parsed.format = OutputFormat::kCsv;
  } else if (format == "markdown" && markdown_allowed) {
    parsed.format = OutputFormat::kMarkdown;
  } else if (format != "text") {
    throw UsageError("format", "'" + format + "' is not an output format; expected " + formats);
  }
  return parsed;
}

void print_help(const std::string& command, const std::string& summary,
                const po::options_description& options) {
  std::cout << "Usage: iteragpu " << command << " [options]\n\n" << summary << "\n\n"
            << options << std::flush;
}

int run_guarded(const std::string& command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const Error& e) {
    std::cerr << "iteragpu " << command << ": error: " << one_line(e.what()) << std::endl;
    return static_cast<int>(e.exit_code());
  } catch (const std::bad_alloc&) {
    std::cerr << "iteragpu " << command << ": error: out of host memory" << std::endl;
    return static_cast<int>(ExitCode::kInternalError);
  } catch (const std::exception& e) {
    std::cerr << "iteragpu " << command << ": internal error: " << one_line(e.what()) << std::endl;
    return static_cast<int>(ExitCode::kInternalError);
  } catch (...) {
    std::cerr << "iteragpu " << command << ": internal error: unknown exception" << std::endl;
    return static_cast<int>(ExitCode::kInternalError);
  }
}

std::string option_text(const po::variables_map& values, const char* name) {
  return values.count(name) ? values[name].as<std::string>() : std::string();
}

std::string output_option(const po::variables_map& values) {
  const std::string output = option_text(values, "output");
  if (values.count("output") && output.empty())
    throw UsageError("output", "empty path; expected the name of a new JSON file");
  return output;
}

void print_report(const std::string& report) {
  // Straight to the descriptor: the reason of a failure (EPIPE, ENOSPC, EBADF) is known.
  std::cout.flush();
  const std::string text = report.empty() || report.back() == '\n' ? report : report + "\n";
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t written = ::write(STDOUT_FILENO, data, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0)
      throw OutputUnwritable(std::string("cannot write the report to standard output: ") +
                             std::strerror(written < 0 ? errno : EIO));
    data += written;
    left -= static_cast<std::size_t>(written);
  }
}

void print_report_after_commit(const std::string& report, const std::string& committed) {
  try {
    print_report(report);
  } catch (const OutputUnwritable& error) {
    // The work is done: a retry must not do it twice, so this is a success with a warning.
    std::cerr << "iteragpu: warning: " << printable(committed) << "; " << printable(error.what()) << std::endl;
  }
}

}  // namespace iteragpu::cli
