#pragma once
// One row of a measurement's phase table: a phase of the protocol (SPEC §3), its times and
// the caching-allocator counters before and after it. Measured rows, predicted rows and rows
// streamed by a worker all have this shape.

#include <optional>
#include <string>

#include "iteragpu/backend.hpp"

namespace iteragpu {

struct PhaseRow {
  // The synthetic MLP: model_load | inputs | cold_forward | warmup | warm_forward.
  // A checkpoint (the decoder workload): weights_load | inputs | prefill | decode.
  std::string phase;
  int repeat = 0;         // 1-based for warm_forward and warmup/warm sequences, 0 otherwise
  int forwards = 0;       // forward passes inside the phase
  // Decoder rows only: the sequence the row belongs to (cold, then warmup, then warm) and
  // the decode step (0 for the prefill); empty and none for the synthetic MLP's rows.
  std::string sequence;
  std::optional<int> step;
  double host_seconds = 0;  // host wall clock, overhead and synchronization included
  std::optional<double> gpu_event_seconds;  // between GPU events around the phase's work
  AllocatorCounters baseline;  // allocated/reserved before (peaks unused)
  AllocatorCounters end;       // allocated/reserved after, and the peaks during the phase
};

}  // namespace iteragpu
