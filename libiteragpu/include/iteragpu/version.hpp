#pragma once
#include <string>

namespace iteragpu {

// The library's version ("0.1.0") and a one-line build description (compiler, build type,
// whether the LibTorch backend plugin was built).
std::string version();
std::string build_description();

}  // namespace iteragpu
