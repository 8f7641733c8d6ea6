#pragma once
// Text a person would write: a count agrees with its noun ("1 lot", "2 lots"), large counts
// are grouped ("1,000,000 lots"), a byte count reads in GiB or MiB beside its exact bytes.
// Every report's text uses this, not its own `n == 1 ? :` or its own division by 2^30.

#include <string>

#include "mechanics/exact_arithmetic.hpp"

namespace iteragpu {

// "1,000,000": a count (any integer type, byte counts included) with thousands separators.
inline std::string grouped_count(const BigInt& n) { return exact::to_exact(n).grouped(0); }

inline constexpr unsigned kGibPowerOfTwo = 30;  // 1 GiB = 2^30 bytes
inline constexpr unsigned kMibPowerOfTwo = 20;  // 1 MiB = 2^20 bytes

// A byte count in the unit a person reads: GiB (2^30 bytes) with two decimals from 1 GiB up,
// MiB (2^20 bytes) with two decimals below; the sign kept, halves rounded away from zero (or
// down for a lower bound, up for an upper bound):
// "21.51 GiB", "-5.50 GiB", "2.00 MiB", "0.00 MiB". Text only: JSON keeps the exact bytes.
inline std::string memory_size(const BigInt& bytes, exact::Rounding mode = exact::Rounding::kHalfAwayFromZero) {
  const BigInt magnitude = bytes < 0 ? BigInt(-bytes) : bytes;
  const bool gib = magnitude >= (BigInt(1) << kGibPowerOfTwo);
  return exact::rounded(exact::divide_by_power_of_two(exact::from_integer(bytes), gib ? kGibPowerOfTwo : kMibPowerOfTwo),
                        2, mode) +
         (gib ? " GiB" : " MiB");
}

// "23,098,884,096 bytes (21.51 GiB)": the exact count grouped, then memory_size().
inline std::string bytes_and_size(const BigInt& bytes) {
  return grouped_count(bytes) + " bytes (" + memory_size(bytes) + ")";
}

// "1 lot", "2 lots"; `plural` defaults to singular + "s".
inline std::string counted(long long n, const std::string& singular, std::string plural = "") {
  if (plural.empty()) plural = singular + "s";
  return grouped_count(n) + " " + (n == 1 ? singular : plural);
}

}  // namespace iteragpu
