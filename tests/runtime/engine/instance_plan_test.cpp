// Job::CheckInstancePlan: which plans may run as instances of a job scaled out through Kafka
// (--instance, docs/deploy.md). Records stay within their partition's instance, so only stateless
// steps over forward and rebalance edges are allowed, and keyed state only behind a key-by cut
// through a repartition topic (engine/shuffle_key_by.h; building the graph contacts no broker).

#include <gtest/gtest.h>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/shuffle_key_by.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "test_util.h"

namespace flow::rt {
namespace {

// Keeps a running sum: state that would be split among instances.
class RunningSum final : public OneInputOperator<int64_t, int64_t> {
 public:
  Status ProcessBatch(const Batch<int64_t>& batch, Output<int64_t>& out) override {
    for (size_t i = 0; i < batch.size(); ++i)
      out.Emit(sum_ += batch.records[i], batch.timestamps[i]);
    return Status::Ok();
  }

 private:
  int64_t sum_ = 0;
};

JobOptions InstanceOptions() {
  JobOptions o;
  o.parallelism = 2;
  o.instance = "a";
  return o;
}

JobOptions ShuffleOptions() {
  JobOptions o = InstanceOptions();
  o.job_id = "plan-test";
  o.shuffle_brokers = "127.0.0.1:1";  // never contacted: the graph is only built and checked
  return o;
}

uint64_t HashOf(const int64_t& v) {
  return StableHash(v);
}

// A record type with no binary encoding (no Serializer): it cannot cross between processes.
struct Opaque {
  int64_t v = 0;
};

TEST(InstancePlanTest, StatelessStepsOverForwardAndRebalanceEdgesMayRun) {
  Job job(InstanceOptions());
  auto collected = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1, 2, 3}))
      .Filter("odd", [](const int64_t& v) { return v % 2 == 1; })
      .Map<int64_t>("double", [](const int64_t& v) { return 2 * v; })
      .Rebalance()
      .Sink("out", CollectingSinkFactory(collected), 3);
  EXPECT_TRUE(job.CheckInstancePlan().ok()) << job.CheckInstancePlan().ToString();
}

TEST(InstancePlanTest, KeyByIsRefusedNamingTheOperator) {
  Job job(InstanceOptions());
  auto collected = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1, 2, 3}))
      .KeyBy("n", [](const int64_t& v) { return StableHash(v); })
      .Map<int64_t>("per-key", [](const int64_t& v) { return v; })
      .Sink("out", CollectingSinkFactory(collected));
  Status s = job.CheckInstancePlan();
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      s.message().find("operator 'per-key' needs records from every partition of its input (a "
                       "key-by exchange)"),
      std::string::npos)
      << s.message();
}

TEST(InstancePlanTest, StatefulOperatorOnAForwardEdgeIsRefused) {
  Job job(InstanceOptions());
  auto collected = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1, 2, 3}))
      .Then<int64_t>("sum", [] { return std::make_unique<RunningSum>(); })
      .Sink("out", CollectingSinkFactory(collected));
  Status s = job.CheckInstancePlan();
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("operator 'sum' keeps state across records"), std::string::npos)
      << s.message();
  // The same job as one process is fine.
  JobOptions one;
  one.parallelism = 2;
  Job single(one);
  single.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1, 2, 3}))
      .Then<int64_t>("sum", [] { return std::make_unique<RunningSum>(); })
      .Sink("out", CollectingSinkFactory(collected));
  EXPECT_TRUE(single.CheckInstancePlan().ok());
}

