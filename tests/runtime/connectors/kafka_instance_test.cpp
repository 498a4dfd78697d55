// Names of an instance's Kafka resources (other instances find it by them) and the per-job
// ledger between its sources and its commit group.

#include "flow/runtime/connectors/kafka_instance.h"

#include "flow/runtime/connectors/kafka_source.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace flow::rt {
namespace {

TEST(KafkaInstanceNames, AreDerivedFromJobSourceAndInstance) {
  EXPECT_EQ(KafkaInstanceGroupId("clicks", "input"), "flow-clicks.input");
  EXPECT_EQ(KafkaInstanceMemberId("clicks", "input", "host-1", 3), "clicks.input.host-1.3");
  EXPECT_EQ(KafkaProgressTopic("clicks", ""), "__flow_progress_clicks");
  EXPECT_EQ(KafkaProgressTopic("clicks", "host-1"), "__flow_progress_clicks.host-1");
  EXPECT_EQ(KafkaInstanceProgressPrefix("clicks"), "__flow_progress_clicks.");
  EXPECT_EQ(KafkaTransactionalId("clicks", ""), "flow-clicks");
  EXPECT_EQ(KafkaTransactionalId("clicks", "host-1"), "flow-clicks@host-1");
}

TEST(KafkaInstanceNames, MemberIdGivesBackItsInstance) {
  const std::string group = KafkaInstanceGroupId("a.b", "in.put");
  // Dots in the job, the source and the instance name: the group id fixes where the name starts.
  EXPECT_EQ(KafkaInstanceOfMember(group, KafkaInstanceMemberId("a.b", "in.put", "x.y", 0)), "x.y");
  EXPECT_EQ(KafkaInstanceOfMember(group, KafkaInstanceMemberId("a.b", "in.put", "z", 12)), "z");
  // Not members of a Flow instance of this group.
  EXPECT_EQ(KafkaInstanceOfMember(group, "a.b.in.put.x"), "");     // no subtask
  EXPECT_EQ(KafkaInstanceOfMember(group, "a.b.in.put.x.1a"), "");  // subtask not a number
  EXPECT_EQ(KafkaInstanceOfMember(group, "a.b.in.put..1"), "");    // empty name
  EXPECT_EQ(KafkaInstanceOfMember(group, "other.in.put.x.1"), "");
  EXPECT_EQ(KafkaInstanceOfMember("plain-group", "a.b.in.put.x.1"), "");
}

// The snapshot an offset names must be found again by any instance, whatever the instance name.
TEST(KafkaInstanceNames, OffsetMetadataNamesTheInstanceAndCheckpoint) {
  EXPECT_EQ(KafkaInstanceOffsetMetadata("host-1", 42), "host-1/chk-42");
  for (const std::string instance : {"a", "x.y", "a/b", "host-1"}) {
    auto owner = ParseKafkaInstanceOffsetMetadata(KafkaInstanceOffsetMetadata(instance, 7), "p 0");
    ASSERT_TRUE(owner.ok()) << owner.status().ToString();
    EXPECT_EQ(owner->instance, instance);
    EXPECT_EQ(owner->checkpoint_id, 7);
  }
  for (std::string_view bad : {"", "host-1", "/chk-3", "host-1/chk-", "host-1/chk-0",
                               "host-1/chk-x", "host-1/savepoint-3", "chk-3"}) {
    auto owner = ParseKafkaInstanceOffsetMetadata(bad, "topic t partition 4");
    ASSERT_FALSE(owner.ok()) << bad;
    EXPECT_EQ(owner.status().code(), StatusCode::kCorruption);
    EXPECT_NE(owner.status().message().find("topic t partition 4"), std::string::npos);
  }
}

TEST(KafkaInstanceOffsets, AssignedReachesTheListenerUntilDetach) {
  KafkaInstanceOffsets offsets;
  std::vector<std::string> heard;
  offsets.Assigned("g0");  // no listener yet: nothing happens
  offsets.Attach();
  offsets.SetAssignedListener([&](const std::string& g) { heard.push_back(g); });
  offsets.Assigned("g1");
  offsets.Assigned("g2");
  offsets.Detach();
  offsets.Assigned("g3");
  EXPECT_EQ(heard, (std::vector<std::string>{"g1", "g2"}));
}

TEST(KafkaInstanceOffsets, CommitGetsEachSlotsNewestRecordAndARevokeStopsLaterCommits) {
  KafkaInstanceOffsets offsets;
  offsets.Attach();
  const size_t s0 = offsets.Register();
  const size_t s1 = offsets.Register();
  offsets.Record(s0, KafkaReadOffsets{1, "t", {{0, 10}}, nullptr});
  offsets.Record(s0, KafkaReadOffsets{2, "t", {{0, 20}}, nullptr});
  offsets.Record(s1, KafkaReadOffsets{3, "t", {{1, 5}}, nullptr});
  std::vector<int64_t> seen;
  Status s = offsets.Commit(2, [&](const std::vector<const KafkaReadOffsets*>& reads) {
    for (const KafkaReadOffsets* r : reads) seen.push_back(r->next_offsets.at(0).second);
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(seen, (std::vector<int64_t>{20}));  // slot 1 has nothing <= 2 yet
  offsets.Revoke("partitions 0 moved");
  s = offsets.Commit(3, [](const std::vector<const KafkaReadOffsets*>&) { return Status::Ok(); });
  EXPECT_EQ(s.code(), StatusCode::kReassigned);
  EXPECT_NE(s.message().find("partitions 0 moved"), std::string::npos) << s.ToString();
  offsets.Attach();  // the next run may commit again
  s = offsets.Commit(4, [](const std::vector<const KafkaReadOffsets*>&) { return Status::Ok(); });
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// A closing consumer's rebalance callback may find the protocol unknown (NULL): an instance's
// group only ever runs cooperative-sticky, so the revocation is still served incrementally
// (comparing NULL with strcmp crashed an instance that closed while partitions were revoked).
TEST(KafkaInstanceNames, AnUnknownRebalanceProtocolIsTheCooperativeOne) {
  EXPECT_TRUE(KafkaInstanceRebalanceIsCooperative(nullptr));
  EXPECT_TRUE(KafkaInstanceRebalanceIsCooperative("COOPERATIVE"));
  EXPECT_FALSE(KafkaInstanceRebalanceIsCooperative("EAGER"));
  EXPECT_FALSE(KafkaInstanceRebalanceIsCooperative("NONE"));
}

// A look at a group: the partitions no member holds (of one topic), and the one member that acts
// on them, the same for every member that looks: the least static member id.
TEST(KafkaGroupLook, FindsPartitionsNoMemberHoldsAndTheMemberThatActs) {
  KafkaGroupLook look;
  look.stable = true;
  look.members = {{"j.in.c.0", {2, 3}}, {"j.in.b.0", {}}, {"", {5}}, {"j.in.b.1", {7, 99}}};
  EXPECT_EQ(KafkaUnassignedPartitions(8, look), (std::vector<int32_t>{0, 1, 4, 6}));
  EXPECT_TRUE(KafkaGroupLookActs(look, "j.in.b.0"));
  EXPECT_FALSE(KafkaGroupLookActs(look, "j.in.b.1"));
  EXPECT_FALSE(KafkaGroupLookActs(look, "j.in.c.0"));
  EXPECT_FALSE(KafkaGroupLookActs(look, "")) << "a dynamic member never acts";
  KafkaGroupLook empty;
  EXPECT_EQ(KafkaUnassignedPartitions(3, empty), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_TRUE(KafkaUnassignedPartitions(0, look).empty());
}

// An exactly-once instance reads read_committed only: a partition that moves must wait for its
// last owner's pending offsets, which librdkafka asks for only then. Refused before any broker
// is contacted (the broker address is unreachable on purpose).
TEST(KafkaInstanceSource, ReadUncommittedIsRefusedForAnExactlyOnceInstance) {
  const std::string job = "kafka-instance-test-isolation";
  std::shared_ptr<KafkaInstanceOffsets> offsets = KafkaInstanceOffsets::ForJob(job);
  offsets->Attach();  // what the exactly-once commit group does before sources open
  KafkaSourceOptions o;
  o.brokers = "127.0.0.1:1";
  o.topic = "t";
  o.read_committed = false;
  KafkaSource source(o);
  ConnectorContext context;
  context.job_id = job;
  context.operator_name = "input";
  context.instance = "a";
  source.Bind(context);
  Status s = source.Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("needs `read_committed: true`"), std::string::npos) << s.ToString();
  offsets->Detach();
}

}  // namespace
}  // namespace flow::rt
