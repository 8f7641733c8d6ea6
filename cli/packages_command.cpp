// placeholder: being written
#include "commands.hpp"
namespace iteragpu::cli { int run_packages(const std::vector<std::string>&) { return 1; } }
