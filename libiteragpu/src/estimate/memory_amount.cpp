#include "estimate/memory_amount.hpp"

#include "mechanics/quantity_parser.hpp"

namespace iteragpu {

MemoryAmount amount_from_bytes(const Decimal& bytes) {
  return {exact::to_exact(bytes), exact::to_exact(exact::divide_by_power_of_two(bytes, kGibPowerOfTwo)),
          exact::to_exact(exact::divide_by_power_of_ten(bytes, kGbPowerOfTen))};
}

Decimal reserve_bytes_from_gib(const std::string& reserve_gib) {
  // GiB → bytes: × 2^30; exact for any finite decimal reserve.
  return exact::multiply(parse_decimal(reserve_gib, "reserve-gib", false), BigInt(1) << kGibPowerOfTwo);
}

void write_amount(JsonWriter& json, const char* name, const MemoryAmount& amount) {
  json.key(name).begin_object();
  json.key("bytes").value(amount.bytes);
  json.key("gib").value(amount.gib);
  json.key("gb").value(amount.gb);
  json.end_object();
}

std::string describe_amount(const MemoryAmount& amount) {
  return amount.bytes.grouped(amount.bytes.is_integer() ? 0 : 1) + " bytes = " +
         amount.gib.readable(2) + " GiB = " + amount.gb.readable(2) + " GB";
}

void write_weight_amounts(JsonWriter& json, const MemoryAmount& weights, const MemoryAmount& reserve,
                          const MemoryAmount& total) {
  write_amount(json, "weights", weights);
  write_amount(json, "reserve", reserve);
  json.key("reserve_is_assumption").value(true);
  write_amount(json, "total", total);
  json.key("units").begin_object();
  json.key("gib").value("2^30 bytes");
  json.key("gb").value("10^9 bytes");
  json.end_object();
}

std::string weight_amount_lines(const MemoryAmount& weights, const MemoryAmount& reserve,
                                const MemoryAmount& total) {
  return "  weights          " + describe_amount(weights) + "\n" +
         "  exact            " + weights.bytes.str() + " bytes = " + weights.gib.str() + " GiB = " +
         weights.gb.str() + " GB\n" +
         "  reserve          " + describe_amount(reserve) + " (assumption you chose, not measured)\n" +
         "  total            " + describe_amount(total) + "\n" +
         "  exact total      " + total.gib.str() + " GiB\n";
}

}  // namespace iteragpu
