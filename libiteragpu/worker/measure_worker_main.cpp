// iteragpu-measure-worker: the process each measurement runs in (see
// src/runner/measure_worker.cpp). Started by the measurement runner, never by hand.

#include "runner/measure_worker.hpp"

int main() { return iteragpu::run_measure_worker(); }
