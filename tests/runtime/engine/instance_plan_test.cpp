// Job::CheckInstancePlan: which plans may run as instances of a job scaled out through Kafka
// (--instance, docs/deploy.md). Records stay within their partition's instance, so only stateless
// steps over forward and rebalance edges are allowed.

#include <gtest/gtest.h>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"
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

}  // namespace
}  // namespace flow::rt
