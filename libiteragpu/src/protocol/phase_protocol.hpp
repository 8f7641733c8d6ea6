#pragma once
// The phase protocol of a measurement (SPEC §3), on any Backend: the LibTorch plugin for a
// measurement, the caching-allocator model for a prediction, the test double in the tests.
// One sequence of phases and one order of calls inside each, so a prediction and a
// measurement describe the same rows.

#include <functional>

#include "iteragpu/backend.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/phase_row.hpp"
#include "iteragpu/timing_statistics.hpp"
#include "workload/workload.hpp"


namespace iteragpu {

// The rows a request produces: the workload's phase plan.
int phase_row_count(const MeasureConfiguration& request, const Workload& workload);

// Opens `backend` with the workload's model on `device_index`, runs every phase, and closes it whatever happens. `record` is
// called with each row as soon as it is complete (it may throw to stop). A backend failure
// is thrown as the core's error for it (OutOfMemory naming the phase and configuration,
// DeviceUnavailable, UsageError for an unsupported dtype, MeasurementFailed).
void run_phase_protocol(Backend& backend, const MeasureConfiguration& request, const Workload& workload,
                        int device_index, const std::function<void(PhaseRow row)>& record);


}  // namespace iteragpu
