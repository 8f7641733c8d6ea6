#include "iteragpu/version.hpp"

namespace iteragpu {

std::string version() { return ITERAGPU_VERSION; }

std::string build_description() {
  std::string compiler =
#if defined(__clang__)
      "clang " __clang_version__;
#elif defined(__GNUC__)
      "g++ " __VERSION__;
#else
      "unknown compiler";
#endif
  return compiler + ", " + ITERAGPU_BUILD_TYPE + ", LibTorch backend plugin " +
         (ITERAGPU_TORCH_BACKEND_BUILT ? "built" : "not built");
}

}  // namespace iteragpu
