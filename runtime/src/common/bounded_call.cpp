#include "flow/runtime/common/bounded_call.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace flow::rt {

bool RunBounded(std::function<void()> call, int64_t bound_ms) {
  // Shared with the thread, which may outlive this frame.
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto state = std::make_shared<State>();
  std::thread worker([state, call = std::move(call)] {
    call();
    std::lock_guard<std::mutex> lock(state->mu);
    state->done = true;
    state->cv.notify_all();
  });
  bool done = false;
  {
    std::unique_lock<std::mutex> lock(state->mu);
    done =
        state->cv.wait_for(lock, std::chrono::milliseconds(bound_ms), [&] { return state->done; });
  }
  if (done) {
    worker.join();
  } else {
    worker.detach();
  }
  return done;
}

}  // namespace flow::rt
