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
  // "built against LibTorch 2.5.1 (CUDA 12.4)": what the build chose is visible after
  // installation (iteragpu environment, iteragpu.environment()), not only in a build log.
  return compiler + ", " + ITERAGPU_BUILD_TYPE + ", LibTorch backend plugin " +
         (ITERAGPU_TORCH_BACKEND_BUILT
              ? std::string("built against ") + ITERAGPU_TORCH_BACKEND_DESCRIPTION
              : std::string("not built"));
}

}  // namespace iteragpu
