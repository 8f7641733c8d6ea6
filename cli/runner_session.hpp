#pragma once
// What `measure` and `sweep` share while the core's MeasurementRunner works: SIGINT, SIGTERM
// and SIGHUP turned into a cancellation the runner polls (its workers stop between phases, writing
// nothing; a second signal acts as usual), and one status line on stderr.

#include <signal.h>

#include <string>

namespace iteragpu::cli {

class InterruptHandlers {
 public:
  InterruptHandlers();
  ~InterruptHandlers();
  // A signal arrived while these handlers were installed.
  static bool received();
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
  struct sigaction previous_hangup_ {};
};

// One status line on stderr, rewritten in place; only where escape codes may go (a
// terminal, without NO_COLOR or TERM=dumb).
class ProgressLine {
 public:
  ProgressLine();
  void show(const std::string& text);
  void clear();
  bool enabled() const { return enabled_; }
  ~ProgressLine() { clear(); }

 private:
  bool enabled_;
  bool shown_ = false;
};

}  // namespace iteragpu::cli
