#include "mechanics/shipped_data.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <vector>

#include "iteragpu/error.hpp"
#include "mechanics/own_location.hpp"

namespace iteragpu {
namespace {

// The folders that may hold the data, first match wins. Never the source tree: a build
// tree mirrors the install layout (build/share/iteragpu, build/python/iteragpu/data).
std::vector<std::string> data_directories() {
  std::vector<std::string> directories;
  // A program outside any prefix (a project that adds iteragpu with add_subdirectory, or
  // one linked against a prefix that was moved) names the folder itself.
  const char* named = std::getenv("ITERAGPU_DATA_DIR");
  if (named && *named) directories.emplace_back(named);
  const std::string own = core_object_directory();
  directories.push_back(own + "/" ITERAGPU_PACKAGE_DATA_DIR);     // the Python package's copy
  directories.push_back(own + "/" ITERAGPU_DATA_RELATIVE_DIR);    // <prefix>/bin -> share
  directories.emplace_back(ITERAGPU_INSTALL_DATA_DIR);            // the configured prefix
  return directories;
}

}  // namespace

std::string shipped_data_path(const std::string& relative, const std::string& what) {
  std::string tried;
  for (const auto& directory : data_directories()) {
    const std::string candidate = directory + "/" + relative;
    struct stat info {};
    // Resolved, so that two ways to one file (bin/../share, a link) name it alike.
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode)) return canonical_path(candidate);
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  throw DataFileError("the shipped " + what + " is missing: none of " + tried +
                      " exists; reinstall iteragpu, or set ITERAGPU_DATA_DIR to the folder "
                      "that holds it (share/iteragpu of an install)");
}

}  // namespace iteragpu
