#pragma once
// Facts about the operating system for the environment report. Deliberately narrow: no
// node (host) name, no user name, no environment-variable values.

#include <optional>
#include <string>

namespace iteragpu {

struct SystemInfo {
  std::string os_name;                        // uname sysname: "Linux"
  std::optional<std::string> os_distribution;  // PRETTY_NAME of /etc/os-release
  std::string kernel_release;                 // uname release
  std::string architecture;                   // uname machine: "x86_64"
  std::string libc;                           // "glibc 2.36"
  // The NVIDIA kernel driver's own version, when the system exposes it, and the file it
  // was read from. Not the CUDA runtime version LibTorch was built with.
  std::optional<std::string> nvidia_driver_version;
  std::string nvidia_driver_source;
};

SystemInfo collect_system_info();

// `text` with the current user's home directory written as "~", so that paths in a report
// do not carry the user name.
std::string without_home_directory(const std::string& text);

}  // namespace iteragpu
