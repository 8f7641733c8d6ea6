#include "environment/system_info.hpp"

#include <pwd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <vector>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace iteragpu {
namespace {

std::optional<std::string> first_line_of(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

bool is_version_number(const std::string& token) {
  if (token.empty() || !std::isdigit(static_cast<unsigned char>(token.front()))) return false;
  bool has_dot = false;
  for (char c : token) {
    if (c == '.') {
      has_dot = true;
    } else if (!std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return has_dot;
}

std::optional<std::string> os_release_pretty_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  const std::string key = "PRETTY_NAME=";
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::string value = line.substr(key.size());
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    if (!value.empty()) return value;
  }
  return std::nullopt;
}

// /sys/module/nvidia/version holds only the version; /proc/driver/nvidia/version holds a
// banner ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  <date>") from which only
// the version token is kept (the banner also names NVIDIA's build host).
void read_nvidia_driver(SystemInfo& info) {
  static const char* const kSysModule = "/sys/module/nvidia/version";
  static const char* const kProcDriver = "/proc/driver/nvidia/version";
  if (auto line = first_line_of(kSysModule)) {
    while (!line->empty() && std::isspace(static_cast<unsigned char>(line->back()))) line->pop_back();
    if (is_version_number(*line)) {
      info.nvidia_driver_version = *line;
      info.nvidia_driver_source = kSysModule;
      return;
    }
  }
  if (auto line = first_line_of(kProcDriver)) {
    const auto module = line->find("Kernel Module");
    if (module == std::string::npos) return;
    std::string token;
    for (std::size_t i = module; i <= line->size(); ++i) {
      const char c = i < line->size() ? (*line)[i] : ' ';
      if (!std::isspace(static_cast<unsigned char>(c))) {
        token += c;
      } else if (!token.empty()) {
        if (is_version_number(token)) {
          info.nvidia_driver_version = token;
          info.nvidia_driver_source = kProcDriver;
          return;
        }
        token.clear();
      }
    }
  }
}

std::string home_directory() {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found &&
      found->pw_dir)
    return found->pw_dir;
  return "";
}

}  // namespace

SystemInfo collect_system_info() {
  SystemInfo info;
  utsname names{};
  if (uname(&names) == 0) {  // names.nodename (the host name) is deliberately not read
    info.os_name = names.sysname;
    info.kernel_release = names.release;
    info.architecture = names.machine;
  }
  info.os_distribution = os_release_pretty_name();
#if defined(__GLIBC__)
  info.libc = std::string("glibc ") + gnu_get_libc_version();
#else
  info.libc = "unknown (not glibc)";
#endif
  read_nvidia_driver(info);
  return info;
}

std::string without_home_directory(const std::string& text) {
  static const std::string home = home_directory();
  // "/" (or nothing) as a home directory would turn every path into "~...".
  if (home.size() < 2) return text;
  std::string result;
  std::size_t start = 0;
  for (auto at = text.find(home); at != std::string::npos; at = text.find(home, start)) {
    const std::size_t end = at + home.size();
    const bool whole_component = end == text.size() || text[end] == '/';
    result += text.substr(start, at - start) + (whole_component ? "~" : home);
    start = end;
  }
  return result + text.substr(start);
}

}  // namespace iteragpu
