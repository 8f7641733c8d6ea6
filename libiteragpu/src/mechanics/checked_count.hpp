#pragma once
// A count a prediction forms from configuration values (bytes, elements, positions): exact
// below kCountLimit, a CountBeyondLimit past it, never wrapped. 2^62 bytes (4 EiB) is some
// 30,000 times the largest GPU's memory, and keeps the sum of two counts, and the difference
// of a count and a GPU's memory, exact in a signed 64-bit integer. Arithmetic on a
// CheckedCount is checked; a plain integer becomes one implicitly (checked too), so a product
// that starts from a CheckedCount is checked all along.

#include <cstdint>
#include <exception>

namespace iteragpu {

inline constexpr std::uint64_t kCountLimit = std::uint64_t{1} << 62;

// Thrown where a count would reach kCountLimit. The entry point that knows the request turns
// it into a UsageError naming the option (MemoryPredictor::predict).
class CountBeyondLimit : public std::exception {
 public:
  const char* what() const noexcept override { return "a count of the prediction reaches 2^62"; }
};

class CheckedCount {
 public:
  CheckedCount(std::uint64_t value) : value_(checked(value)) {}  // NOLINT: implicit by design
  std::uint64_t value() const { return value_; }

  friend CheckedCount operator*(CheckedCount a, CheckedCount b) {
    std::uint64_t product = 0;
    if (__builtin_mul_overflow(a.value_, b.value_, &product)) throw CountBeyondLimit();
    return CheckedCount(product);
  }
  // Both below 2^62: the sum cannot wrap before it is checked.
  friend CheckedCount operator+(CheckedCount a, CheckedCount b) { return CheckedCount(a.value_ + b.value_); }
  friend CheckedCount operator/(CheckedCount a, CheckedCount b) { return CheckedCount(a.value_ / b.value_); }
  CheckedCount& operator+=(CheckedCount other) { return *this = *this + other; }
  CheckedCount& operator*=(CheckedCount other) { return *this = *this * other; }
  friend bool operator==(CheckedCount a, CheckedCount b) { return a.value_ == b.value_; }
  friend bool operator!=(CheckedCount a, CheckedCount b) { return a.value_ != b.value_; }
  friend bool operator<(CheckedCount a, CheckedCount b) { return a.value_ < b.value_; }

  static std::uint64_t checked(std::uint64_t value) {
    if (value >= kCountLimit) throw CountBeyondLimit();
    return value;
  }

 private:
  std::uint64_t value_;
};

}  // namespace iteragpu
