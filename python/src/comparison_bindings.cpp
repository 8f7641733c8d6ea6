// Measurements side by side (iteragpu.compare) and a measurement file read back
// (iteragpu.read_measurement): the core's MeasurementComparison and Measurement::read.

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "iteragpu/measurement_comparison.hpp"

namespace iteragpu::python {
namespace {

// None, str, int or float (seconds, a fraction, or tokens per second), as the JSON has it.
py::object python_value(const ComparedValue& value) {
  switch (value.kind) {
    case ComparedValue::Kind::kAbsent: return py::none();
    case ComparedValue::Kind::kText: return py::str(value.text);
    case ComparedValue::Kind::kInteger: return py::int_(value.integer);
    case ComparedValue::Kind::kSeconds:
    case ComparedValue::Kind::kFraction:
    case ComparedValue::Kind::kRate: return py::float_(value.number);
  }
  return py::none();
}

}  // namespace

void register_comparison(py::module_& m) {
  py::class_<ComparisonRow>(m, "ComparisonRow", "One figure, one value per measurement.")
      .def_readonly("name", &ComparisonRow::name, "Unique in its section: 'dtype', 'warm_forward.peak_reserved_bytes'.")
      .def_readonly("label", &ComparisonRow::label, "For people.")
      .def_readonly("unit", &ComparisonRow::unit, "'bytes', 'seconds', 'fraction', 'tokens_per_second' or ''.")
      .def_readonly("same", &ComparisonRow::same, "True when every value is equal.")
      .def_property_readonly(
          "values",
          [](const ComparisonRow& row) {
            py::list values;
            for (const ComparedValue& value : row.values) values.append(python_value(value));
            return values;
          },
          "One per measurement: str, int, float (seconds, a fraction or tokens per second) or None "
          "(no such figure).")
      .def_property_readonly(
          "ratios",
          [](const ComparisonRow& row) -> py::object {
            if (row.ratios.empty()) return py::none();
            return py::cast(row.ratios);
          },
          "Each value / the first measurement's (None where undefined); None for figures "
          "whose ratio means nothing (names, versions).")
      .def("__repr__", [](const ComparisonRow& row) {
        return "ComparisonRow(name='" + row.name + "', same=" + (row.same ? "True" : "False") + ")";
      });

  py::class_<ComparisonSection>(m, "ComparisonSection", "configuration, model, environment, peaks or times.")
      .def_readonly("name", &ComparisonSection::name)
      .def_readonly("title", &ComparisonSection::title)
      .def_readonly("rows", &ComparisonSection::rows, "ComparisonRow list.")
      .def(
          "row", [](const ComparisonSection& section, const std::string& name) -> std::optional<ComparisonRow> {
            const ComparisonRow* row = section.row(name);
            return row ? std::optional<ComparisonRow>(*row) : std::nullopt;
          },
          py::arg("name"), "The row of that name, or None.")
      .def("__repr__", [](const ComparisonSection& section) {
        return "ComparisonSection(name='" + section.name + "', rows=" + std::to_string(section.rows.size()) + ")";
      });

  py::class_<MeasurementComparison> comparison(m, "MeasurementComparison", R"pbdoc(
    Two or more measurements side by side: configurations, the environment fields that
    differ, each phase's peaks, the warm medians with their spread, ratios to the first,
    and one finding per measurement after the first.
  )pbdoc");
  comparison.def_readonly("sources", &MeasurementComparison::sources, "Each measurement's file or label.")
      .def_readonly("measurements", &MeasurementComparison::measurements, "The Measurement objects compared.")
      .def_readonly("sections", &MeasurementComparison::sections, "ComparisonSection list.")
      .def_readonly("findings", &MeasurementComparison::findings,
                    "One sentence per measurement after the first: what differs from the first.")
      .def(
          "section", [](const MeasurementComparison& c, const std::string& name) -> std::optional<ComparisonSection> {
            const ComparisonSection* section = c.section(name);
            return section ? std::optional<ComparisonSection>(*section) : std::nullopt;
          },
          py::arg("name"), "The section of that name, or None.")
      .def("to_markdown", &MeasurementComparison::to_markdown,
           "As `iteragpu compare --format markdown` prints it.")
      .def("to_csv", &MeasurementComparison::to_csv, "As `iteragpu compare --format csv` prints it.")
      .def("__repr__", [](const MeasurementComparison& c) {
        return "MeasurementComparison(measurements=" + std::to_string(c.measurements.size()) + ")";
      });
  add_report_methods(comparison, "comparison_html");

  m.def(
      "read_measurement",
      [](py::handle path) { return Measurement::read(required_path_keyword(path, "path")); },
      py::arg("path"), R"pbdoc(
        A file written by ``iteragpu measure`` (or ``measure(output=...)``), read back.

        Args:
            path: the measurement file (str or os.PathLike).

        Returns:
            Measurement: equal to the one that wrote the file (its to_json() is the file).

        Raises:
            DataFileError: (a ValueError) the file is missing, not a regular file, or not a
                whole measurement ("PATH: reason").
      )pbdoc");

  m.def(
      "compare_measurements",
      [](const py::list& items) {
        std::vector<std::string> sources;
        std::vector<Measurement> measurements;
        for (std::size_t index = 0; index < items.size(); ++index) {
          const py::handle item = items[index];
          if (py::isinstance<Measurement>(item)) {
            const Measurement& measurement = item.cast<const Measurement&>();
            sources.push_back(measurement.configuration.output.empty()
                                  ? "measurement " + std::to_string(index + 1)
                                  : measurement.configuration.output);
            measurements.push_back(measurement);
          } else {
            sources.push_back(required_path_keyword(item, "measurements"));
            measurements.push_back(Measurement::read(sources.back()));
          }
        }
        return MeasurementComparison::of(sources, measurements);
      },
      py::arg("items"), R"pbdoc(
        The comparison of measurements given as Measurement objects or file paths.

        Args:
            items: a list of Measurement objects and/or paths (str or os.PathLike); the first
                is the reference of the ratios.

        Returns:
            MeasurementComparison

        Raises:
            UsageError: (a ValueError) fewer than two measurements.
            DataFileError: (a ValueError) a path that is not a whole measurement file.
            TypeError: an item that is neither a Measurement nor a path.
      )pbdoc");
}

}  // namespace iteragpu::python