TEST(InstancePlanTest, UnionOfTwoSourcesMayRun) {
  Job job(InstanceOptions());
  auto collected = std::make_shared<Collected<int64_t>>();
  auto a = job.Source<int64_t>("a", VectorSourceFactory<int64_t>({1}));
  auto b = job.Source<int64_t>("b", VectorSourceFactory<int64_t>({2}));
  a.Union("both", {b}).Sink("out", CollectingSinkFactory(collected));
  Status s = job.CheckInstancePlan();
  // A union keeps no state and both inputs stay within the instance.
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(InstancePlanTest, AKeyByThroughARepartitionTopicMayFeedAStatefulOperator) {
  auto collected = std::make_shared<Collected<int64_t>>();
  Job job(ShuffleOptions());
  auto nums = job.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1, 2, 3}))
                  .Filter("odd", [](const int64_t& v) { return v % 2 == 1; });
  auto keyed = KeyByAcrossInstances(job, nums, "sum", "n", &HashOf);
  ASSERT_TRUE(keyed.ok()) << keyed.status().ToString();
  EXPECT_TRUE(keyed->keyed());
  EXPECT_NE(keyed->node(), nums.node()) << "the key-by reads a repartition topic's reader";
  keyed->Then<int64_t>("sum", [] { return std::make_unique<RunningSum>(); })
      .Sink("out", CollectingSinkFactory(collected));
  Status s = job.CheckInstancePlan();
  EXPECT_TRUE(s.ok()) << s.ToString();

  // As one process the same call is a plain key-by: no topic, no new operators.
  JobOptions one;
  one.parallelism = 2;
  Job single(one);
  auto in = single.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1, 2, 3}));
  auto local = KeyByAcrossInstances(single, in, "sum", "n", &HashOf);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->node(), in.node());
  EXPECT_TRUE(local->keyed());
}

TEST(InstancePlanTest, ACutNeedsShuffleBrokersAndAValidPartitionCount) {
  JobOptions o = ShuffleOptions();
  o.shuffle_brokers = "";
  Job job(o);
  auto nums = job.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1}));
  auto keyed = KeyByAcrossInstances(job, nums, "sum", "n", &HashOf);
  ASSERT_EQ(keyed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(keyed.status().message().find("--instance a: operator 'sum' (key by n)"),
            std::string::npos)
      << keyed.status().message();
  EXPECT_NE(keyed.status().message().find("give --shuffle-brokers"), std::string::npos);

  JobOptions many = ShuffleOptions();
  many.shuffle_partitions = 200;  // more than the 128 key groups
  Job job2(many);
  auto nums2 = job2.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1}));
  auto keyed2 = KeyByAcrossInstances(job2, nums2, "sum", "n", &HashOf);
  ASSERT_EQ(keyed2.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(keyed2.status().message().find("--shuffle-partitions"), std::string::npos)
      << keyed2.status().message();

  Job job3(ShuffleOptions());
  auto nums3 = job3.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1}));
  auto keyed3 = KeyByAcrossInstances(job3, nums3, "per user", "n", &HashOf);
  ASSERT_EQ(keyed3.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(keyed3.status().message().find("operator 'per user'"), std::string::npos)
      << keyed3.status().message();
}

TEST(InstancePlanTest, TheCutsWriterNeedsAForwardPathFromItsSources) {
  // A rebalance in front of the key-by: the writer's subtask would not see its source subtask's
  // records only, and its progress reports would be wrong.
  Job job(ShuffleOptions());
  auto spread = job.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1}))
                    .Rebalance()
                    .Map<int64_t>("double", [](const int64_t& v) { return 2 * v; });
  auto keyed = KeyByAcrossInstances(job, spread, "sum", "n", &HashOf);
  ASSERT_EQ(keyed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(keyed.status().message().find("the edge 'nums' -> 'double' is a rebalance"),
            std::string::npos)
      << keyed.status().message();

  // Behind a keyed operator that reads another cut, a rebalance in front of the second key-by:
  // the writer's subtask would not hold its keyed subtask's key groups only.
  Job spread2(ShuffleOptions());
  auto first = KeyByAcrossInstances(
      spread2, spread2.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1})), "sum", "n",
      &HashOf);
  ASSERT_TRUE(first.ok());
  auto moved = first->Then<int64_t>("sum", [] { return std::make_unique<RunningSum>(); })
                   .Rebalance()
                   .Map<int64_t>("half", [](const int64_t& v) { return v / 2; });
  auto second = KeyByAcrossInstances(spread2, moved, "sum2", "n", &HashOf);
  ASSERT_EQ(second.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(second.status().message().find("the edge 'sum' -> 'half' is a rebalance"),
            std::string::npos)
      << second.status().message();
}

