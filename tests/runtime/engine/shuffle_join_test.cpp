// JoinAcrossInstances (engine/shuffle_join.h): a join is a plain keyed two-input operator in one
// process, and under --instance a one-input operator behind one repartition topic that carries
// both sides; JoinInputsOperator hands it each side's records in the order they came. Building
// the graph contacts no broker (the end-to-end runs are tests/chaos/scale_out_keyed_test.cpp).

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/shuffle_join.h"
#include "flow/runtime/engine/shuffle_key_by.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/shuffle/repartition_frame.h"

namespace flow::rt {
namespace {

// Records what reaches it: "L1,2" for a left batch of 1 and 2, "W9" for a watermark.
class Recorder final : public TwoInputOperator<int64_t, std::string, int64_t> {
 public:
  explicit Recorder(std::vector<std::string>* calls) : calls_(calls) {}
  Status ProcessBatch1(const Batch<int64_t>& b, Output<int64_t>&) override {
    std::string s = "L";
    for (size_t i = 0; i < b.size(); ++i)
      s += (i ? "," : "") + std::to_string(b.records[i]) + "@" + std::to_string(b.timestamps[i]);
    calls_->push_back(s);
    return Status::Ok();
  }
  Status ProcessBatch2(const Batch<std::string>& b, Output<int64_t>&) override {
    std::string s = "R";
    for (size_t i = 0; i < b.size(); ++i)
      s += (i ? "," : "") + b.records[i] + "@" + std::to_string(b.timestamps[i]);
    calls_->push_back(s);
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm, Output<int64_t>&) override {
    calls_->push_back("W" + std::to_string(wm));
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override {
    out->PutI64(42);
    return Status::Ok();
  }
  Status RestoreState(BinaryReader* in) override {
    int64_t v = 0;
    FLOW_RETURN_IF_ERROR(in->GetI64(&v));
    calls_->push_back("restored " + std::to_string(v));
    return Status::Ok();
  }

 private:
  std::vector<std::string>* calls_;
};

TEST(JoinInputsOperatorTest, EachRunOfOneSideIsOneBatchOfThatSideInArrivalOrder) {
  std::vector<std::string> calls;
  JoinInputsOperator<int64_t, std::string, int64_t> op(std::make_unique<Recorder>(&calls));
  using In = JoinInput<int64_t, std::string>;
  Batch<In> batch;
  batch.Add(In(std::in_place_index<0>, 1), 10);
  batch.Add(In(std::in_place_index<0>, 2), 11);
  batch.Add(In(std::in_place_index<1>, "x"), 12);
  batch.Add(In(std::in_place_index<0>, 3), 13);
  batch.Add(In(std::in_place_index<1>, "y"), 14);
  batch.Add(In(std::in_place_index<1>, "z"), 15);
  Output<int64_t> out;  // the Recorder emits nothing
  ASSERT_TRUE(op.ProcessBatch(batch, out).ok());
  ASSERT_TRUE(op.OnWatermark(20, out).ok());
  EXPECT_EQ(calls, (std::vector<std::string>{"L1@10,2@11", "Rx@12", "L3@13", "Ry@14,z@15", "W20"}));

  // State is the inner operator's.
  BinaryWriter w;
  ASSERT_TRUE(op.SnapshotState(&w).ok());
  BinaryReader r(w.data());
  ASSERT_TRUE(op.RestoreState(&r).ok());
  EXPECT_EQ(calls.back(), "restored 42");
}

uint64_t HashOf(const int64_t& v) {
  return StableHash(v);
}
uint64_t HashOfText(const std::string& v) {
  return StableHash(std::string_view(v));
}

JobOptions ShuffleOptions() {
  JobOptions o;
  o.parallelism = 2;
  o.instance = "a";
  o.job_id = "join-plan-test";
  o.shuffle_brokers = "127.0.0.1:1";  // never contacted: the graph is only built and checked
  return o;
}

auto RecorderFactory() {
  return [] { return std::make_unique<Recorder>(nullptr); };
}

TEST(JoinAcrossInstancesTest, UnderInstancesBothSidesReachTheJoinThroughOneTopic) {
  Job job(ShuffleOptions());
  auto left = job.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1, 2}));
  auto right = job.Source<std::string>("texts", VectorSourceFactory<std::string>({"a"}));
  auto joined = JoinAcrossInstances<int64_t>(job, left, right, "j", "k", &HashOf, &HashOfText,
                                             RecorderFactory());
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  joined->Sink("out", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  Status s = job.CheckInstancePlan();
  EXPECT_TRUE(s.ok()) << s.ToString();

  // The same operator connected by hand is refused: each instance would join its partitions only.
  Job by_hand(ShuffleOptions());
  auto l = by_hand.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1, 2}));
  auto r = by_hand.Source<std::string>("texts", VectorSourceFactory<std::string>({"a"}));
  Connect(l.KeyBy("k", &HashOf), r.KeyBy("k", &HashOfText))
      .Then<int64_t>("j", RecorderFactory())
      .Sink("out", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  Status refused = by_hand.CheckInstancePlan();
  ASSERT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("needs records from every partition"), std::string::npos)
      << refused.message();
}

