#pragma once
// Text a person would write: a count agrees with its noun ("1 lot", "2 lots"), large counts
// are grouped ("1,000,000 lots"). Every report's text uses this, not its own `n == 1 ? :`.

#include <string>

#include "mechanics/exact_arithmetic.hpp"

namespace iteragpu {

// "1,000,000": a count (any integer type, byte counts included) with thousands separators.
inline std::string grouped_count(const BigInt& n) { return exact::to_exact(n).grouped(0); }

// "1 lot", "2 lots"; `plural` defaults to singular + "s".
inline std::string counted(long long n, const std::string& singular, std::string plural = "") {
  if (plural.empty()) plural = singular + "s";
  return grouped_count(n) + " " + (n == 1 ? singular : plural);
}

}  // namespace iteragpu
