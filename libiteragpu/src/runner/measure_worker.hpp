#pragma once
// The body of the measurement worker executable (libiteragpu/worker/): one measurement in
// a fresh process, spoken to through worker_protocol.hpp.

namespace iteragpu {

// Reads the request on stdin, measures, reports on the original stdout; returns the exit
// code (that of the error class, 0 on success).
int run_measure_worker();

}  // namespace iteragpu
