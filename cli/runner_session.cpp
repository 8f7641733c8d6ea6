#include "runner_session.hpp"

#include <unistd.h>

#include <atomic>
#include <iostream>

#include "iteragpu/terminal.hpp"

namespace iteragpu::cli {
namespace {

std::atomic<bool> interrupt_received{false};
static_assert(std::atomic<bool>::is_always_lock_free);

}  // namespace

InterruptHandlers::InterruptHandlers() {
  interrupt_received.store(false);
  struct sigaction action {};
  action.sa_handler = [](int) { interrupt_received.store(true); };
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, &previous_interrupt_);
  sigaction(SIGTERM, &action, &previous_terminate_);
  sigaction(SIGHUP, &action, &previous_hangup_);
}

InterruptHandlers::~InterruptHandlers() {
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
  sigaction(SIGHUP, &previous_hangup_, nullptr);
}

bool InterruptHandlers::received() { return interrupt_received.load(); }

ProgressLine::ProgressLine() : enabled_(may_use_escape_codes(STDERR_FILENO)) {}

void ProgressLine::show(const std::string& text) {
  if (!enabled_) return;
  std::cerr << "\r\033[K" << text << std::flush;
  shown_ = true;
}

void ProgressLine::clear() {
  if (shown_) std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace iteragpu::cli
