// KafkaSource as a consumer-group member across an in-process restart of its job (LABEL kafka;
// scripts/kafka start). With the engine's RunHandover the restarted source continues as the same
// member: the other instance's partitions do not move, and the member's own partitions are read
// again from their committed offsets. Without one (the control) the restart leaves and rejoins
// the group, and the other instance's partitions move: what made two instances restart each other
// for ever (docs/exactly-once.md, "Partitions that move").

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/common/run_handover.h"
#include "flow/runtime/connectors/kafka_source.h"
#include "kafka/kafka_test_env.h"

namespace flow::rt {
namespace {

using Clock = std::chrono::steady_clock;
using Position = std::pair<int32_t, int64_t>;  // partition, offset

constexpr int kPartitions = 4;
constexpr int kPerPartition = 100;

std::set<int32_t> Partitions(const KafkaSource& source) {
  std::set<int32_t> out;
  for (const auto& [p, next] : source.positions()) out.insert(p);
  return out;
}

// One Poll; the positions of the records it returned.
std::vector<Position> PollOnce(KafkaSource* source, size_t max = 64, int timeout_ms = 50) {
  std::vector<RawRecord> records;
  Result<PollResult> r = source->Poll(&records, max, timeout_ms);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::vector<Position> out;
  for (const RawRecord& rec : records) out.emplace_back(rec.partition, rec.offset);
  return out;
}

class KafkaGroupMemberTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    Status reachable = kafka_.CheckReachable(test::Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
    Result<std::string> topic = kafka_.CreateUniqueTopic("member", kPartitions);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    topic_ = *topic;
    job_ = test::UniqueName("member-job");
  }

  std::unique_ptr<KafkaSource> Member(const std::string& instance, RunHandover* handover) {
    KafkaSourceOptions o;
    o.brokers = kafka_.brokers();
    o.topic = topic_;
    // Long enough that only a leave (never a timeout) can move partitions during the test.
    o.properties["session.timeout.ms"] = "30000";
    auto source = std::make_unique<KafkaSource>(o);
    ConnectorContext context;
    context.job_id = job_;
    context.operator_name = "input";
    context.instance = instance;
    context.handover = handover;
    source->Bind(context);
    return source;
  }

  // Polls `a` and `b` until each holds kPartitions / 2 partitions (cooperative-sticky).
  void Settle(KafkaSource* a, KafkaSource* b) {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline) {
      PollOnce(a);  // polls serve the rebalances; no record is there yet
      PollOnce(b);
      if (Partitions(*a).size() == kPartitions / 2 && Partitions(*b).size() == kPartitions / 2)
        return;
    }
    FAIL() << "the group did not give each member two partitions within 60 s";
  }

