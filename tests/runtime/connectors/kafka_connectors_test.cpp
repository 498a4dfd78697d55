// KafkaSource and KafkaSink against a real broker (LABEL kafka; scripts/kafka start).

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>

#include "flow/runtime/common/metrics.h"
#include "flow/runtime/connectors/kafka_instance.h"
#include "flow/runtime/connectors/kafka_sink.h"
#include "flow/runtime/connectors/kafka_source.h"
#include "kafka/kafka_test_env.h"
#include "kafka_test_util.h"

namespace flow::rt {
namespace {

// Record timestamps near now: the broker's time retention (7 days by default) deletes records
// stamped in 1970 at its next check, possibly between the test's write and read.
TimestampMs RecentMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using test::JavaPartition;
using testing::ClosedPort;

struct Got {
  int32_t partition;
  int64_t offset;
  std::string key;
  std::string payload;
  bool operator<(const Got& o) const {
    return std::tie(partition, offset) < std::tie(o.partition, o.offset);
  }
};

// Polls until `want` records arrived or a generous deadline passed (a safety net, not a timing
// assertion: the count check below fails if records are missing).
std::vector<Got> ReadN(KafkaSource* src, size_t want, size_t batch = 64) {
  std::vector<Got> got;
  std::vector<RawRecord> recs;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (got.size() < want && std::chrono::steady_clock::now() < deadline) {
    recs.clear();
    Result<PollResult> r = src->Poll(&recs, std::min(batch, want - got.size()), 200);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) break;
    for (const auto& rec : recs) {
      got.push_back({rec.partition, rec.offset, std::string(rec.key), std::string(rec.payload)});
    }
  }
  return got;
}

class KafkaConnectorsTest : public ::testing::Test {
 protected:
  static constexpr int kPartitions = 4;
  static constexpr int kRecords = 400;

  void SetUp() override {
    Status reachable = kafka_.CheckReachable(test::Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
    Result<std::string> topic = kafka_.CreateUniqueTopic("conn", kPartitions);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    topic_ = *topic;
  }

  // Writes kRecords records with an independent producer (the test helper), record i into
  // partition i % kPartitions; returns payload -> partition.
  std::map<std::string, int32_t> ProduceWithHelper() {
    std::vector<test::KafkaRecord> records;
    std::map<std::string, int32_t> sent;
    for (int i = 0; i < kRecords; ++i) {
      std::string payload = fmt::format("{{\"i\":{}}}", i);
      records.push_back({i % kPartitions, fmt::format("key-{}", i), payload, -1});
      sent[payload] = i % kPartitions;
    }
    Status s = kafka_.Produce(topic_, records);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return sent;
  }

  KafkaSourceOptions SourceOptions() {
    KafkaSourceOptions o;
    o.brokers = kafka_.brokers();
    o.topic = topic_;
    return o;
  }

  test::KafkaTestEnv kafka_;
  std::string topic_;
};

TEST_F(KafkaConnectorsTest, SinkPartitionsByKeyLikeJava) {
  KafkaSink sink({.brokers = kafka_.brokers(), .topic = topic_});
  ASSERT_TRUE(sink.Open(0, 1).ok());
  std::map<std::string, std::string> sent;  // payload -> key
  for (int i = 0; i < kRecords; ++i) {
    std::string key = fmt::format("key-{}", i % 37);
    std::string payload = fmt::format("{{\"i\":{}}}", i);
    ASSERT_TRUE(sink.Write(key, payload, RecentMs() + i).ok());
    sent[payload] = key;
  }
  Status s = sink.Flush();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sink.delivered(), static_cast<uint64_t>(kRecords));
  ASSERT_TRUE(sink.Close().ok());

  auto read = kafka_.ConsumeToEnd(topic_, test::Isolation::kReadCommitted);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), static_cast<size_t>(kRecords));
  std::set<std::string> seen;
  for (const auto& r : *read) {
    ASSERT_TRUE(sent.count(r.value)) << r.value;
    EXPECT_EQ(r.key, sent[r.value]);
    EXPECT_EQ(r.partition, JavaPartition(r.key, kPartitions)) << r.key;
    EXPECT_TRUE(seen.insert(r.value).second) << "duplicate " << r.value;
  }
}

