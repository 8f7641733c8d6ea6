// PackageCalculator and Catalog: rental package prices and cost per accepted result.

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "iteragpu/package_calculator.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/package_fit.hpp"

namespace iteragpu::python {
namespace {

void register_catalog(py::module_& m) {
  py::class_<CatalogEntry>(m, "CatalogEntry", "One row of a catalog CSV.")
      .def_readonly("gpu", &CatalogEntry::gpu, "Catalog key: 'b200', 'h100-80gb'.")
      .def_readonly("gpu_name", &CatalogEntry::gpu_name, "Display name: 'NVIDIA B200'.")
      .def_readonly("days", &CatalogEntry::days, "Package duration in days: 3, 7 or 30.")
      .def_readonly("lot_price_cents", &CatalogEntry::lot_price_cents,
                    "Price of one lot, integer US cents.")
      .def_readonly("gpus_per_lot", &CatalogEntry::gpus_per_lot, "GPUs in one lot.")
      .def_readonly("snapshot_date", &CatalogEntry::snapshot_date, "ISO date of the prices.")
      .def_readonly("source", &CatalogEntry::source,
                    "Where the price comes from; the shipped catalog says 'illustrative'.")
      .def_readonly("device_names", &CatalogEntry::device_names,
                    "The names the GPU runtime gives the devices this model covers (list of "
                    "str; empty when the catalog has no device_names column).")
      .def_readonly("line", &CatalogEntry::line, "Line in the CSV file.")
      .def("__repr__", [](const CatalogEntry& e) {
        return "CatalogEntry(gpu='" + e.gpu + "', days=" + std::to_string(e.days) +
               ", lot_price_cents=" + std::to_string(e.lot_price_cents) +
               ", gpus_per_lot=" + std::to_string(e.gpus_per_lot) + ")";
      });

  py::class_<Catalog> catalog(m, "Catalog", "A validated price catalog (CSV).");
  catalog
      .def_static(
          "load",
          [](py::handle path, py::handle require_full_grid) {
            return Catalog::load(required_path_keyword(path, "catalog"),
                                 bool_keyword(require_full_grid, "require_full_grid"));
          },
          py::arg("path"), py::arg("require_full_grid") = py::bool_(false), R"pbdoc(
            Reads and validates a catalog strictly.

            Args:
                path: the CSV file (str or os.PathLike).
                require_full_grid: demand every GPU at every duration, as the shipped
                    catalog has (15 GPUs x 3 durations).

            Returns:
                Catalog

            Raises:
                DataFileError: (a ValueError) a missing or malformed file: 'file:line: reason'.
          )pbdoc")
      .def_static("shipped_path", &Catalog::shipped_path,
                  "Path of the catalog shipped with iteragpu (illustrative prices).")
      .def_property_readonly("path", &Catalog::path, "The file the catalog was read from.")
      .def_property_readonly("entries", &Catalog::entries, "The rows, as CatalogEntry objects.")
      .def("find", &Catalog::find, py::arg("gpu"), py::arg("days"),
           py::return_value_policy::reference_internal, R"pbdoc(
            The row for a GPU key and a duration.

            Args:
                gpu: catalog key, case-insensitive ('b200').
                days: the duration, an int (3, 7 or 30 in the shipped catalog).

            Returns:
                CatalogEntry

            Raises:
                UsageError: (a ValueError) an unknown GPU or duration, with the accepted values.
          )pbdoc");
  add_report_methods(catalog, nullptr);
}

void register_quote(py::module_& m) {
  py::class_<UnitCost>(m, "UnitCost",
                       "Whole package price divided by the accepted results, exactly.")
      .def_readonly(
          "accepted_results", &UnitCost::accepted_results,
          "The count of distinct, actually accepted results (int).")
      .def_property_readonly(
          "numerator_cents", [](const UnitCost& u) { return exact_integer(u.numerator_cents); },
          "Numerator of the reduced fraction of cents per result (int).")
      .def_property_readonly(
          "denominator", [](const UnitCost& u) { return exact_integer(u.denominator); },
          "Denominator of the reduced fraction of cents per result (int).")
      .def_property_readonly(
          "cents",
          [](const UnitCost& u) {
            return py::module_::import("fractions")
                .attr("Fraction")(exact_integer(u.numerator_cents), exact_integer(u.denominator));
          },
          "The exact cost per result in cents, as fractions.Fraction.")
      .def_property_readonly(
          "exact_usd",
          [](const UnitCost& u) -> py::object {
            return u.exact_usd ? exact_decimal(*u.exact_usd) : py::none();
          },
          "The exact cost per result in USD (decimal.Decimal), or None when the fraction has "
          "no finite decimal form.")
      .def_readonly("display_usd", &UnitCost::display_usd,
                    "The cost per result rounded for display (str); see display_rounding.")
      .def_property_readonly_static(
          "display_rounding", [](py::object) { return std::string(UnitCost::display_rounding()); },
          "How display_usd is rounded.")
      .def("__repr__", [](const UnitCost& u) {
        return "UnitCost(accepted_results=" + std::to_string(u.accepted_results) + ", display_usd='" +
               u.display_usd + "')";
      });

  py::class_<Quote> quote(m, "Quote", R"pbdoc(
    The price of a rental package from a catalog. A catalog proves neither availability nor
    a reservation: check the provider's page before buying.
  )pbdoc");
  quote.def_readonly("entry", &Quote::entry, "The catalog row (CatalogEntry).")
      .def_readonly("catalog_path", &Quote::catalog_path, "The catalog file used.")
      .def_readonly("lots", &Quote::lots, "Lots bought (int).")
      .def_readonly("total_gpus", &Quote::total_gpus, "lots * GPUs per lot (int).")
      .def_property_readonly(
          "total_cents", [](const Quote& q) { return exact_integer(q.total_cents); },
          "lots * lot price, in US cents (int).")
      .def_property_readonly(
          "total_usd", [](const Quote& q) { return exact_decimal(q.total_usd); },
          "total_cents / 100 (decimal.Decimal).")
      .def_readonly("unit_cost", &Quote::unit_cost,
                    "UnitCost, or None when accepted_results was not given.")
      .def("__repr__", [](const Quote& q) {
        return "Quote(gpu='" + q.entry.gpu + "', days=" + std::to_string(q.entry.days) +
               ", lots=" + std::to_string(q.lots) + ", total_cents=" + q.total_cents.str() + ")";
      });
  add_report_methods(quote, "quote_html");

  const QuoteRequest defaults;
  py::class_<PackageCalculator>(m, "PackageCalculator",
                                "Prices rental packages from a catalog (no GPU needed).")
      .def(py::init(&calculator_for_catalog),
           py::arg("catalog") = py::none(), R"pbdoc(
            Args:
                catalog: None for the shipped catalog (illustrative prices), a Catalog, or
                    the path of a CSV file with your own prices.

            Raises:
                DataFileError: (a ValueError) a missing or malformed catalog file.
          )pbdoc")
      .def_property_readonly("catalog", &PackageCalculator::catalog, "The Catalog in use.")
      .def(
          "quote",
          [](const PackageCalculator& calculator, py::handle gpu, py::handle days,
             py::handle lots, py::handle accepted_results) {
            QuoteRequest request;
            request.gpu = text_keyword(gpu, "gpu");
            request.days = numeric_keyword_text(days, "days");
            request.lots = numeric_keyword_text(lots, "lots");
            if (!accepted_results.is_none())
              request.accepted_results = numeric_keyword_text(accepted_results, "accepted_results");
            return calculator.quote(request);
          },
          py::arg("gpu"), py::arg("days"), py::arg("lots") = defaults.lots,
          py::arg("accepted_results") = py::none(), R"pbdoc(
            Prices a package and, with accepted_results, the cost per accepted result.

            Args:
                gpu: catalog key, case-insensitive ('b200').
                days: package duration: 3, 7 or 30.
                lots: lots to buy, a positive int (default 1). A B200 lot holds 2 GPUs.
                accepted_results: distinct, actually accepted valid results (a positive
                    int). No default on purpose: without it the unit cost is None.
                    Repeats of the same benchmark are not new results.

            Returns:
                Quote

            Raises:
                UsageError: (a ValueError) an unknown GPU or duration, or a malformed count.
          )pbdoc");
}

void register_fit(py::module_& m) {
  py::class_<PackageFit>(m, "PackageFit", "Whether one GPU of a catalog GPU model holds the checkpoint.")
      .def_property_readonly("gpu", [](const PackageFit& f) { return f.memory.gpu; }, "Catalog key.")
      .def_readonly("gpu_name", &PackageFit::gpu_name)
      .def_property_readonly("compute_capability", [](const PackageFit& f) { return f.memory.compute_capability; },
                             "'9.0'; '' for a GPU the predictor does not model.")
      .def_property_readonly("memory_bytes", [](const PackageFit& f) { return f.memory.memory_bytes; })
      .def_property_readonly("memory_source", [](const PackageFit& f) { return f.memory.memory_source; },
                             "'measured: ...' (this project's runs), 'reported: ...' (a published runtime total) or 'nominal: ...'.")
      .def_property_readonly("outside_allocator_bytes",
                             [](const PackageFit& f) { return f.memory.outside_allocator_bytes; })
      .def_property_readonly("outside_allocator_source",
                             [](const PackageFit& f) { return f.memory.outside_allocator_source; })
      .def_property_readonly("verdict", [](const PackageFit& f) { return std::string(verdict_text(f.verdict)); },
                             "'fits', 'does not fit', 'uncertain' or 'not assessed'.")
      .def_readonly("reason", &PackageFit::reason)
      .def_readonly("predicted_peak_reserved_bytes", &PackageFit::predicted_peak_reserved_bytes)
      .def_readonly("required_bytes", &PackageFit::required_bytes,
                    "Predicted peak reserved + the footprint outside the allocator; 0 when not assessed.")
      .def_readonly("headroom_bytes", &PackageFit::headroom_bytes, "memory - required; negative: short by that much.")
      .def_readonly("required_unchecked", &PackageFit::required_unchecked,
                    "'' when the predicted peak is exact by the rules on this GPU model; 'at least' when a "
                    "caveat says it can only be higher; 'may differ' when one leaves it unchecked either way.")
      .def_property_readonly(
          "lot_price_cents",
          [](const PackageFit& f) -> std::optional<std::int64_t> {
            if (!f.quote) return std::nullopt;
            return f.quote->entry.lot_price_cents;
          },
          "One lot's price for the duration asked (int cents); None without days.")
      .def_property_readonly(
          "cost_per_million_tokens_usd",
          [](const PackageFit& f) -> std::optional<std::string> {
            if (!f.tokens_cost) return std::nullopt;
            return f.tokens_cost->price.display_usd;
          },
          "A million generated tokens (a generation run's decode rate) or trained tokens (a measure --train "
          "run's rate), rounded to 4 places (str), where that rate was measured on this GPU model; None otherwise.")
      .def("__repr__", [](const PackageFit& f) {
        return "PackageFit(gpu='" + f.memory.gpu + "', verdict='" + verdict_text(f.verdict) +
               "', headroom_bytes=" + std::to_string(f.headroom_bytes) + ")";
      });

  py::class_<PackageFitReport> report(m, "PackageFitReport", R"pbdoc(
    Which catalog GPU holds a checkpoint at a batch and context: the predicted peak reserved
    bytes plus the footprint outside the allocator, against each GPU model's memory.
  )pbdoc");
  report.def_readonly("heading", &PackageFitReport::heading)
      .def_readonly("catalog_path", &PackageFitReport::catalog_path)
      .def_readonly("gpu_memory_path", &PackageFitReport::gpu_memory_path)
      .def_readonly("packages", &PackageFitReport::packages, "PackageFit list, in catalog order.")
      .def_readonly("caveats", &PackageFitReport::caveats)
      .def("__repr__", [](const PackageFitReport& r) {
        return "PackageFitReport(packages=" + std::to_string(r.packages.size()) + ")";
      });
  add_report_methods(report, "package_fit_html");

  m.def(
      "fit_packages",
      [](const MeasureRequest& request, py::handle days, py::handle measurement, py::handle catalog) {
        PackageFitRequest fit;
        fit.configuration = MeasureConfiguration::parse(request);
        if (!days.is_none()) fit.days = numeric_keyword_text(days, "days");
        fit.measurement_file = path_keyword_text(measurement, "measurement");
        if (!fit.measurement_file.empty() && !fit.days)
          throw UsageError("measurement", "prices tokens and needs days (3, 7 or 30)");
        const std::string memory_path = shipped_gpu_memory_path();
        return fit_packages(fit, calculator_for_catalog(catalog), load_gpu_memory(memory_path), memory_path);
      },
      py::arg("request"), py::arg("days") = py::none(), py::arg("measurement") = py::none(),
      py::arg("catalog") = py::none(), "fit_packages for request (its model); see iteragpu.packages().");
}

}  // namespace

PackageCalculator calculator_for_catalog(py::handle catalog) {
  if (catalog.is_none()) return PackageCalculator();
  if (py::isinstance<Catalog>(catalog)) return PackageCalculator(catalog.cast<Catalog>());
  return PackageCalculator(Catalog::load(path_keyword_text(catalog, "catalog")));
}

void register_packages(py::module_& m) {
  register_catalog(m);
  register_quote(m);
  register_fit(m);
}

}  // namespace iteragpu::python
