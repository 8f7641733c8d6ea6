#include "iteragpu/memory_estimator.hpp"

#include <sstream>

#include "mechanics/exact_arithmetic.hpp"
#include "mechanics/json_output.hpp"
#include "estimate/memory_amount.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu {
namespace {

const char* kRounding =
    "bytes = ceil(parameters x bits / 8): the total bits are rounded up to whole bytes once";
const char* kReserveNote = "the reserve is an assumption chosen by the user, not a measurement";
const char* kFitNote = "this estimate does not predict whether a real model fits on a given card";

}  // namespace

const std::vector<std::string>& MemoryEstimate::not_included() {
  static const std::vector<std::string> items{
      "activations", "KV cache", "quantization metadata", "gradients", "optimizer states",
      "libraries and the CUDA context"};
  return items;
}

MemoryEstimate MemoryEstimator::estimate(const EstimateRequest& request) const {
  const BigInt parameters = parse_parameter_count(request.parameters, "parameters");
  const BigInt bits = parse_positive_integer(request.bits, "bits", "16");

  const BigInt total_bits = parameters * bits;
  const Decimal weight_bytes = exact::from_integer(exact::ceil_divide(total_bits, 8));
  const Decimal reserve_bytes = reserve_bytes_from_gib(request.reserve_gib);

  MemoryEstimate result;
  result.parameters = exact::to_exact(parameters);
  result.bits = exact::to_exact(bits);
  result.total_bits = exact::to_exact(total_bits);
  result.weights = amount_from_bytes(weight_bytes);
  result.reserve = amount_from_bytes(reserve_bytes);
  result.total = amount_from_bytes(exact::add(weight_bytes, reserve_bytes));
  return result;
}

std::string MemoryEstimate::to_json() const {
  JsonWriter json("iteragpu.estimate", 1);
  json.key("inputs").begin_object();
  json.key("parameters").value(parameters);
  json.key("bits_per_parameter").value(bits);
  json.key("reserve_gib").value(reserve.gib);
  json.end_object();
  json.key("total_bits").value(total_bits);
  json.key("rounding").value(kRounding);
  write_weight_amounts(json, weights, reserve, total);
  json.key("not_included").value(not_included());
  json.key("notes").value(std::vector<std::string>{kReserveNote, kFitNote});
  return json.finish();
}

std::string MemoryEstimate::to_text() const {
  std::ostringstream out;
  out << "Weight memory estimate\n"
      << "  parameters       " << parameters.grouped(0) << " x " << bits.str() << " bits\n"
      << weight_amount_lines(weights, reserve, total) << "\n"
      << "Rounding: " << kRounding << ".\n"
      << kAmountRoundingNote
      << "Not included: ";
  const auto& items = not_included();
  for (std::size_t i = 0; i < items.size(); ++i) out << (i ? ", " : "") << items[i];
  out << ".\nThis estimate does not predict whether a real model fits on a given card.\n";
  return out.str();
}

}  // namespace iteragpu