TEST_F(KafkaConnectorsTest, SourceReadsEachPartitionOnceAtParallelism1And3) {
  std::map<std::string, int32_t> sent = ProduceWithHelper();
  for (uint32_t p : {1u, 3u}) {
    std::map<std::string, int> seen;
    size_t total = 0;
    for (uint32_t s = 0; s < p; ++s) {
      KafkaSource src(SourceOptions());
      ASSERT_TRUE(src.Open(s, p).ok());
      size_t mine = 0;
      for (const auto& [payload, part] : sent) {
        if (static_cast<uint32_t>(part) % p == s) ++mine;
      }
      std::vector<Got> got = ReadN(&src, mine);
      ASSERT_EQ(got.size(), mine) << "subtask " << s << " of " << p;
      for (const Got& g : got) {
        EXPECT_EQ(static_cast<uint32_t>(g.partition) % p, s);
        ASSERT_TRUE(sent.count(g.payload)) << g.payload;
        EXPECT_EQ(sent[g.payload], g.partition);
        ++seen[g.payload];
      }
      total += got.size();
      // Nothing more than expected arrives.
      std::vector<RawRecord> extra;
      ASSERT_TRUE(src.Poll(&extra, 10, 300).ok());
      EXPECT_TRUE(extra.empty());
      ASSERT_TRUE(src.Close().ok());
    }
    EXPECT_EQ(total, sent.size());
    for (const auto& [payload, n] : seen) EXPECT_EQ(n, 1) << payload;
    EXPECT_EQ(seen.size(), sent.size());
  }
}

TEST_F(KafkaConnectorsTest, SinkToSourceRoundTripKeepsKeysAndTimestamps) {
  KafkaSink sink({.brokers = kafka_.brokers(), .topic = topic_});
  ASSERT_TRUE(sink.Open(0, 1).ok());
  const TimestampMs t0 = RecentMs();
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(sink.Write(fmt::format("k{}", i), fmt::format("v{}", i), t0 + i).ok());
  }
  ASSERT_TRUE(sink.Close().ok());
  KafkaSource src(SourceOptions());
  ASSERT_TRUE(src.Open(0, 1).ok());
  std::vector<RawRecord> recs;
  std::map<std::string, std::pair<std::string, TimestampMs>> got;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (got.size() < 50 && std::chrono::steady_clock::now() < deadline) {
    recs.clear();
    ASSERT_TRUE(src.Poll(&recs, 100, 200).ok());
    for (const auto& r : recs) got[std::string(r.payload)] = {std::string(r.key), r.timestamp};
  }
  ASSERT_EQ(got.size(), 50u);
  for (int i = 0; i < 50; ++i) {
    auto& [key, ts] = got[fmt::format("v{}", i)];
    EXPECT_EQ(key, fmt::format("k{}", i));
    EXPECT_EQ(ts, t0 + i);
  }
}

TEST_F(KafkaConnectorsTest, RestoreFromSnapshotContinuesExactly) {
  ProduceWithHelper();
  KafkaSource first(SourceOptions());
  ASSERT_TRUE(first.Open(0, 1).ok());
  std::vector<Got> before = ReadN(&first, 150, 50);
  ASSERT_EQ(before.size(), 150u);
  BinaryWriter w;
  ASSERT_TRUE(first.SnapshotPosition(&w).ok());
  std::vector<Got> rest = ReadN(&first, kRecords - 150);
  ASSERT_EQ(rest.size(), static_cast<size_t>(kRecords - 150));

  KafkaSourceOptions latest = SourceOptions();
  latest.start = KafkaStart::kLatest;
  KafkaSource second(latest);
  ASSERT_TRUE(second.Open(0, 1).ok());
  BinaryReader r(w.data());
  ASSERT_TRUE(second.RestorePosition(&r).ok());
  std::vector<Got> again = ReadN(&second, kRecords - 150);
  std::set<Got> a(rest.begin(), rest.end()), b(again.begin(), again.end());
  ASSERT_EQ(again.size(), rest.size());
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Got& x, const Got& y) {
    return x.partition == y.partition && x.offset == y.offset && x.payload == y.payload;
  }));
  // Restored offsets are exact even though `start` says latest.
  std::set<Got> all(before.begin(), before.end());
  for (const Got& g : again) EXPECT_TRUE(all.insert(g).second) << "duplicate " << g.payload;
  EXPECT_EQ(all.size(), static_cast<size_t>(kRecords));
}

