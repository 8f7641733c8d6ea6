#pragma once
// Where this copy of the core lives. What ships with it (the LibTorch plugin, the data) is
// found relative to that place, so an install works wherever its prefix is moved.

#include <string>

namespace iteragpu {

// realpath(path), or `path` unchanged when it cannot be resolved.
std::string canonical_path(const std::string& path);

// The folder of the executable or shared object (the Python extension) this core is
// linked into, symbolic links resolved.
std::string core_object_directory();

}  // namespace iteragpu
