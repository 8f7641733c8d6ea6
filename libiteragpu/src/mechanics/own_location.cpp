#include "mechanics/own_location.hpp"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>

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

}  // namespace iteragpu
