#include "flow/runtime/common/bounded_call.h"

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

namespace flow::rt {
namespace {

TEST(RunBounded, ACallThatReturnsInTimeIsWaitedFor) {
  int value = 0;
  EXPECT_TRUE(RunBounded([&] { value = 42; }, 60000));
  EXPECT_EQ(value, 42);  // joined: its effects are visible
}

// The call cannot end before RunBounded has returned (it waits for `release`), so RunBounded
// returning at all shows that it stopped waiting; the call then finishes on its own thread.
TEST(RunBounded, ACallThatDoesNotEndIsLeftRunningAfterTheBound) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  EXPECT_FALSE(RunBounded(
      [released, finished] {
        released.wait();
        finished->store(true);
      },
      50));
  EXPECT_FALSE(finished->load());
  release.set_value();
  for (int i = 0; i < 6000 && !finished->load(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(finished->load());
}

}  // namespace
}  // namespace flow::rt
