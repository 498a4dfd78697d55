// Channel and input gate semantics: order, capacity, blocking channels, cancellation, recycling.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "flow/runtime/engine/channel.h"

namespace flow::rt {
namespace {

Batch<int> MakeBatch(std::initializer_list<int> values) {
  Batch<int> b;
  for (int v : values) b.Add(v, v * 10);
  return b;
}

TEST(ChannelTest, KeepsBatchesAndControlInOrder) {
  InputGate gate;
  Channel<int> ch(&gate, 8);
  gate.Add(&ch);
  Batch<int> b1 = MakeBatch({1, 2});
  ASSERT_TRUE(ch.PushBatch(b1).ok());
  EXPECT_TRUE(b1.empty());  // the records moved into the channel
  ASSERT_TRUE(ch.PushControl(ElementKind::kWatermark, 15).ok());
  Batch<int> b2 = MakeBatch({3});
  ASSERT_TRUE(ch.PushBatch(b2).ok());
  ASSERT_TRUE(ch.PushControl(ElementKind::kEnd, 1).ok());
  EXPECT_EQ(ch.Depth(), 4u);

  Element<int> e;
  ASSERT_TRUE(ch.Pop(&e));
  EXPECT_EQ(e.kind, ElementKind::kBatch);
  EXPECT_EQ(e.batch.records, (std::vector<int>{1, 2}));
  EXPECT_EQ(e.batch.timestamps, (std::vector<TimestampMs>{10, 20}));
  ASSERT_TRUE(ch.Pop(&e));
  EXPECT_EQ(e.kind, ElementKind::kWatermark);
  EXPECT_EQ(e.value, 15);
  ASSERT_TRUE(ch.Pop(&e));
  EXPECT_EQ(e.batch.records, (std::vector<int>{3}));
  ASSERT_TRUE(ch.Pop(&e));
  EXPECT_EQ(e.kind, ElementKind::kEnd);
  EXPECT_FALSE(ch.Pop(&e));
  EXPECT_EQ(ch.MaxDepth(), 4u);
}

TEST(ChannelTest, RecycledBufferGoesBackToTheWriter) {
  InputGate gate;
  Channel<int> ch(&gate, 4);
  gate.Add(&ch);
  Batch<int> b = MakeBatch({1, 2, 3});
  ASSERT_TRUE(ch.PushBatch(b).ok());
  Element<int> e;
  ASSERT_TRUE(ch.Pop(&e));
  e.batch.Reserve(100);
  const int* data = e.batch.records.data();
  ch.Recycle(std::move(e.batch));
  Batch<int> next = MakeBatch({4});
  ASSERT_TRUE(ch.PushBatch(next).ok());
  // The writer got the recycled (empty, allocated) buffer back in exchange.
  EXPECT_TRUE(next.empty());
  EXPECT_EQ(next.records.data(), data);
}

TEST(ChannelTest, FullChannelBlocksWriterUntilRead) {
  InputGate gate;
  Channel<int> ch(&gate, 2);
  gate.Add(&ch);
  ASSERT_TRUE(ch.PushControl(ElementKind::kWatermark, 1).ok());
  ASSERT_TRUE(ch.PushControl(ElementKind::kWatermark, 2).ok());
  std::atomic<bool> pushed{false};
  std::thread writer([&] {
    EXPECT_TRUE(ch.PushControl(ElementKind::kWatermark, 3).ok());
    pushed = true;
  });
  // Give the writer a chance to run; whenever it runs, it must wait while the channel is full.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(pushed.load());
  Element<int> e;
  ASSERT_TRUE(ch.Pop(&e));
  EXPECT_EQ(e.value, 1);
  writer.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_LE(ch.MaxDepth(), 2u);
  ASSERT_TRUE(ch.Pop(&e));
  ASSERT_TRUE(ch.Pop(&e));
  EXPECT_EQ(e.value, 3);
}

TEST(InputGateTest, ReadsRoundRobinFromNonEmptyChannels) {
  InputGate gate;
  Channel<int> a(&gate, 4), b(&gate, 4), c(&gate, 4);
  gate.Add(&a);
  gate.Add(&b);
  gate.Add(&c);
  EXPECT_FALSE(gate.PollReady().has_value());
  ASSERT_TRUE(a.PushControl(ElementKind::kWatermark, 1).ok());
  ASSERT_TRUE(a.PushControl(ElementKind::kWatermark, 2).ok());
  ASSERT_TRUE(c.PushControl(ElementKind::kWatermark, 3).ok());
  std::vector<size_t> order;
  Element<int> e;
  while (auto i = gate.PollReady()) {
    order.push_back(*i);
    Channel<int>* ch = *i == 0 ? &a : *i == 1 ? &b : &c;
    ASSERT_TRUE(ch->Pop(&e));
  }
  EXPECT_EQ(order, (std::vector<size_t>{0, 2, 0}));
}

TEST(InputGateTest, BlockedChannelIsSkippedUntilUnblocked) {
  InputGate gate;
  Channel<int> a(&gate, 4), b(&gate, 4);
  gate.Add(&a);
  gate.Add(&b);
  ASSERT_TRUE(a.PushControl(ElementKind::kBarrier, 7).ok());
  ASSERT_TRUE(a.PushControl(ElementKind::kWatermark, 100).ok());
  ASSERT_TRUE(b.PushControl(ElementKind::kWatermark, 5).ok());
  gate.Block(0);
  EXPECT_TRUE(gate.IsBlocked(0));
  Element<int> e;
  auto i = gate.PollReady();
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(*i, 1u);
  ASSERT_TRUE(b.Pop(&e));
  // Only the blocked channel has data: nothing is ready.
  EXPECT_FALSE(gate.PollReady().has_value());
  EXPECT_EQ(a.Depth(), 2u);

  // A blocked reader waiting in WaitReady wakes up when the channel is unblocked.
  std::thread unblocker([&] { gate.Unblock(0); });
  auto r = gate.WaitReady();
  unblocker.join();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 0u);
  EXPECT_FALSE(gate.IsBlocked(0));
  ASSERT_TRUE(a.Pop(&e));
  EXPECT_EQ(e.kind, ElementKind::kBarrier);
}

TEST(InputGateTest, WaitReadyWakesOnPush) {
  InputGate gate;
  Channel<int> a(&gate, 4), b(&gate, 4);
  gate.Add(&a);
  gate.Add(&b);
  std::thread writer([&] {
    Batch<int> x = MakeBatch({9});
    EXPECT_TRUE(b.PushBatch(x).ok());
  });
  auto r = gate.WaitReady();
  writer.join();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 1u);
}

TEST(InputGateTest, CancelWakesBlockedReaderAndWriter) {
  InputGate gate;
  Channel<int> a(&gate, 1);
  gate.Add(&a);
  ASSERT_TRUE(a.PushControl(ElementKind::kWatermark, 1).ok());
  Status writer_status;
  std::thread writer([&] { writer_status = a.PushControl(ElementKind::kWatermark, 2); });
  InputGate empty_gate;
  Channel<int> never(&empty_gate, 1);
  empty_gate.Add(&never);
  Status reader_status;
  std::thread reader([&] { reader_status = empty_gate.WaitReady().status(); });
  gate.Cancel();
  empty_gate.Cancel();
  writer.join();
  reader.join();
  EXPECT_EQ(writer_status.code(), StatusCode::kCancelled);
  EXPECT_EQ(reader_status.code(), StatusCode::kCancelled);
  Batch<int> late = MakeBatch({1});
  EXPECT_EQ(a.PushBatch(late).code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace flow::rt
