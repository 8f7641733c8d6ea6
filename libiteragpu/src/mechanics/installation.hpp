#pragma once
// Where this copy of iteragpu lives and what ships with it. The LibTorch plugin, the
// measurement worker and the data (catalog, JSON schemas) are found relative to the program
// or Python module that holds the core, so an install finds its own copy wherever its prefix
// is moved. The one place that knows the data folders.

#include <string>

namespace iteragpu {

// realpath(path), or `path` unchanged when it cannot be resolved.
std::string canonical_path(const std::string& path);

// The folder of the executable or shared object (the Python extension) this core is
// linked into, symbolic links resolved.
std::string core_object_directory();

// The path of <data folder>/<relative>; DataFileError naming every place tried.
std::string shipped_data_path(const std::string& relative, const std::string& what);

}  // namespace iteragpu
