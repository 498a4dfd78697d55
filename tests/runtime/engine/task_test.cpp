// Input task state machine with scripted channel contents: barrier alignment blocks channels,
// watermarks are min-combined, idleness and end of input are forwarded.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "flow/runtime/engine/task.h"

namespace flow::rt {
namespace {

// "r<v>", "w<wm>", "wmax", "idle", "active", "b<id>", "c<id>" (cancel marker), "e<drained>".
class Recorder final : public BatchConsumer<int> {
 public:
  Status ConsumeView(const Batch<int>& b) override {
    for (int v : b.records) Add('r', v);
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm) override {
    if (wm == kMaxWatermark) {
      events.push_back("wmax");
    } else {
      Add('w', wm);
    }
    return Status::Ok();
  }
  Status OnIdle(bool idle) override {
    events.push_back(idle ? "idle" : "active");
    return Status::Ok();
  }
  Status OnBarrier(int64_t id) override {
    Add('b', id);
    return Status::Ok();
  }
  Status OnEnd(bool drained) override {
    Add('e', drained ? 1 : 0);
    return Status::Ok();
  }
  Status OnCancelCheckpoint(int64_t id) override {
    Add('c', id);
    return Status::Ok();
  }
  std::vector<std::string> events;

 private:
  void Add(char kind, int64_t v) {
    std::string s(1, kind);
    s += std::to_string(v);
    events.push_back(s);
  }
};

struct Element1 {
  ElementKind kind;
  int64_t value;  // record value for kBatch
};

// Builds an input task over channels pre-filled with `script[i]`, runs it to the end.
std::vector<std::string> RunScript(const std::vector<std::vector<Element1>>& script,
                                   Status* status = nullptr) {
  auto gate = std::make_unique<InputGate>();
  std::vector<std::unique_ptr<Channel<int>>> channels;
  Recorder rec;
  std::vector<std::unique_ptr<ChannelBindingBase>> bindings;
  for (const auto& elements : script) {
    channels.push_back(std::make_unique<Channel<int>>(gate.get(), 64));
    gate->Add(channels.back().get());
    bindings.push_back(std::make_unique<ChannelBinding<int>>(channels.back().get(), &rec));
    for (const Element1& e : elements) {
      if (e.kind == ElementKind::kBatch) {
        Batch<int> b;
        b.Add(static_cast<int>(e.value), 0);
        EXPECT_TRUE(channels.back()->PushBatch(b).ok());
      } else {
        EXPECT_TRUE(channels.back()->PushControl(e.kind, e.value).ok());
      }
    }
  }
  Metric wm;
  InputTask task("t", 0, std::move(gate), std::move(bindings), &rec, &wm);
  Status s = task.Run();
  if (status) *status = s;
  EXPECT_TRUE(s.ok()) << s.ToString();
  return rec.events;
}

size_t IndexOf(const std::vector<std::string>& ev, const std::string& e) {
  auto it = std::find(ev.begin(), ev.end(), e);
  EXPECT_NE(it, ev.end()) << "missing " << e;
  return static_cast<size_t>(it - ev.begin());
}

constexpr ElementKind B = ElementKind::kBatch;
constexpr ElementKind W = ElementKind::kWatermark;
constexpr ElementKind Bar = ElementKind::kBarrier;
constexpr ElementKind End = ElementKind::kEnd;

TEST(InputTaskTest, BarrierAlignmentHoldsBackChannelsThatDeliveredIt) {
  auto ev = RunScript({
      {{B, 1}, {Bar, 5}, {B, 2}, {B, 3}, {End, 1}},
      {{B, 10}, {B, 11}, {B, 12}, {Bar, 5}, {B, 13}, {End, 1}},
  });
  size_t barrier = IndexOf(ev, "b5");
  for (const char* before : {"r1", "r10", "r11", "r12"})
    EXPECT_LT(IndexOf(ev, before), barrier) << before;
  for (const char* after : {"r2", "r3", "r13"}) EXPECT_GT(IndexOf(ev, after), barrier) << after;
  EXPECT_EQ(std::count(ev.begin(), ev.end(), "b5"), 1);
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[ev.size() - 2], "wmax");
  EXPECT_EQ(ev.back(), "e1");
}

TEST(InputTaskTest, EndedChannelDoesNotBlockAlignment) {
  auto ev = RunScript({
      {{B, 1}, {End, 1}},
      {{B, 10}, {Bar, 7}, {B, 11}, {End, 1}},
  });
  EXPECT_LT(IndexOf(ev, "b7"), IndexOf(ev, "r11"));
}

TEST(InputTaskTest, WatermarksAreMinCombinedAndIncreasing) {
  auto ev = RunScript({
      {{W, 100}, {W, 300}, {W, 500}, {End, 1}},
      {{W, 200}, {W, 250}, {W, 400}, {W, 600}, {End, 1}},
  });
  std::vector<int64_t> wms;
  for (const auto& e : ev) {
    if (e[0] == 'w' && e != "wmax") wms.push_back(std::stoll(e.substr(1)));
  }
  ASSERT_FALSE(wms.empty());
  for (size_t i = 1; i < wms.size(); ++i) EXPECT_LT(wms[i - 1], wms[i]);
  // Every emitted value is a channel watermark and never above what both channels had reached:
  // 600 and 500 can only come after channel 0 ended.
  for (int64_t w : wms)
    EXPECT_TRUE(w == 100 || w == 200 || w == 250 || w == 300 || w == 400 || w == 500 || w == 600)
        << w;
  EXPECT_EQ(ev.back(), "e1");
}

TEST(InputTaskTest, IdlenessIsForwardedWhenAllChannelsAreIdle) {
  auto ev = RunScript({
      {{ElementKind::kIdle, 0}, {B, 1}, {ElementKind::kActive, 0}, {End, 1}},
      {{ElementKind::kIdle, 0}, {End, 1}},
  });
  size_t idle = IndexOf(ev, "idle");
  size_t active = IndexOf(ev, "active");
  EXPECT_LT(idle, active);
}

TEST(InputTaskTest, NewerBarrierAbortsTheAlignmentAndForwardsACancelMarker) {
  auto ev = RunScript({
      {{Bar, 1}, {B, 2}, {Bar, 2}, {End, 1}},
      {{B, 10}, {Bar, 2}, {B, 11}, {End, 1}},
  });
  EXPECT_EQ(std::count(ev.begin(), ev.end(), "b1"), 0) << "checkpoint 1 was abandoned";
  EXPECT_EQ(std::count(ev.begin(), ev.end(), "c1"), 1);
  EXPECT_EQ(std::count(ev.begin(), ev.end(), "b2"), 1);
  EXPECT_LT(IndexOf(ev, "c1"), IndexOf(ev, "b2"));
  EXPECT_LT(IndexOf(ev, "r2"), IndexOf(ev, "b2"));   // channel 0 was unblocked by the abort
  EXPECT_GT(IndexOf(ev, "r11"), IndexOf(ev, "b2"));  // channel 1 held back while aligning 2
}

TEST(InputTaskTest, CancelMarkerAbortsTheAlignmentOnce) {
  auto ev = RunScript({
      {{Bar, 3}, {B, 1}, {End, 1}},
      {{ElementKind::kCancelCheckpoint, 3}, {B, 2}, {ElementKind::kCancelCheckpoint, 3}, {End, 1}},
  });
  EXPECT_EQ(std::count(ev.begin(), ev.end(), "b3"), 0);
  EXPECT_EQ(std::count(ev.begin(), ev.end(), "c3"), 1) << "a repeated cancel marker is stale";
  IndexOf(ev, "r1");
  IndexOf(ev, "r2");
}

TEST(InputTaskTest, StoppedInputEndsWithoutMaxWatermark) {
  auto ev = RunScript({
      {{B, 1}, {W, 10}, {End, 0}},
      {{W, 20}, {End, 1}},
  });
  EXPECT_EQ(std::count(ev.begin(), ev.end(), "wmax"), 0);
  EXPECT_EQ(ev.back(), "e0");
}

}  // namespace
}  // namespace flow::rt
