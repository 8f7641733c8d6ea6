// One bounded measurement of the synthetic MLP on a GPU, from a C++ program: the request is
// text where it comes from (here, the command line), parsed once into the typed
// configuration, then measured by the core's runner in its own worker process. Prints the
// GPU and each phase's peak allocated and peak reserved bytes.
//
//   measure_once OUTPUT.json [cuda:N]
#include <iostream>

#include "iteragpu/error.hpp"
#include "iteragpu/measurement_runner.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: measure_once OUTPUT.json [cuda:N]\n";
    return 2;
  }
  try {
    iteragpu::MeasureRequest request;
    request.output = argv[1];
    if (argc == 3) request.device = argv[2];
    const auto configuration = iteragpu::MeasureConfiguration::parse(request);
    const iteragpu::Measurement m = iteragpu::MeasurementRunner().measure(configuration);
    // The backend that measured (libtorch on a GPU; the test double in iteragpu's own tests).
    const std::string backend = m.environment.stack ? m.environment.stack->backend_identity : "none";
    std::cout << "measured on " << m.environment.selected_device << " by " << backend
              << ", written to " << request.output << "\n";
    for (const auto& row : m.phases)
      std::cout << "  " << row.phase << ": peak allocated " << row.end.peak_allocated_bytes
                << ", peak reserved " << row.end.peak_reserved_bytes << " bytes\n";
    return 0;
  } catch (const iteragpu::Error& e) {
    std::cerr << "measure_once: " << e.what() << "\n";
    return static_cast<int>(e.exit_code());
  }
}
