#include "mechanics/installation.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <vector>

#include "iteragpu/error.hpp"

namespace iteragpu {

std::string canonical_path(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) ? std::string(resolved) : path;
}

std::string core_object_directory() {
  // glibc names the main program by argv[0] (maybe relative, maybe a bare name from PATH),
  // with an empty l_name: hence /proc/self/exe for it.
  Dl_info info{};
  link_map* map = nullptr;
  std::string object = "/proc/self/exe";
  if (dladdr1(reinterpret_cast<void*>(&core_object_directory), &info,
              reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 &&
      map != nullptr && map->l_name != nullptr && map->l_name[0] != '\0')
    object = map->l_name;
  const std::string path = canonical_path(object);
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

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
