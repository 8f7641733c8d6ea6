#include "iteragpu/memory_sweep.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "iteragpu/environment.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "mechanics/atomic_output_file.hpp"
#include "mechanics/json_output.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/wording.hpp"
#include "protocol/phase_row_json.hpp"
#include "workload/configuration_json.hpp"
#include "workload/workload.hpp"

namespace iteragpu {
namespace {

constexpr const char* kSweepSchema = "iteragpu.sweep";
constexpr int kSweepSchemaVersion = 2;

// A dimension a sweep grows: one the configuration has for every workload (the synthetic
// MLP's width and hidden size only for it: a checkpoint's come from its config.json), or a
// whole-number option its workload declares as swept (a checkpoint's new-tokens).
struct VariedDimension {
  std::string name;
  std::function<std::int64_t(const MeasureConfiguration&)> get;
  std::function<void(MeasureConfiguration&, std::int64_t)> set;
};
std::vector<VariedDimension> dimensions_of(const MeasureConfiguration& configuration) {
  std::vector<VariedDimension> dimensions{
      {"batch", [](const MeasureConfiguration& c) { return c.batch; },
       [](MeasureConfiguration& c, std::int64_t v) { c.batch = v; }},
      {"context", [](const MeasureConfiguration& c) { return c.context; },
       [](MeasureConfiguration& c, std::int64_t v) { c.context = v; }}};
  if (configuration.model.empty()) {
    dimensions.push_back({"width", [](const MeasureConfiguration& c) { return c.width; },
                          [](MeasureConfiguration& c, std::int64_t v) { c.width = v; }});
    dimensions.push_back({"hidden", [](const MeasureConfiguration& c) { return c.hidden; },
                          [](MeasureConfiguration& c, std::int64_t v) { c.hidden = v; }});
  }
  for (const WorkloadOption& option : workload_kind_of(configuration).options) {
    if (!option.swept) continue;
    const std::string name = option.name;
    dimensions.push_back({name, [name](const MeasureConfiguration& c) { return c.workload_options.whole_number(name); },
                          [name](MeasureConfiguration& c, std::int64_t v) { c.workload_options.set(name, v); }});
  }
  return dimensions;
}

// The dimension `name` of the workload `configuration` runs (a checkpoint when it names one).
VariedDimension dimension_named(const std::string& name, const MeasureConfiguration& configuration) {
  std::string accepted;
  for (VariedDimension& dimension : dimensions_of(configuration)) {
    if (name == dimension.name) return std::move(dimension);
    accepted += (accepted.empty() ? "" : ", ") + dimension.name;
  }
  const std::size_t last = accepted.rfind(", ");
  if (last != std::string::npos) accepted.replace(last, 2, " or ");
  throw UsageError("vary", (name.empty() ? std::string("required") : quoted_for_message(name) + " is not a dimension") +
                               (configuration.model.empty() ? "" : " of a checkpoint") + "; expected " + accepted);
}

// "50%" of the free memory (a decimal from 0 exclusive to 100), or a number of bytes.
struct Budget {
  std::optional<Decimal> percent;
  std::uint64_t bytes = 0;
};
Budget parse_budget(const std::string& text) {
  Budget budget;
  if (!text.empty() && text.back() == '%') {
    const Decimal percent = parse_decimal(text.substr(0, text.size() - 1), "budget", false);
    if (percent.mantissa <= 0 || exact::compare(percent, Decimal{100, 0}) > 0)
      throw UsageError("budget", quoted_for_message(text) +
                                     " is out of range; expected a percentage above 0% and at most 100%, "
                                     "or a number of bytes");
    budget.percent = percent;
    return budget;
  }
  budget.bytes = static_cast<std::uint64_t>(parse_whole_number(text, "budget", 1, std::numeric_limits<long long>::max()));
  return budget;
}

std::uint64_t percent_of(std::uint64_t bytes, const Decimal& percent) {
  const BigInt scaled = BigInt(bytes) * percent.mantissa;
  BigInt divisor = 100;
  for (unsigned i = 0; i < percent.scale; ++i) divisor *= 10;
  const BigInt bytes_under = scaled / divisor;  // rounded down: stays under
  return bytes_under.convert_to<std::uint64_t>();
}

std::uint64_t largest_peak(const std::vector<PhaseRow>& phases, std::uint64_t AllocatorCounters::*peak) {
  std::uint64_t largest = 0;
  for (const PhaseRow& row : phases) largest = std::max(largest, row.end.*peak);
  return largest;
}

SweepPoint point_of(const Measurement& measurement, std::int64_t value, std::uint64_t budget_bytes) {
  SweepPoint point;
  point.value = value;
  point.peak_reserved_bytes = largest_peak(measurement.phases, &AllocatorCounters::peak_reserved_bytes);
  point.peak_allocated_bytes = largest_peak(measurement.phases, &AllocatorCounters::peak_allocated_bytes);
  if (measurement.prediction) {
    std::uint64_t predicted = 0;
    for (const PhasePrediction& row : measurement.prediction->phases)
      predicted = std::max(predicted, row.end.peak_reserved_bytes);
    point.predicted_peak_reserved_bytes = predicted;
  }
  point.warm_forward_host_seconds_median = measurement.timing.host_seconds.median;
  point.fits = *point.peak_reserved_bytes <= budget_bytes;
  point.outcome = point.fits ? "fits" : "over budget";
  return point;
}

// The largest value in [from, max_value] where `holds` is true, given that it holds at `from`
// and, once false, stays false above: doubling, then bisection.
std::int64_t largest_holding(std::int64_t from, std::int64_t max_value,
                             const std::function<bool(std::int64_t)>& holds) {
  std::int64_t good = from, bad = 0;
  while (bad == 0 && good < max_value) {
    const std::int64_t next = good > max_value / 2 ? max_value : good * 2;
    (holds(next) ? good : bad) = next;
  }
  while (bad != 0 && bad - good > 1) {
    const std::int64_t middle = good + (bad - good) / 2;
    (holds(middle) ? good : bad) = middle;
  }
  return good;
}

}  // namespace

SweepSearch search_largest_fitting(const SweepPoint& first, std::int64_t max_value, std::uint64_t budget_bytes,
                                   const SweepProbe& probe) {
  SweepSearch search;
  std::optional<std::int64_t> lo, hi;  // the largest measured value that fits, the smallest that does not
  auto record = [&](const SweepPoint& point) {
    search.points.push_back(point);
    if (point.fits) {
      if (!lo || point.value > *lo) lo = point.value;
    } else if (!hi || point.value < *hi) {
      hi = point.value;
    }
  };
  auto measured = [&](std::int64_t value) {
    return std::any_of(search.points.begin(), search.points.end(),
                       [value](const SweepPoint& point) { return point.value == value; });
  };
  auto measure = [&](std::int64_t value) {
    if (measured(value)) return;
    SweepPoint point = probe.measure(value);
    point.value = value;
    record(point);
  };
  record(first);

  // The predictor's boundary, found on predictions alone (no GPU), then measured with the
  // value above it: when both agree, the search is over.
  if (probe.predict) {
    auto predicted_to_fit = [&](std::int64_t value) {
      const std::optional<std::uint64_t> bytes = probe.predict(value);
      return bytes && *bytes <= budget_bytes;
    };
    if (predicted_to_fit(1)) {
      const std::int64_t good = largest_holding(1, max_value, predicted_to_fit);
      search.predicted_largest = good;
      measure(good);
      if (lo && *lo == good && good < max_value) measure(good + 1);
    }
  }

  // Grow while everything fits, shrink while nothing does, then bisect. Beside a proposal
  // that missed, the boundary is near: the steps start at 1 and double; without one, the
  // value itself doubles (or halves).
  const bool near_proposal = search.predicted_largest.has_value();
  std::int64_t step = 1;
  while (lo && !hi && *lo < max_value) {
    measure(near_proposal ? std::min(max_value, *lo + step) : (*lo > max_value / 2 ? max_value : *lo * 2));
    step *= 2;
  }
  step = 1;
  while (!lo && hi && *hi > 1) {
    measure(near_proposal ? std::max<std::int64_t>(1, *hi - step) : *hi / 2);
    step *= 2;
  }
  while (lo && hi && *hi - *lo > 1) measure(*lo + (*hi - *lo) / 2);
  search.largest_fitting = lo;
  search.smallest_not_fitting = hi;
  return search;
}

std::vector<SweepPoint> SweepResult::points_by_value() const {
  std::vector<SweepPoint> sorted = points;
  std::sort(sorted.begin(), sorted.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.value < b.value; });
  return sorted;
}

