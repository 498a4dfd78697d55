// The input task tells its chain that the input went quiet (OnInputQuiet, which lets sinks write
// out what they buffer) once no element has been ready for kInputQuietMs after records flowed,
// and not while elements are ready back to back. The loop dates the last element only when the
// input runs dry (no clock read per element); these tests pin what that must keep.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flow/runtime/engine/task.h"

namespace flow::rt {
namespace {

// Records "r<v>", "quiet" and "e" in order; thread-safe so the test can wait for events.
class QuietRecorder final : public BatchConsumer<int> {
 public:
  Status ConsumeView(const Batch<int>& b) override {
    for (int v : b.records) {
      std::string e = "r";
      e += std::to_string(v);
      Push(std::move(e));
    }
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs) override { return Status::Ok(); }
  Status OnIdle(bool) override { return Status::Ok(); }
  Status OnBarrier(int64_t) override { return Status::Ok(); }
  Status OnEnd(bool) override {
    Push("e");
    return Status::Ok();
  }
  Status OnInputQuiet() override {
    Push("quiet");
    return Status::Ok();
  }

  // Waits (bounded, so a missing event fails instead of hanging) until `event` was recorded
  // `times` times.
  bool WaitFor(const std::string& event, long times = 1) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30),
                        [&] { return std::count(events_.begin(), events_.end(), event) >= times; });
  }
  std::vector<std::string> events() {
    std::lock_guard lock(mu_);
    return events_;
  }

 private:
  void Push(std::string e) {
    {
      std::lock_guard lock(mu_);
      events_.push_back(std::move(e));
    }
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
};

Status PushRecord(Channel<int>* channel, int v) {
  Batch<int> b;
  b.Add(v, 0);
  return channel->PushBatch(b);
}

TEST(InputQuietTest, QuietIsSignalledOnceAfterTheInputRanDryAndNotBetweenReadyElements) {
  auto gate = std::make_unique<InputGate>();
  Channel<int> channel(gate.get(), 64);
  gate->Add(&channel);
  QuietRecorder rec;
  std::vector<std::unique_ptr<ChannelBindingBase>> bindings;
  bindings.push_back(std::make_unique<ChannelBinding<int>>(&channel, &rec));
  // Ready before the task starts: read back to back, with no quiet period in between.
  for (int v = 1; v <= 3; ++v) ASSERT_TRUE(PushRecord(&channel, v).ok());
  Metric wm;
  InputTask task("t", 0, std::move(gate), std::move(bindings), &rec, &wm);
  task.SetMembers({&rec});
  Status result;
  std::thread runner([&] { result = task.Run(); });

  ASSERT_TRUE(rec.WaitFor("quiet")) << "no quiet signal after the input ran dry";
  // A second quiet period needs records first.
  ASSERT_TRUE(PushRecord(&channel, 4).ok());
  ASSERT_TRUE(rec.WaitFor("quiet", 2)) << "no quiet signal after the second record";
  ASSERT_TRUE(channel.PushControl(ElementKind::kEnd, 1).ok());
  runner.join();
  ASSERT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(rec.events(),
            (std::vector<std::string>{"r1", "r2", "r3", "quiet", "r4", "quiet", "e"}));
}

}  // namespace
}  // namespace flow::rt
