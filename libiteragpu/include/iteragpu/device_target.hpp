#pragma once
// One GPU of a multi-device measurement and where its result goes, as the runner plans it.

#include <string>

namespace iteragpu {

struct DeviceTarget {
  std::string device;       // "cuda:1"
  int index = 0;
  std::string result_file;  // per_device_result_path(summary, index)
};

}  // namespace iteragpu