MemorySweep::MemorySweep(MeasurementRunner runner, std::function<void(const SweepPoint&, int)> on_point)
    : runner_(std::move(runner)), on_point_(std::move(on_point)) {}

SweepResult MemorySweep::run(const SweepRequest& request) const {
  // Everything that can be refused is refused before a worker starts.
  const Budget budget = parse_budget(request.budget);
  MeasureConfiguration start = request.start.checked();
  const VariedDimension dimension = dimension_named(request.vary, start);
  start.output.clear();
  if (names_several_devices(start.device))
    throw UsageError("device", "a sweep measures one GPU; expected cuda:N");
  parse_device_index(start.device, "device");
  if (!request.output.empty()) ensure_output_absent(request.output, "output");

  SweepResult result;
  result.start = start;
  result.vary = dimension.name;
  result.budget = request.budget;
  result.package = request.package;
  result.output = request.output;
  const std::int64_t start_value = dimension.get(start);
  // A point's configuration: the start with one dimension changed; a hidden size left out
  // follows the width as it grows (4 × width), as it would for a measurement of that width.
  auto configuration_at = [&](std::int64_t value) {
    MeasureConfiguration point = start;
    dimension.set(point, value);
    if (start.hidden_is_default && dimension.name != "hidden") point.hidden = 0;
    return point;
  };

  // The workload's own limit on the dimension (before any worker starts): what it accepts is
  // monotone in the value.
  auto refusal_at = [&](std::int64_t value) -> std::string {
    try {
      configuration_at(value).checked();
      return {};
    } catch (const UsageError& error) {
      return error.reason();
    }
  };
  result.largest_accepted = largest_holding(start_value, kMaxModelDimension,
                                            [&](std::int64_t value) { return refusal_at(value).empty(); });
  if (result.largest_accepted < kMaxModelDimension)
    result.beyond_largest_accepted = refusal_at(result.largest_accepted + 1);

  // The first point tells the free memory, hence the budget, and the GPU the predictor needs.
  Measurement first;
  try {
    first = runner_.measure(configuration_at(start_value));
  } catch (const OutOfMemory& error) {
    throw OutOfMemory(std::string(error.what()) + "; the starting " + dimension.name + " " +
                      std::to_string(start_value) + " does not fit: start the sweep from a smaller one");
  }
  const EnvironmentReport& environment = first.environment;
  const std::optional<std::uint64_t> free_bytes =
      environment.stack ? environment.stack->selected_free_bytes : std::nullopt;
  if (!free_bytes && budget.percent)
    throw DeviceUnavailable("the runtime reported no free memory for " + start.device +
                            "; give the budget as a number of bytes");
  result.free_bytes = free_bytes.value_or(0);
  result.budget_bytes = budget.percent ? percent_of(result.free_bytes, *budget.percent) : budget.bytes;
  if (const GpuDevice* gpu = environment.selected_gpu()) result.gpu_name = gpu->name;

  SweepProbe probe;
  int measurements = 0;
  auto report = [&](const SweepPoint& point) {
    ++measurements;
    if (on_point_) on_point_(point, measurements);
  };
  probe.measure = [&](std::int64_t value) {
    SweepPoint point;
    point.value = value;
    try {
      point = point_of(runner_.measure(configuration_at(value)), value, result.budget_bytes);
    } catch (const OutOfMemory& error) {
      point.outcome = "out of memory";
      point.error = error.what();
    }
    report(point);
    return point;
  };
  if (first.prediction) {
    PredictionTarget target = first.prediction->target;
    // A package's budget is that card's capacity: on that card the allocator frees its cached
    // segments before it runs out, and the proposal follows it there (on a larger card the
    // measurements correct a proposal that reads the budget so).
    if (!request.package.empty()) target.allocator_capacity_bytes = result.budget_bytes;
    probe.predict = [&, target](std::int64_t value) -> std::optional<std::uint64_t> {
      try {
        const MemoryPrediction prediction = MemoryPredictor::predict(configuration_at(value), target);
        std::uint64_t peak = 0;
        for (const PhasePrediction& row : prediction.phases) peak = std::max(peak, row.end.peak_reserved_bytes);
        return peak;
      } catch (const UsageError&) {
        return std::nullopt;
      } catch (const OutOfMemory&) {  // past the package's capacity
        return std::nullopt;
      }
    };
  }

  const SweepPoint first_point = point_of(first, start_value, result.budget_bytes);
  report(first_point);
  SweepSearch search = search_largest_fitting(first_point, result.largest_accepted, result.budget_bytes, probe);
  result.points = std::move(search.points);
  result.predicted_largest = search.predicted_largest;
  result.largest_fitting = search.largest_fitting;
  result.smallest_not_fitting = search.smallest_not_fitting;
  result.publish();
  return result;
}

