#pragma once
// The message of the exception `action` throws, checked to be of type Exception: a test
// failure (and "") when it throws something else or nothing.

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>

namespace iteragpu::testing {

template <typename Exception>
std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Exception& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception";
  return "";
}

}  // namespace iteragpu::testing
