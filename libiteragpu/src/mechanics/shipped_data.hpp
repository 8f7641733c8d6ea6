#pragma once
// Where the data iteragpu ships (catalog, JSON schemas) is found: the source tree in a build
// tree, the install prefix once installed. The one place that knows.

#include <string>

namespace iteragpu {

// The path of data/<relative>; DataFileError naming both places when it is in neither.
std::string shipped_data_path(const std::string& relative, const std::string& what);

}  // namespace iteragpu
