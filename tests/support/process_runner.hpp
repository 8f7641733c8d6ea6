#pragma once
// Runs a program as the end-to-end tests need it: arguments as a list (no shell), stdout
// and stderr captured separately, the exit status returned.

#include <map>
#include <string>
#include <vector>

namespace iteragpu::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal (signal_number set)
  int signal_number = 0;
  std::string out;
  std::string err;
};

// `extra_environment` is added to (or overrides) this process's environment.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& extra_environment = {},
                          const std::string& working_directory = "");

// The iteragpu executable under test, with `args`.
ProcessResult run_cli(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& extra_environment = {});

// A fresh empty directory under the system temp folder, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& content);
bool path_exists(const std::string& path);
std::vector<std::string> list_directory(const std::string& path);

}  // namespace iteragpu::testing