  void ProduceAll() {
    std::vector<test::KafkaRecord> records;
    for (int i = 0; i < kPartitions * kPerPartition; ++i) {
      records.push_back(
          {i % kPartitions, fmt::format("k{}", i), fmt::format("{{\"i\":{}}}", i), -1});
    }
    Status s = kafka_.Produce(topic_, records);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  test::KafkaTestEnv kafka_;
  std::string topic_, job_;
};

TEST_P(KafkaGroupMemberTest, ARestartKeepsOtherInstancesPartitionsWhereTheyAre) {
  const bool handover_on = GetParam();
  RunHandover handover;
  RunHandover* kept = handover_on ? &handover : nullptr;
  std::unique_ptr<KafkaSource> a = Member("a", kept);
  std::unique_ptr<KafkaSource> b = Member("b", kept);
  ASSERT_TRUE(a->Open(0, 1).ok());
  ASSERT_TRUE(b->Open(0, 1).ok());
  ASSERT_NO_FATAL_FAILURE(Settle(a.get(), b.get()));
  const std::set<int32_t> mine = Partitions(*a), theirs = Partitions(*b);
  ASSERT_NO_FATAL_FAILURE(ProduceAll());

  // a reads half of its records, checkpoints, reads the rest; the checkpoint's offsets are
  // committed (at-least-once: by the source itself, once the checkpoint completes).
  std::vector<Position> before, after;
  const size_t half = kPerPartition * mine.size() / 2;
  for (auto deadline = Clock::now() + std::chrono::seconds(60);
       before.size() < half && Clock::now() < deadline;) {
    for (const Position& p : PollOnce(a.get(), half - before.size())) before.push_back(p);
    PollOnce(b.get(), 64, 0);
  }
  ASSERT_EQ(before.size(), half);
  ASSERT_TRUE(a->OnCheckpoint(1).ok());
  for (auto deadline = Clock::now() + std::chrono::seconds(60);
       after.size() < half && Clock::now() < deadline;) {
    for (const Position& p : PollOnce(a.get())) after.push_back(p);
    PollOnce(b.get(), 64, 0);
  }
  ASSERT_EQ(after.size(), half);
  ASSERT_TRUE(a->OnCheckpointComplete(1).ok());
  for (auto until = Clock::now() + std::chrono::seconds(2); Clock::now() < until;) {
    PollOnce(a.get(), 64, 50);  // the asynchronous commit goes out meanwhile
    PollOnce(b.get(), 64, 0);
  }

  // a's own task ends the run (as a repartition source does to adopt a partition's state) and
  // the engine restarts at once: a new source of the same member. Without the handover a source
  // cannot tell this from a stop, and leaves the group.
  ASSERT_TRUE(a->Close().ok());
  a.reset();
  EXPECT_EQ(handover.size(), handover_on ? 1u : 0u);
  // A restart takes a moment (building the job, restoring its state): b polls meanwhile.
  bool b_moved = false;
  for (auto until = Clock::now() + std::chrono::seconds(3); Clock::now() < until;) {
    PollOnce(b.get());
    if (Partitions(*b) != theirs) b_moved = true;
  }
  a = Member("a", kept);
  ASSERT_TRUE(a->Open(0, 1).ok());
  EXPECT_EQ(handover.size(), 0u);

  // For 8 s both poll; b's partitions must stay b's, and with the handover the restarted a holds
  // what it held and reads, from the committed offsets, exactly what it had read after them.
  std::vector<Position> again;
  for (auto until = Clock::now() + std::chrono::seconds(8); Clock::now() < until;) {
    for (const Position& p : PollOnce(a.get())) again.push_back(p);
    PollOnce(b.get(), 64, 0);
    if (Partitions(*b) != theirs) b_moved = true;
  }
  if (!handover_on) {
    EXPECT_TRUE(b_moved) << "control: a restart that leaves and rejoins moves b's partitions";
    return;
  }
  EXPECT_FALSE(b_moved);
  EXPECT_EQ(Partitions(*a), mine);
  std::sort(after.begin(), after.end());
  std::sort(again.begin(), again.end());
  EXPECT_EQ(again, after) << "read again: exactly the records after the committed offsets";
  EXPECT_FALSE(a->SplitsPending()) << "each partition reported its end again after the seek";

  // A stop after a restart: the engine drops the kept member as stopping, and it leaves, so b
  // gets every partition at once (a close alone would hold them until the 30 s session ended).
  ASSERT_TRUE(a->Close().ok());
  a.reset();
  ASSERT_EQ(handover.size(), 1u);
  handover.DropAll(/*stopping=*/true);
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  while (Partitions(*b).size() < kPartitions && Clock::now() < deadline) PollOnce(b.get(), 64);
  EXPECT_EQ(Partitions(*b).size(), static_cast<size_t>(kPartitions));
  EXPECT_TRUE(b->Close().ok());
}

INSTANTIATE_TEST_SUITE_P(HandoverAndControl, KafkaGroupMemberTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("KeptAcrossTheRestart")
                                             : std::string("ControlLeavesAndRejoins");
                         });

}  // namespace
}  // namespace flow::rt
