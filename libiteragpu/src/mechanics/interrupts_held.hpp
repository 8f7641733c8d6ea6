#pragma once
// Holds back the interrupting signals (SIGINT, SIGTERM, SIGHUP) for a scope, so that a
// handler never sees half of a step: a temporary file created but not yet registered for
// removal, a file put in place but its commit not yet recorded, a worker's record half
// written. A signal that arrives meanwhile is delivered when the scope ends.

#include <pthread.h>
#include <signal.h>

namespace iteragpu {

class InterruptsHeld {
 public:
  InterruptsHeld() {
    sigset_t interrupting;
    sigemptyset(&interrupting);
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&interrupting, signal_number);
    pthread_sigmask(SIG_BLOCK, &interrupting, &previous_);
  }
  ~InterruptsHeld() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  InterruptsHeld(const InterruptsHeld&) = delete;
  InterruptsHeld& operator=(const InterruptsHeld&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace iteragpu
