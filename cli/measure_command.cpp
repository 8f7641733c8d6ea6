// placeholder: being written
#include "commands.hpp"
namespace iteragpu::cli { int run_measure(const std::vector<std::string>&) { return 1; } }