// In a consumer group (--instance) the group's committed offsets are the positions, but the
// snapshot's bytes are still read: a source that wraps this one (the repartition source) keeps
// its own position after them.
TEST_F(KafkaConnectorsTest, InAGroupRestoreReadsTheSnapshotAndLeavesPositionsToTheGroup) {
  ProduceWithHelper();
  KafkaSource first(SourceOptions());
  ASSERT_TRUE(first.Open(0, 1).ok());
  ASSERT_EQ(ReadN(&first, 150, 50).size(), 150u);
  BinaryWriter w;
  ASSERT_TRUE(first.SnapshotPosition(&w).ok());
  w.PutU32(0xC0FFEEu);  // what a wrapping source would write next

  KafkaSource member(SourceOptions());
  ConnectorContext context;
  context.job_id = test::UniqueName("group-restore");
  context.operator_name = "input";
  context.instance = "a";
  member.Bind(context);
  ASSERT_TRUE(member.Open(0, 1).ok());
  EXPECT_FALSE(member.AssignmentKnown()) << "the group has not assigned anything yet";
  BinaryReader r(w.data());
  Status s = member.RestorePosition(&r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  uint32_t next = 0;
  ASSERT_TRUE(r.GetU32(&next).ok());
  EXPECT_EQ(next, 0xC0FFEEu);
  EXPECT_TRUE(r.AtEnd());
  // The group has no committed offsets: every record is read, from the start.
  std::vector<Got> got = ReadN(&member, kRecords);
  EXPECT_EQ(got.size(), static_cast<size_t>(kRecords));
  EXPECT_TRUE(member.AssignmentKnown());
  // A poll a second later refreshes the lag gauges, which this context has no registry for; the
  // close then revokes every partition and must find no gauge it cannot set.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::vector<RawRecord> none;
  ASSERT_TRUE(member.Poll(&none, 10, 0).ok());
  EXPECT_TRUE(member.Close().ok());
}

// In a consumer group a partition is read from the group's committed offset. One whose committed
// offset never arrives is never read, and holds the job's event time back for good (librdkafka
// 2.0.2 can lose an offset fetch that way). Here an open transaction holds offsets of partition 0
// for the group, so the committed offsets stay unstable: the member reads nothing, and once it
// has waited longer than stalled_assignment_ms with the brokers up, Poll ends the run with
// kReassigned naming a partition. Once the transaction has ended, a new member (what the
// engine's restart makes) reads every record and polls past the bound without ending.
TEST_F(KafkaConnectorsTest, InAGroupAPartitionThatIsNeverReadEndsTheRunAfterTheBound) {
  ProduceWithHelper();
  ConnectorContext context;
  context.job_id = test::UniqueName("group-stall");
  context.operator_name = "input";
  context.instance = "a";
  const std::string group = KafkaInstanceGroupId(context.job_id, context.operator_name);

  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::string txn_id = test::UniqueName("stall-txn");
  ASSERT_EQ(rd_kafka_conf_set(conf, "bootstrap.servers", kafka_.brokers().c_str(), err, sizeof err),
            RD_KAFKA_CONF_OK);
  ASSERT_EQ(rd_kafka_conf_set(conf, "transactional.id", txn_id.c_str(), err, sizeof err),
            RD_KAFKA_CONF_OK);
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  ASSERT_NE(producer, nullptr) << err;
  auto ok = [](rd_kafka_error_t* e) {
    std::string what = e == nullptr ? "" : rd_kafka_error_string(e);
    if (e != nullptr) rd_kafka_error_destroy(e);
    return what;
  };
  ASSERT_EQ(ok(rd_kafka_init_transactions(producer, 30000)), "");
  ASSERT_EQ(ok(rd_kafka_begin_transaction(producer)), "");
  rd_kafka_topic_partition_list_t* offsets = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(offsets, topic_.c_str(), 0)->offset = 0;
  rd_kafka_consumer_group_metadata_t* metadata =
      rd_kafka_consumer_group_metadata_new(group.c_str());
  const std::string sent =
      ok(rd_kafka_send_offsets_to_transaction(producer, offsets, metadata, 30000));
  rd_kafka_consumer_group_metadata_destroy(metadata);
  rd_kafka_topic_partition_list_destroy(offsets);
  ASSERT_EQ(sent, "");

  KafkaSourceOptions o = SourceOptions();
  o.stalled_assignment_ms = 3000;
  // Polls `source` for up to `seconds` or until it fails; records read per partition.
  auto poll = [](KafkaSource* source, int seconds, Status* ended) {
    std::map<int32_t, int> read;
    std::vector<RawRecord> recs;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (ended->ok() && std::chrono::steady_clock::now() < until) {
      recs.clear();
      Result<PollResult> r = source->Poll(&recs, 64, 200);
      if (!r.ok()) *ended = r.status();
      for (const RawRecord& rec : recs) ++read[rec.partition];
    }
    return read;
  };
  {
    KafkaSource member(o);
    member.Bind(context);
    ASSERT_TRUE(member.Open(0, 1).ok());
    Status ended;
    const std::map<int32_t, int> read = poll(&member, 60, &ended);
    EXPECT_EQ(ended.code(), StatusCode::kReassigned) << ended.ToString();
    EXPECT_NE(ended.message().find(fmt::format("of topic `{}`", topic_)), std::string::npos)
        << ended.message();
    EXPECT_NE(ended.message().find("has had no record and no end of partition for"),
              std::string::npos)
        << ended.message();
    EXPECT_EQ(read.count(0), 0u) << "partition 0 was read: its committed offset was not held back";
    EXPECT_TRUE(member.Close().ok());
  }
  ASSERT_EQ(ok(rd_kafka_abort_transaction(producer, 30000)), "");
  rd_kafka_destroy(producer);

  KafkaSource again(o);
  again.Bind(context);
  ASSERT_TRUE(again.Open(0, 1).ok());
  Status ended;
  std::map<int32_t, int> read = poll(&again, 8, &ended);  // longer than the bound
  EXPECT_TRUE(ended.ok()) << ended.ToString();
  for (int32_t p = 0; p < kPartitions; ++p) EXPECT_EQ(read[p], kRecords / kPartitions) << p;
  EXPECT_TRUE(again.Close().ok());
}

// A plain librdkafka member of an instance's group, to put the group into states Flow's own
// members avoid: it can leave a revocation unserved and die without leaving.
class RawMember {
 public:
  RawMember(const std::string& brokers, const std::string& group, const std::string& member,
            const std::string& topic) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    for (const auto& [k, v] :
         std::map<std::string, std::string>{{"bootstrap.servers", brokers},
                                            {"group.id", group},
                                            {"group.instance.id", member},
                                            {"partition.assignment.strategy", "cooperative-sticky"},
                                            {"session.timeout.ms", "10000"},
                                            {"enable.auto.commit", "false"}}) {
      EXPECT_EQ(rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err), RD_KAFKA_CONF_OK)
          << err;
    }
    rd_kafka_conf_set_opaque(conf, this);
    rd_kafka_conf_set_rebalance_cb(conf, &RawMember::Rebalance);
    rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    EXPECT_NE(rk_, nullptr) << err;
    rd_kafka_poll_set_consumer(rk_);
    rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, topic.c_str(), RD_KAFKA_PARTITION_UA);
    EXPECT_EQ(rd_kafka_subscribe(rk_, topics), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_topic_partition_list_destroy(topics);
  }
  // Dies as a SIGKILLed process would: no LeaveGroup, revocations left as they are.
  void Kill() {
    if (rk_ != nullptr) rd_kafka_destroy_flags(rk_, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    rk_ = nullptr;
  }
  ~RawMember() {
    if (rk_ == nullptr) return;
    rd_kafka_consumer_close(rk_);
    rd_kafka_destroy(rk_);
  }

  void Poll() {
    if (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, 50)) rd_kafka_message_destroy(m);
  }
  std::set<int32_t> owned;
  bool serve_revocations = true;
  bool revocation_left = false;  // a revocation came while serve_revocations was false

 private:
  static void Rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                        rd_kafka_topic_partition_list_t* parts, void* opaque) {
    auto* self = static_cast<RawMember*>(opaque);
    rd_kafka_error_t* e = nullptr;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      e = rd_kafka_incremental_assign(rk, parts);
      for (int i = 0; i < parts->cnt; ++i) self->owned.insert(parts->elems[i].partition);
    } else if (!self->serve_revocations) {
      self->revocation_left = true;
    } else {
      e = rd_kafka_incremental_unassign(rk, parts);
      for (int i = 0; i < parts->cnt; ++i) self->owned.erase(parts->elems[i].partition);
    }
    if (e != nullptr) rd_kafka_error_destroy(e);
  }
  rd_kafka_t* rk_ = nullptr;
};