TEST(JoinAcrossInstancesTest, ItsErrorsNameTheJoin) {
  JobOptions o = ShuffleOptions();
  o.shuffle_brokers = "";
  Job job(o);
  auto left = job.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1}));
  auto right = job.Source<std::string>("texts", VectorSourceFactory<std::string>({"a"}));
  auto joined = JoinAcrossInstances<int64_t>(job, left, right, "orders.join", "id", &HashOf,
                                             &HashOfText, RecorderFactory());
  ASSERT_EQ(joined.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(joined.status().message().find(
                "--instance a: operator 'orders.join' (join on id): the records of both sides"),
            std::string::npos)
      << joined.status().message();
  EXPECT_NE(joined.status().message().find("give --shuffle-brokers"), std::string::npos);

  // A side straight from another topic's reader, with no keyed operator between.
  Job twice(ShuffleOptions());
  auto keyed = KeyByAcrossInstances(
      twice, twice.Source<int64_t>("nums", VectorSourceFactory<int64_t>({1})), "sum", "n", &HashOf);
  ASSERT_TRUE(keyed.ok());
  auto texts = twice.Source<std::string>("texts", VectorSourceFactory<std::string>({"a"}));
  auto behind = JoinAcrossInstances<int64_t>(twice, *keyed, texts, "j", "n", &HashOf, &HashOfText,
                                             RecorderFactory());
  ASSERT_EQ(behind.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(behind.status().message().find("left side"), std::string::npos)
      << behind.status().message();
  EXPECT_NE(behind.status().message().find("comes straight from 'sum.shuffle'"), std::string::npos)
      << behind.status().message();
}

// A source that feeds both sides is tracked once per side: each side's writer reports it, and
// the faster side's report must not make the slower side's records late.
TEST(JoinAcrossInstancesTest, ASourceOnBothSidesIsTrackedPerSide) {
  EXPECT_EQ(shuffle::ProgressSourceName("in", 0), "in");
  EXPECT_NE(shuffle::ProgressSourceName("in", 1), "in");
  const std::vector<std::string> all = engine_detail::JoinUpstreamSources(
      ForwardOrigins{.sources = {"in"}, .readers = {}},
      ForwardOrigins{.sources = {"in", "more"}, .readers = {"w.shuffle"}});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0], "in");
  EXPECT_EQ(all[1], shuffle::ProgressSourceName("in", 1));
  EXPECT_EQ(all[2], shuffle::ProgressSourceName("more", 1));
  EXPECT_EQ(all[3], shuffle::ProgressSourceName("w.shuffle", 1));
}

}  // namespace
}  // namespace flow::rt
