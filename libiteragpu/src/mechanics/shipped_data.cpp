#include "mechanics/shipped_data.hpp"

#include <sys/stat.h>

#include "iteragpu/error.hpp"

namespace iteragpu {

std::string shipped_data_path(const std::string& relative, const std::string& what) {
  const std::string candidates[] = {std::string(ITERAGPU_SOURCE_DATA_DIR) + "/" + relative,
                                    std::string(ITERAGPU_INSTALL_DATA_DIR) + "/" + relative};
  for (const auto& candidate : candidates) {
    struct stat info {};
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode)) return candidate;
  }
  throw DataFileError("the shipped " + what + " is missing: neither " + candidates[0] + " nor " +
                      candidates[1] + " exists; reinstall iteragpu");
}

}  // namespace iteragpu