// A cooperative rebalance withholds the partitions it moves until their owner has revoked them
// and rejoined. An owner replaced by its own restart (the same static member) before it rejoined
// never does: the broker hands the new member the old one's assignment and keeps the group
// stable, with the moved partitions held by nobody, for good. Here member c (the leader) owns
// every partition, instance b's source joins, c is told to give half up and dies before it does,
// and c comes back: b holds nothing and half the partitions nobody. b, the member with the least
// name, sees that in a look at the group and ends its run with kReassigned to leave the group, so
// that it rebalances.
TEST_F(KafkaConnectorsTest, InAGroupPartitionsHeldByNoMemberMakeTheLeastMemberLeave) {
  const std::string job = test::UniqueName("group-strand");
  const std::string group = KafkaInstanceGroupId(job, "input");
  const std::string c_id = KafkaInstanceMemberId(job, "input", "c", 0);
  std::set<int32_t> all;
  for (int32_t p = 0; p < kPartitions; ++p) all.insert(p);
  auto c = std::make_unique<RawMember>(kafka_.brokers(), group, c_id, topic_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (c->owned != all && std::chrono::steady_clock::now() < until) c->Poll();
  ASSERT_EQ(c->owned, all);
  c->serve_revocations = false;

  ConnectorContext context;
  context.job_id = job;
  context.operator_name = "input";
  context.instance = "b";
  KafkaSourceOptions o = SourceOptions();
  o.stranded_partitions_ms = 3000;
  KafkaSource b(o);
  b.Bind(context);
  ASSERT_TRUE(b.Open(0, 1).ok());
  std::vector<RawRecord> recs;
  while (!c->revocation_left && std::chrono::steady_clock::now() < until) {
    c->Poll();
    recs.clear();
    ASSERT_TRUE(b.Poll(&recs, 64, 50).ok());
  }
  ASSERT_TRUE(c->revocation_left) << "the leader was never asked to give partitions up";
  c->Kill();  // dies with the revocation unserved
  c = std::make_unique<RawMember>(kafka_.brokers(), group, c_id, topic_);
  Status ended;
  while (ended.ok() && std::chrono::steady_clock::now() < until) {
    c->Poll();
    recs.clear();
    Result<PollResult> r = b.Poll(&recs, 64, 50);
    if (!r.ok()) ended = r.status();
  }
  EXPECT_EQ(ended.code(), StatusCode::kReassigned) << ended.ToString();
  EXPECT_NE(ended.message().find("held by no member of the stable consumer group"),
            std::string::npos)
      << ended.message();
  EXPECT_FALSE(c->owned.empty()) << "the restarted leader got its old assignment back";
  EXPECT_LT(c->owned.size(), all.size());
  std::string free;
  for (int32_t p : all) {
    if (c->owned.count(p) == 0) free += (free.empty() ? "" : ",") + std::to_string(p);
  }
  EXPECT_NE(ended.message().find("partitions " + free + " of topic"), std::string::npos)
      << ended.message() << " (held by c: " << c->owned.size() << ")";
  EXPECT_TRUE(b.Close().ok());
}

TEST_F(KafkaConnectorsTest, RestoreAtAnotherParallelismFromSeveralSnapshots) {
  ProduceWithHelper();
  // Two subtasks read part of their partitions and snapshot.
  std::vector<std::string> snapshots;
  std::set<std::string> consumed;
  for (uint32_t s = 0; s < 2; ++s) {
    KafkaSource src(SourceOptions());
    ASSERT_TRUE(src.Open(s, 2).ok());
    for (const Got& g : ReadN(&src, 60, 20)) consumed.insert(g.payload);
    BinaryWriter w;
    ASSERT_TRUE(src.SnapshotPosition(&w).ok());
    snapshots.push_back(w.Release());
  }
  ASSERT_EQ(consumed.size(), 120u);
  // One subtask takes over all partitions from both snapshots and reads exactly the rest.
  KafkaSource merged(SourceOptions());
  ASSERT_TRUE(merged.Open(0, 1).ok());
  for (const std::string& snap : snapshots) {
    BinaryReader r(snap);
    ASSERT_TRUE(merged.RestorePosition(&r).ok());
  }
  std::vector<Got> rest = ReadN(&merged, kRecords - 120);
  ASSERT_EQ(rest.size(), static_cast<size_t>(kRecords - 120));
  for (const Got& g : rest) EXPECT_TRUE(consumed.insert(g.payload).second) << g.payload;
  EXPECT_EQ(consumed.size(), static_cast<size_t>(kRecords));
}

// Sources started with `latest` on 4 partitions; the topic grows to 6 while they poll. The new
// partitions are read from their first record (they are new to the job, whatever `start` says),
// and their positions are in the snapshots: a restore at another parallelism reads only what
// came after.
TEST_F(KafkaConnectorsTest, DiscoveredPartitionsStartAtEarliestAndAreSnapshotted) {
  ProduceWithHelper();  // before the start: never read
  KafkaSourceOptions o = SourceOptions();
  o.start = KafkaStart::kLatest;
  o.partition_discovery_interval_ms = 200;
  KafkaSource s0(o), s1(o);
  ASSERT_TRUE(s0.Open(0, 2).ok());
  ASSERT_TRUE(s1.Open(1, 2).ok());
  ASSERT_TRUE(kafka_.AddPartitions(topic_, 6).ok());
  std::vector<test::KafkaRecord> records;
  for (int i = 0; i < 60; ++i) records.push_back({i % 6, "", fmt::format("grown-{}", i), -1});
  ASSERT_TRUE(kafka_.Produce(topic_, records).ok());
  std::map<std::string, int> seen;
  for (KafkaSource* src : {&s0, &s1}) {
    const uint32_t subtask = src == &s0 ? 0 : 1;
    std::vector<Got> got = ReadN(src, 30);
    EXPECT_EQ(got.size(), 30u) << "subtask " << subtask;
    for (const Got& g : got) {
      EXPECT_EQ(static_cast<uint32_t>(g.partition) % 2, subtask) << g.payload;
      ++seen[g.payload];
    }
    EXPECT_TRUE(src->positions().count(subtask + 4))
        << "partition " << subtask + 4 << " not in the position";
  }
  ASSERT_EQ(seen.size(), 60u);
  for (const auto& [payload, n] : seen) EXPECT_EQ(n, 1) << payload;
  std::vector<OldSourcePosition> old;
  for (KafkaSource* src : {&s0, &s1}) {
    BinaryWriter w;
    ASSERT_TRUE(src->SnapshotPosition(&w).ok());
    old.push_back({static_cast<uint32_t>(old.size()), false, w.Release()});
  }
  records.clear();
  for (int i = 0; i < 12; ++i) records.push_back({4 + i % 2, "", fmt::format("later-{}", i), -1});
  ASSERT_TRUE(kafka_.Produce(topic_, records).ok());
  std::set<std::string> later;
  for (uint32_t s = 0; s < 3; ++s) {
    KafkaSource src(o);
    ASSERT_TRUE(src.Open(s, 3).ok());
    ASSERT_TRUE(src.RestoreRescaled(old, 2).ok());
    const size_t mine = (s == 1 || s == 2) ? 6 : 0;  // partition 4 -> subtask 1, 5 -> subtask 2
    for (const Got& g : ReadN(&src, mine)) EXPECT_TRUE(later.insert(g.payload).second) << g.payload;
    for (int poll = 0; poll < 5; ++poll) {  // nothing else comes
      std::vector<RawRecord> recs;
      ASSERT_TRUE(src.Poll(&recs, 10, 200).ok());
      for (const RawRecord& r : recs)
        ADD_FAILURE() << "subtask " << s << " read " << r.payload << " again";
    }
  }
  EXPECT_EQ(later.size(), 12u);
}

TEST_F(KafkaConnectorsTest, LatestAndCommittedStarts) {
  ProduceWithHelper();
  KafkaSourceOptions latest_opts = SourceOptions();
  latest_opts.start = KafkaStart::kLatest;
  KafkaSource latest(latest_opts);
  ASSERT_TRUE(latest.Open(0, 1).ok());
  std::vector<RawRecord> recs;
  ASSERT_TRUE(latest.Poll(&recs, 10, 500).ok());
  EXPECT_TRUE(recs.empty());  // only records produced after Open

  KafkaSourceOptions group_opts = SourceOptions();
  group_opts.group_id = test::UniqueName("g");
  KafkaSource reader(group_opts);
  ASSERT_TRUE(reader.Open(0, 1).ok());
  ASSERT_EQ(ReadN(&reader, 100).size(), 100u);
  ASSERT_TRUE(reader.CommitOffsets().ok());
  group_opts.start = KafkaStart::kCommitted;
  KafkaSource committed(group_opts);
  ASSERT_TRUE(committed.Open(0, 1).ok());
  EXPECT_EQ(committed.positions(), reader.positions());
  EXPECT_EQ(ReadN(&committed, kRecords - 100).size(), static_cast<size_t>(kRecords - 100));
}

TEST_F(KafkaConnectorsTest, FullProducerQueueBlocksInsteadOfFailing) {
  // A 5-message queue: Write must wait for deliveries (backpressure), never drop or fail.
  KafkaSink sink({.brokers = kafka_.brokers(),
                  .topic = topic_,
                  .properties = {{"queue.buffering.max.messages", "5"}, {"linger.ms", "0"}}});
  ASSERT_TRUE(sink.Open(0, 1).ok());
  for (int i = 0; i < 300; ++i) {
    Status s = sink.Write(fmt::format("k{}", i), fmt::format("v{}", i), 0);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(sink.delivered(), 300u);
  auto read = kafka_.ConsumeToEnd(topic_, test::Isolation::kReadCommitted);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->size(), 300u);
}

TEST_F(KafkaConnectorsTest, SubtaskWithoutPartitionsIsIdle) {
  ProduceWithHelper();
  KafkaSource src(SourceOptions());
  ASSERT_TRUE(src.Open(4, 5).ok());  // 4 partitions, 5 subtasks: subtask 4 owns none
  EXPECT_TRUE(src.positions().empty());
  std::vector<RawRecord> recs;
  Result<PollResult> r = src.Poll(&recs, 10, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, PollResult::kIdle);
  EXPECT_TRUE(recs.empty());
}

// Until a partition delivered a record or reported its end it is pending (the engine holds the
// watermark): here partitions 2 and 3 are empty and must report their end.
TEST_F(KafkaConnectorsTest, PartitionsArePendingUntilTheirFirstRecordOrTheirEnd) {
  std::vector<test::KafkaRecord> records;
  for (int i = 0; i < 40; ++i) records.push_back({i % 2, "", fmt::format("r{}", i), -1});
  ASSERT_TRUE(kafka_.Produce(topic_, records).ok());
  KafkaSourceOptions o = SourceOptions();
  o.properties["enable.partition.eof"] = "false";  // the source needs it and overrides this
  KafkaSource src(o);
  ASSERT_TRUE(src.Open(0, 1).ok());
  EXPECT_TRUE(src.SplitsPending());
  EXPECT_EQ(ReadN(&src, 40).size(), 40u);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (src.SplitsPending() && std::chrono::steady_clock::now() < deadline) {
    std::vector<RawRecord> recs;
    ASSERT_TRUE(src.Poll(&recs, 10, 100).ok());
    EXPECT_TRUE(recs.empty());
  }
  EXPECT_FALSE(src.SplitsPending()) << "empty partitions never reported their end";
  BinaryWriter w;
  ASSERT_TRUE(src.SnapshotPosition(&w).ok());
  ASSERT_TRUE(src.Close().ok());

  // Restored, every partition is pending again until heard from.
  KafkaSource again(SourceOptions());
  ASSERT_TRUE(again.Open(0, 1).ok());
  BinaryReader r(w.data());
  ASSERT_TRUE(again.RestorePosition(&r).ok());
  EXPECT_TRUE(again.SplitsPending());
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (again.SplitsPending() && std::chrono::steady_clock::now() < deadline) {
    std::vector<RawRecord> recs;
    ASSERT_TRUE(again.Poll(&recs, 10, 100).ok());
    EXPECT_TRUE(recs.empty());
  }
  EXPECT_FALSE(again.SplitsPending());
}

// flow_kafka_consumer_lag{...,topic,partition}: what a partition holds that the source has not
// read; 0 once caught up, also behind a transaction's commit marker (it takes an offset and is
// never delivered as a record). -1: the series is absent.
TEST_F(KafkaConnectorsTest, ConsumerLagPerPartition) {
  ProduceWithHelper();  // 100 records in each partition
  {
    // Then a committed transaction of 10 records on partition 0: 10 records and a marker.
    Result<test::RdKafkaPtr> producer =
        kafka_.MakeProducer({{"transactional.id", "lag-" + topic_}});
    ASSERT_TRUE(producer.ok()) << producer.status().ToString();
    rd_kafka_t* p = producer->get();
    auto ok = [](rd_kafka_error_t* e) {
      const bool good = e == nullptr;
      if (e != nullptr) rd_kafka_error_destroy(e);
      return good;
    };
    ASSERT_TRUE(ok(rd_kafka_init_transactions(p, 30000)));
    ASSERT_TRUE(ok(rd_kafka_begin_transaction(p)));
    for (int i = 0; i < 10; ++i) {
      std::string v = fmt::format("t{}", i);
      ASSERT_EQ(rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_PARTITION(0),
                                  RD_KAFKA_V_VALUE(v.data(), v.size()),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    ASSERT_TRUE(ok(rd_kafka_commit_transaction(p, 30000)));
  }
  MetricsRegistry registry;
  ConnectorContext context;
  context.metrics = MetricGroup(&registry, "src", 0);
  KafkaSource src(SourceOptions());
  src.Bind(context);
  ASSERT_TRUE(src.Open(0, 1).ok());
  auto lags = [&] {
    std::map<int32_t, int64_t> out;
    const std::string text = registry.RenderPrometheus();
    for (int32_t p = 0; p < kPartitions; ++p) {
      const std::string series = fmt::format(
          "flow_kafka_consumer_lag{{operator=\"src\",subtask=\"0\",topic=\"{}\",partition=\"{}\"}}"
          " ",
          topic_, p);
      const size_t at = text.find(series);
      out[p] = at == std::string::npos ? -1 : std::stoll(text.substr(at + series.size()));
    }
    return out;
  };
  // Polls on, with nothing left to read (the lag is updated once a second), until `want` or 30 s.
  auto wait_for = [&](const std::map<int32_t, int64_t>& want) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (lags() != want && std::chrono::steady_clock::now() < deadline) {
      std::vector<RawRecord> none;
      EXPECT_TRUE(src.Poll(&none, 10, 100).ok());
      EXPECT_TRUE(none.empty());
    }
    return lags();
  };
  const std::map<int32_t, int64_t> before{{0, -1}, {1, -1}, {2, -1}, {3, -1}};
  EXPECT_EQ(lags(), before) << "no lag is known before the first fetch";
  EXPECT_EQ(ReadN(&src, 0 + 4 * 25 + 1, 1).size(), 101u);  // spread over the partitions
  // Whatever was read from each partition, the lags add up to what is left: 410 - 101 records,
  // and partition 0's marker.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int64_t left = -1;
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<RawRecord> none;
    ASSERT_TRUE(src.Poll(&none, 0, 0).ok());  // takes no record
    std::map<int32_t, int64_t> now = lags();
    left = 0;
    for (const auto& [p, lag] : now) left = lag < 0 || left < 0 ? -1 : left + lag;
    if (left == 410 - 101 + 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(left, 410 - 101 + 1) << registry.RenderPrometheus();
  EXPECT_EQ(ReadN(&src, 410 - 101).size(), 309u);
  const std::map<int32_t, int64_t> caught_up{{0, 0}, {1, 0}, {2, 0}, {3, 0}};
  EXPECT_EQ(wait_for(caught_up), caught_up) << registry.RenderPrometheus();
  ASSERT_TRUE(src.Close().ok());
}

// A record stamped past the topic's time retention is deleted by the broker at its next check,
// read or not: the sink says so once, naming the topic and its retention. Topics that keep records
// whatever their stamp (LogAppendTime, retention.ms=-1) get no warning, nor do recent stamps.
TEST_F(KafkaConnectorsTest, SinkWarnsOnceAboutRecordsStampedPastTheTopicsRetention) {
  const std::string warning = "stamped past the output topic's retention";
  const TimestampMs eight_days = 8LL * 24 * 3600 * 1000;  // the default retention is 7 days
  auto run = [&](const std::string& topic, TimestampMs stamp) {
    ::testing::internal::CaptureStderr();
    KafkaSink sink({.brokers = kafka_.brokers(), .topic = topic});
    Status opened = sink.Open(0, 1);
    EXPECT_TRUE(opened.ok()) << opened.ToString();
    for (TimestampMs ts : {RecentMs(), stamp, stamp + 1, RecentMs()}) {
      Status s = sink.Write("k", "v", ts);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    EXPECT_TRUE(sink.Close().ok());
    return ::testing::internal::GetCapturedStderr();
  };
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const std::string said = run(topic_, RecentMs() - eight_days);
  EXPECT_EQ(count(said, warning), 1u) << said;
  EXPECT_NE(said.find(topic_), std::string::npos) << said;
  EXPECT_NE(said.find("retention_ms=604800000"), std::string::npos) << said;
  // A day old: within the retention.
  EXPECT_EQ(count(run(topic_, RecentMs() - eight_days / 8), warning), 0u);
  for (const test::KafkaSettings& configs :
       {test::KafkaSettings{{"message.timestamp.type", "LogAppendTime"}},
        test::KafkaSettings{{"retention.ms", "-1"}}}) {
    Result<std::string> kept = kafka_.CreateUniqueTopic("conn-kept", 1, configs);
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    const std::string none = run(*kept, RecentMs() - eight_days);
    EXPECT_EQ(count(none, warning), 0u) << configs.begin()->first << ": " << none;
  }
}

TEST_F(KafkaConnectorsTest, ExplicitPartitionAndMissingTopic) {
  KafkaSink sink({.brokers = kafka_.brokers(),
                  .topic = topic_,
                  .partitioner = KafkaPartitioner::kExplicit,
                  .partition = 2});
  ASSERT_TRUE(sink.Open(0, 1).ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(sink.Write(fmt::format("k{}", i), "x", 0).ok());
  ASSERT_TRUE(sink.Close().ok());
  auto read = kafka_.ConsumeToEnd(topic_, test::Isolation::kReadCommitted);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->size(), 20u);
  for (const auto& r : *read) EXPECT_EQ(r.partition, 2);

  KafkaSink bad({.brokers = kafka_.brokers(),
                 .topic = topic_,
                 .partitioner = KafkaPartitioner::kExplicit,
                 .partition = kPartitions});
  EXPECT_EQ(bad.Open(0, 1).code(), StatusCode::kInvalidArgument);
  KafkaSourceOptions missing_opts = SourceOptions();
  missing_opts.topic = topic_ + "-absent";
  missing_opts.metadata_timeout_ms = 5000;
  KafkaSource missing(missing_opts);
  Status s = missing.Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find(missing_opts.topic), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("create the topic first"), std::string::npos) << s.message();
}

TEST(KafkaUnreachable, OpenReturnsUnavailable) {
  std::string brokers = fmt::format("127.0.0.1:{}", ClosedPort());
  KafkaSource src({.brokers = brokers, .topic = "t", .metadata_timeout_ms = 2000});
  Status s = src.Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find(brokers), std::string::npos) << s.message();
  KafkaSink sink({.brokers = brokers, .topic = "t", .metadata_timeout_ms = 2000});
  s = sink.Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
}

TEST(KafkaOptions, RejectedPropertyIsInvalidArgument) {
  KafkaSource src(
      {.brokers = "127.0.0.1:1", .topic = "t", .properties = {{"no.such.property", "1"}}});
  Status s = src.Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no.such.property"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace flow::rt
