#pragma once
// `iteragpu measure --device all` (or cuda:0,cuda:1): one child process per GPU, at the
// same time, each running the single-device `measure` into its own result file; then a
// summary file and table.

#include "command_support.hpp"
#include "iteragpu/phase_measurer.hpp"

namespace iteragpu::cli {

// `request.device` names several devices (iteragpu::names_several_devices) and
// `request.output` is the summary file. Returns the command's exit code: 0 when every device
// succeeded, else MeasurementSummary::exit_code(); throws (nothing written) when a check
// made before any process starts fails.
int measure_several_devices(const MeasureRequest& request, OutputFormat format);

}  // namespace iteragpu::cli
