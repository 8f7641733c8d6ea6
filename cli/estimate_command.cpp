// placeholder: being written
#include "commands.hpp"
namespace iteragpu::cli { int run_estimate(const std::vector<std::string>&) { return 1; } }