std::string SweepResult::to_json() const {
  JsonWriter json(kSweepSchema, kSweepSchemaVersion);
  write_measure_configuration(json, "device", start);
  json.key("vary").value(vary)
      .key("budget").begin_object()
      .key("given").value(budget)
      .key("bytes").value(budget_bytes)
      .key("free_bytes_at_first_point").value(free_bytes)
      .key("package").text_or_null(package)
      .end_object()
      .key("gpu_name").value(gpu_name)
      .key("measurements").value(measurements())
      .key("predicted_largest").value(predicted_largest)
      .key("largest_fitting").value(largest_fitting)
      .key("smallest_not_fitting").value(smallest_not_fitting)
      .key("largest_accepted").value(largest_accepted)
      .key("beyond_largest_accepted").text_or_null(beyond_largest_accepted);
  json.key("points").begin_array();
  int order = 0;
  for (const SweepPoint& point : points) {
    json.begin_object()
        .key("order").value(++order)
        .key("value").value(point.value)
        .key("outcome").value(point.outcome)
        .key("fits").value(point.fits)
        .key("peak_reserved_bytes").value(point.peak_reserved_bytes)
        .key("peak_allocated_bytes").value(point.peak_allocated_bytes)
        .key("predicted_peak_reserved_bytes").value(point.predicted_peak_reserved_bytes)
        .key("warm_forward_host_seconds_median").value(point.warm_forward_host_seconds_median)
        .key("error");
    json.text_or_null(point.error);
    json.end_object();
  }
  json.end_array();
  json.key("notes").value(std::vector<std::string>{
      "Each point is a whole measurement in its own worker process; its peak is the largest "
      "peak_reserved_bytes of its phases (this process's caching allocator on this GPU; the CUDA "
      "context and libraries are not included).",
      "The budget is compared with the peak reserved bytes; free_bytes_at_first_point is what "
      "the runtime reported once the first point's worker had created its CUDA context.",
      "The search assumes a larger value never needs less memory; an out-of-memory point does "
      "not fit."});
  return json.finish();
}

