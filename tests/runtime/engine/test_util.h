#pragma once
// Helpers shared by the engine tests.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/engine/job.h"

namespace flow::rt::testing {

// Runs job.Execute() on another thread; fails the test (instead of hanging) after 60 s.
inline Status ExecuteWithWatchdog(Job& job) {
  auto fut = std::async(std::launch::async, [&job] { return job.Execute(); });
  if (fut.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "job did not finish within 60 s";
    job.RequestStop();
    if (fut.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
      std::abort();  // a hang: stop here
  }
  return fut.get();
}

// Newest checkpoint of `state_dir` whose metadata is written (complete); 0 when none.
inline int64_t NewestCompleteCheckpoint(const std::filesystem::path& state_dir) {
  int64_t newest = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(state_dir, ec)) {
    const int64_t id = ParseCheckpointDir(e.path().filename().string());
    if (id > newest && std::filesystem::exists(e.path() / "_metadata", ec)) newest = id;
  }
  return newest;
}

}  // namespace flow::rt::testing
