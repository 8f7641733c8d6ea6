// Will a 7B model's 16-bit weights, plus a 4 GiB reserve of my choosing, fit in one rented
// GPU's memory, and what does a week of it cost? Uses iteragpu as a C++ library.
#include <iostream>

#include "iteragpu/error.hpp"
#include "iteragpu/memory_estimator.hpp"
#include "iteragpu/package_calculator.hpp"

int main() {
  try {
    const iteragpu::MemoryEstimate estimate =
        iteragpu::MemoryEstimator().estimate({"7B", "16", "4"});
    std::cout << "weights: " << estimate.weights.gib.str() << " GiB exactly, "
              << estimate.total.gib.rounded(2) << " GiB with the reserve\n";

    const iteragpu::Quote quote = iteragpu::PackageCalculator().quote({"h100-sxm", "7", "1", {}});
    std::cout << quote.entry.gpu_name << ", 7 days: $" << quote.total_usd.rounded(2) << " ("
              << quote.entry.source << ", snapshot " << quote.entry.snapshot_date << ")\n";
    return 0;
  } catch (const iteragpu::Error& e) {
    std::cerr << "rental_check: " << e.what() << "\n";
    return static_cast<int>(e.exit_code());
  }
}
