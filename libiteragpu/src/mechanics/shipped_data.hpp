#pragma once
// Where the data iteragpu ships (catalog, JSON schemas) is found: relative to the program
// or Python module that holds the core, so an install finds its own copy wherever it is
// moved. The one place that knows.

#include <string>

namespace iteragpu {

// The path of <data folder>/<relative>; DataFileError naming every place tried.
std::string shipped_data_path(const std::string& relative, const std::string& what);

}  // namespace iteragpu
