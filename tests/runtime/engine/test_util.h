#pragma once
// Helpers shared by the engine tests.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "flow/runtime/engine/job.h"

namespace flow::rt::testing {

// Runs job.Execute() on another thread; fails the test (instead of hanging) after 60 s.
inline Status ExecuteWithWatchdog(Job& job) {
  auto fut = std::async(std::launch::async, [&job] { return job.Execute(); });
  if (fut.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "job did not finish within 60 s";
    job.RequestStop();
    if (fut.wait_for(std::chrono::seconds(10)) != std::future_status::ready) std::abort();  // a hang: stop here
  }
  return fut.get();
}

}  // namespace flow::rt::testing