// Two key-bys in a row (a window behind a window or a join): the second cut's writer reports the
// key groups of the first cut's reader, and its reader combines them; the plan may run.
TEST(InstancePlanTest, ASecondKeyByBehindAKeyedOperatorThatReadsACutMayRun) {
  auto collected = std::make_shared<Collected<int64_t>>();
  Job twice(ShuffleOptions());
  auto nums = twice.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1}));
  auto first = KeyByAcrossInstances(twice, nums, "sum", "n", &HashOf);
  ASSERT_TRUE(first.ok());
  auto summed = first->Then<int64_t>("sum", [] { return std::make_unique<RunningSum>(); })
                    .Map<int64_t>("half", [](const int64_t& v) { return v / 2; });
  auto from = twice.ForwardSourcesOf(summed.node(), "test");
  ASSERT_TRUE(from.ok()) << from.status().ToString();
  EXPECT_TRUE(from->sources.empty());
  EXPECT_EQ(from->readers, std::vector<std::string>{"sum.shuffle"});
  auto second = KeyByAcrossInstances(twice, summed, "sum2", "n", &HashOf);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_NE(second->node(), summed.node()) << "the second key-by reads its own topic";
  second->Then<int64_t>("sum2", [] { return std::make_unique<RunningSum>(); })
      .Sink("out", CollectingSinkFactory(collected));
  Status s = twice.CheckInstancePlan();
  EXPECT_TRUE(s.ok()) << s.ToString();

  // A source joined in front of the second key-by reports its own splits next to the reader's.
  Job mixed(ShuffleOptions());
  auto keyed = KeyByAcrossInstances(
      mixed, mixed.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1})), "sum", "n", &HashOf);
  ASSERT_TRUE(keyed.ok());
  auto sums = keyed->Then<int64_t>("sum", [] { return std::make_unique<RunningSum>(); });
  auto more = mixed.Source<int64_t>("more", VectorSourceFactory<int64_t>({2}));
  auto both = mixed.ForwardSourcesOf(sums.Union("both", {more}).node(), "test");
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->sources, std::vector<std::string>{"more"});
  EXPECT_EQ(both->readers, std::vector<std::string>{"sum.shuffle"});
  EXPECT_EQ(both->Names(), (std::vector<std::string>{"more", "sum.shuffle"}));
}

TEST(InstancePlanTest, RecordsWithoutAnEncodingCannotCross) {
  Job job(ShuffleOptions());
  auto in = job.Source<Opaque>("opaque", VectorSourceFactory<Opaque>({Opaque{1}}));
  auto keyed =
      KeyByAcrossInstances(job, in, "sum", "v", [](const Opaque& o) { return StableHash(o.v); });
  ASSERT_EQ(keyed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(keyed.status().message().find("no binary encoding"), std::string::npos)
      << keyed.status().message();
}

// Without --state-root an instance cannot read another's checkpoints: it may read a repartition
// partition only if it committed it last (or nobody did).
TEST(InstancePlanTest, ARepartitionPartitionCommittedByAnotherInstanceIsNotTakenOver) {
  EXPECT_TRUE(CheckRepartitionOwners("t", "b", {{0, ""}, {1, "b/chk-7"}}).ok());
  Status s = CheckRepartitionOwners("t", "b", {{0, "b/chk-7"}, {3, "a/chk-12"}});
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("repartition topic `t` partition 3: instance a committed it last "
                             "(checkpoint 12)"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("which instance b cannot read: give every instance --state-root"),
            std::string::npos)
      << s.message();
  Status foreign = CheckRepartitionOwners("t", "b", {{2, "committed by a tool"}});
  EXPECT_EQ(foreign.code(), StatusCode::kCorruption) << foreign.ToString();
}

}  // namespace
}  // namespace flow::rt
