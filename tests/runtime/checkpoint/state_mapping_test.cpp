// Restoring into a changed script: state mapped by operator name and compared by state schema
// (checkpoint/state_schema.h, checkpoint/state_mapping.h), and the metadata that records it.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checkpoint_test_util.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/checkpoint/state_mapping.h"
#include "flow/runtime/checkpoint/state_schema.h"

namespace flow::rt {
namespace {

using Parts = std::vector<std::string>;

const Parts kWindow = {"state: window aggregate", "key: string", "window: tumbling 60000ms",
                       "aggregate n: count() -> int"};

TEST(DiffStateSchema, EqualSchemasCarryOverUnchanged) {
  StateSchemaDiff d = DiffStateSchema(kWindow, kWindow);
  EXPECT_TRUE(d.compatible());
  EXPECT_TRUE(d.migrated.empty());
}

TEST(DiffStateSchema, AggregatesMayBeAddedOrRemoved) {
  Parts added = kWindow;
  added.push_back("aggregate spent: sum(int) -> int");
  StateSchemaDiff d = DiffStateSchema(kWindow, added);
  EXPECT_TRUE(d.compatible());
  EXPECT_EQ(d.migrated, Parts{"aggregate `spent` added: starts empty"});
  d = DiffStateSchema(added, kWindow);
  EXPECT_TRUE(d.compatible());
  EXPECT_EQ(d.migrated, Parts{"aggregate `spent` removed: its state is dropped"});
}

TEST(DiffStateSchema, AnyOtherChangeIsNamed) {
  Parts key = kWindow;
  key[1] = "key: string, int";
  StateSchemaDiff d = DiffStateSchema(kWindow, key);
  EXPECT_FALSE(d.compatible());
  EXPECT_EQ(d.changed, Parts{"key changed from `string` to `string, int`"});
  Parts widened = kWindow;
  widened[3] = "aggregate n: sum(float) -> float";  // same name, another accumulator
  d = DiffStateSchema(kWindow, widened);
  EXPECT_FALSE(d.compatible());
  EXPECT_EQ(d.changed, Parts{"aggregate n changed from `count() -> int` to `sum(float) -> float`"});
  d = DiffStateSchema(kWindow, {"state: source kafka", "topic: \"a\""});
  EXPECT_FALSE(d.compatible());
  EXPECT_EQ(d.changed, (Parts{"state changed from `window aggregate` to `source kafka`",
                              "key `string` removed", "window `tumbling 60000ms` removed",
                              "topic `\"a\"` added"}));
}

CheckpointMetadata Taken(std::vector<OperatorParallelism> ops) {
  CheckpointMetadata m;
  m.checkpoint_id = 7;
  m.job_fingerprint = 1;
  m.state_schemas = true;
  m.operators = std::move(ops);
  for (const OperatorParallelism& op : m.operators) {
    OperatorSnapshot s;
    s.operator_name = op.name;
    if (op.name.ends_with(".source")) {
      s.source_position = "offsets";
    } else if (!op.state_schema.empty()) {
      s.files.push_back({op.name + "-0.snap", 3, 0, false});
    }
    m.snapshots.push_back(s);
  }
  return m;
}

JobCheckpointInfo Job(std::vector<OperatorParallelism> ops, bool allow = false) {
  JobCheckpointInfo j;
  j.fingerprint = 2;  // another graph: the mapping decides, not the fingerprint
  j.state_schemas = true;
  j.allow_dropped_state = allow;
  j.operators = std::move(ops);
  return j;
}

const Parts kSource = {"state: source kafka", "topic: \"orders\""};

TEST(MapRestoredState, KeepsMigratesAndStartsNewOperators) {
  Parts added = kWindow;
  added.push_back("aggregate spent: sum(int) -> int");
  CheckpointMetadata m =
      Taken({{"o.source", 2, kSource}, {"o.chain", 2, {}}, {"w.window", 2, kWindow}});
  JobCheckpointInfo job = Job({{"o.source", 2, kSource},
                               {"o.chain", 2, {}},
                               {"w.window", 4, added},
                               {"j.join", 2, {"state: interval join"}}});
  StateMapping map = MapRestoredState(m, job);
  EXPECT_EQ(map.kept, Parts{"o.source"});
  EXPECT_EQ(map.migrated, Parts{"'w.window': aggregate `spent` added: starts empty"});
  EXPECT_EQ(map.fresh, Parts{"j.join"});
  EXPECT_TRUE(map.refused.empty());
  EXPECT_TRUE(map.not_restored.empty());
  EXPECT_TRUE(CheckCompatible(m, job, "--restore sp").ok());
  EXPECT_EQ(DescribeStateMapping(map),
            "kept 1, migrated 1 ('w.window': aggregate `spent` added: starts empty), new 1 "
            "('j.join'), dropped 0");
}

TEST(MapRestoredState, RemovedOrChangedStateIsRefusedNamingEachOperator) {
  Parts key = kWindow;
  key[1] = "key: int";
  CheckpointMetadata m = Taken({{"o.source", 1, kSource},
                                {"w.window", 1, kWindow},
                                {"x.aggregate", 1, {"state: running aggregate"}}});
  JobCheckpointInfo job = Job({{"o.source", 1, kSource}, {"w.window", 1, key}});
  Status s = CheckCompatible(m, job, "--restore sp");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(
                "'w.window': its state cannot be carried over: key changed from `string` to `int`"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("'x.aggregate': removed from the script"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("--allow-dropped-state"), std::string::npos) << s.message();
}

TEST(MapRestoredState, AllowDroppedStateTakesTheirSnapshotsOut) {
  Parts key = kWindow;
  key[1] = "key: int";
  CheckpointMetadata m = Taken({{"o.source", 1, kSource},
                                {"w.window", 1, kWindow},
                                {"x.aggregate", 1, {"state: running aggregate"}}});
  JobCheckpointInfo job = Job({{"o.source", 1, kSource}, {"w.window", 1, key}}, /*allow=*/true);
  EXPECT_TRUE(CheckCompatible(m, job, "--restore sp").ok());
  StateMapping map = MapRestoredState(m, job);
  EXPECT_EQ(map.dropped.size(), 2u);
  EXPECT_EQ(map.not_restored, (Parts{"w.window", "x.aggregate"}));
  DropUnmappedState(map, &m);
  ASSERT_EQ(m.snapshots.size(), 1u);  // the changed window starts empty, as the removed one
  EXPECT_EQ(m.snapshots[0].operator_name, "o.source");
  ASSERT_EQ(m.operators.size(), 1u);
}

TEST(MapRestoredState, AnotherMaxParallelismIsRefusedAsSuch) {
  CheckpointMetadata m = Taken({{"w.window", 1, kWindow}});
  JobCheckpointInfo job = Job({{"w.window", 1, kWindow}});
  job.max_parallelism = 64;
  EXPECT_NE(CheckCompatible(m, job, "chk-7").message().find("taken with max parallelism 128"),
            std::string::npos);
}

TEST(MapRestoredState, StatelessOperatorsComeAndGoFreely) {
  CheckpointMetadata m =
      Taken({{"o.source", 1, kSource}, {"o.chain", 1, {}}, {"sink1.sink", 1, {}}});
  JobCheckpointInfo job = Job({{"o.source", 1, kSource}, {"sink2.sink", 1, {}}});
  StateMapping map = MapRestoredState(m, job);
  EXPECT_TRUE(map.refused.empty());
  EXPECT_EQ(map.kept, Parts{"o.source"});
}

TEST(MapRestoredState, WithoutSchemasTheGraphMustBeTheSame) {
  // A checkpoint written before schemas were recorded (or by a job that declares none): the
  // fingerprint rule, and aggregates stored by position cannot be read by name.
  CheckpointMetadata m = Taken({{"w.window", 1, {}}});
  m.state_schemas = false;
  JobCheckpointInfo job = Job({{"w.window", 1, kWindow}});
  job.fingerprint = m.job_fingerprint;
  Status s = CheckCompatible(m, job, "chk-7");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("built before checkpoints recorded state schemas"), std::string::npos)
      << s.message();
  job.operators = {
      {"w.window", 1, {"state: interval join"}}};  // no aggregates: same graph restores
  EXPECT_TRUE(CheckCompatible(m, job, "chk-7").ok());
  job.fingerprint = 99;
  EXPECT_NE(CheckCompatible(m, job, "chk-7").message().find("taken by another job"),
            std::string::npos);
}

TEST(CheckpointMetadata, StateSchemasRoundTrip) {
  CheckpointMetadata m =
      Taken({{"o.source", 2, kSource}, {"w.window", 2, kWindow}, {"o.chain", 2, {}}});
  auto decoded = DecodeCheckpointMetadata(EncodeCheckpointMetadata(m));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(decoded->state_schemas);
  EXPECT_EQ(decoded->operators, m.operators);
}

}  // namespace
}  // namespace flow::rt
