// placeholder: being written
#include "commands.hpp"
namespace iteragpu::cli { int run_environment(const std::vector<std::string>&) { return 1; } }