std::string SweepResult::to_text() const {
  std::string text = "Sweep of " + vary + " on " + printable(start.device) +
                     (gpu_name.empty() ? "" : " (" + printable(gpu_name) + ")") +
                     " from " + std::to_string(dimension_named(vary, start).get(start)) + ", " + start.dtype +
                     ", budget " + budget + " = " + bytes_and_size(budget_bytes);
  if (budget.back() == '%') text += " of " + bytes_and_size(free_bytes) + " free";
  if (!package.empty())
    text += ": package " + printable(package) + "'s GPU memory less the footprint outside the allocator";
  text += "\n" + start.model_origin().heading_line() + "\n";
  char line[256];
  // Peaks as exact bytes (the boundary can be a 2 MiB segment) and in GiB or MiB; the warm
  // forward's median host time in milliseconds.
  std::snprintf(line, sizeof line, "%12s  %-14s %26s %26s %11s  %s\n", vary.c_str(), "outcome",
                "peak reserved", "predicted", "warm fwd ms", "order");
  text += line;
  for (const SweepPoint& point : points_by_value()) {
    int order = 0;
    for (std::size_t i = 0; i < points.size(); ++i)
      if (points[i].value == point.value) order = static_cast<int>(i) + 1;
    auto size_cell = [](const std::optional<std::uint64_t>& bytes) {
      return bytes ? grouped_count(*bytes) + " (" + memory_size(*bytes) + ")" : std::string("-");
    };
    const std::string peak = size_cell(point.peak_reserved_bytes);
    const std::string predicted = size_cell(point.predicted_peak_reserved_bytes);
    char seconds[32] = "-";
    if (point.warm_forward_host_seconds_median)
      std::snprintf(seconds, sizeof seconds, "%.3f", *point.warm_forward_host_seconds_median * 1000.0);
    std::snprintf(line, sizeof line, "%12lld  %-14s %26s %26s %11s  %d\n", static_cast<long long>(point.value),
                  point.outcome.c_str(), peak.c_str(), predicted.c_str(), seconds, order);
    text += line;
  }
  text += "\n";
  if (largest_fitting) {
    text += "Largest " + vary + " under the budget: " + std::to_string(*largest_fitting);
    for (const SweepPoint& point : points)
      if (point.value == *largest_fitting && point.peak_reserved_bytes)
        text += " (peak reserved " + bytes_and_size(*point.peak_reserved_bytes) + ")";
    if (smallest_not_fitting)
      text += "; " + std::to_string(*smallest_not_fitting) + " does not fit (measured)";
    else if (*largest_fitting == largest_accepted)
      text += " (the largest accepted" +
              (beyond_largest_accepted.empty() ? std::string(")")
                                               : ": " + std::to_string(largest_accepted + 1) + " is refused, " +
                                                     printable(beyond_largest_accepted) + ")");
    text += ".\n";
  } else {
    text += "No " + vary + " fits under the budget, not even 1.\n";
  }
  if (predicted_largest)
    text += "The predictor proposed " + std::to_string(*predicted_largest) + " before any search; " +
            (largest_fitting && *predicted_largest == *largest_fitting ? "the measurements confirm it.\n"
                                                                       : "the measurements corrected it.\n");
  text += std::to_string(measurements()) + (measurements() == 1 ? " measurement" : " measurements") +
          ", each in its own worker process.\n";
  return text;
}

void SweepResult::publish() const {
  if (!output.empty()) publish_exclusively(output, to_json());
}

}  // namespace iteragpu
