// KafkaGroupLooker against the real broker (LABEL kafka; scripts/kafka start): it says which
// member of a consumer group holds which partitions, and a question it abandons before the
// group's coordinator is found leaves nothing behind that can abort the process later. The
// control shows that librdkafka 2.0.2 does abort when an admin request's own timeout is what ends
// such a question: the reason the looker never lets one time out.

#include "flow/runtime/connectors/kafka_group_looker.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "kafka/kafka_test_env.h"

namespace flow::rt {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

class KafkaGroupLookerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status reachable = kafka_.CheckReachable(test::Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
    Result<std::string> topic = kafka_.CreateUniqueTopic("looker", 3);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    topic_ = *topic;
    group_ = test::UniqueName("looker-group");
  }

  std::map<std::string, std::string> Connect() const {
    std::map<std::string, std::string> out = kafka_.client_settings();
    out["bootstrap.servers"] = kafka_.brokers();
    return out;
  }

  // Asks and polls until the question is answered (at most 30 s). The looker's clock is held at
  // the moment of asking, so its patience never runs out here.
  std::optional<std::optional<KafkaGroupLook>> AskAndWait(KafkaGroupLooker* looker) {
    const int64_t asked = NowMs();
    Status s = looker->Ask(asked);
    EXPECT_TRUE(s.ok()) << s.ToString();
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline) {
      std::optional<std::optional<KafkaGroupLook>> answer = looker->Poll(asked);
      if (answer) return answer;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

  test::KafkaTestEnv kafka_;
  std::string topic_;
  std::string group_;
};

TEST_F(KafkaGroupLookerTest, SaysWhichMemberHoldsWhichPartitions) {
  Result<test::RdKafkaPtr> member = kafka_.MakeConsumer(
      {{"group.id", group_}, {"group.instance.id", "member-a"}, {"auto.offset.reset", "earliest"}});
  ASSERT_TRUE(member.ok()) << member.status().ToString();
  rd_kafka_t* rk = member->get();
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, topic_.c_str(), RD_KAFKA_PARTITION_UA);
  ASSERT_EQ(rd_kafka_subscribe(rk, topics), RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(topics);
  // The member's own view of what it holds, once the group has assigned all three partitions.
  std::set<int32_t> held;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (held.size() < 3 && Clock::now() < deadline) {
    if (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100)) rd_kafka_message_destroy(m);
    rd_kafka_topic_partition_list_t* now = nullptr;
    ASSERT_EQ(rd_kafka_assignment(rk, &now), RD_KAFKA_RESP_ERR_NO_ERROR);
    held.clear();
    for (int i = 0; i < now->cnt; ++i) held.insert(now->elems[i].partition);
    rd_kafka_topic_partition_list_destroy(now);
  }
  ASSERT_EQ(held, (std::set<int32_t>{0, 1, 2}));

  KafkaGroupLooker looker(Connect(), group_, topic_, /*patience_ms=*/30000);
  std::optional<KafkaGroupLook> look;
  // The group may still be finishing its rebalance at the first look: ask until it is stable.
  for (int attempt = 0; attempt < 20 && !(look && look->stable); ++attempt) {
    std::optional<std::optional<KafkaGroupLook>> answer = AskAndWait(&looker);
    ASSERT_TRUE(answer.has_value()) << "no answer within 30 s";
    look = *answer;
    if (!(look && look->stable)) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_TRUE(look.has_value());
  ASSERT_TRUE(look->stable);
  EXPECT_EQ(look->group, group_);
  ASSERT_EQ(look->members.size(), 1u);
  const auto& [id, owned] = *look->members.begin();
  EXPECT_EQ(id, "member-a");
  EXPECT_EQ(std::set<int32_t>(owned.begin(), owned.end()), held);
  EXPECT_TRUE(KafkaUnassignedPartitions(3, *look).empty());
  rd_kafka_consumer_close(rk);
}

TEST_F(KafkaGroupLookerTest, AQuestionAbandonedBeforeTheCoordinatorIsFoundLeavesNothingBehind) {
  // A patience of 1 ms: a new client has not found the group's coordinator yet when it runs out,
  // so the question is abandoned while librdkafka is still looking for the coordinator.
  KafkaGroupLooker looker(Connect(), group_, topic_, /*patience_ms=*/1);
  ASSERT_TRUE(looker.Ask(NowMs()).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  std::optional<std::optional<KafkaGroupLook>> over = looker.Poll(NowMs());
  ASSERT_TRUE(over.has_value()) << "a question older than the patience is over";
  EXPECT_FALSE(looker.asking());
  // Time for a request that had merely timed out to find its coordinator (the control aborts
  // within it), then the next question on a new client is answered: an empty group is "dead".
  std::this_thread::sleep_for(std::chrono::seconds(3));
  std::optional<std::optional<KafkaGroupLook>> answer = AskAndWait(&looker);
  ASSERT_TRUE(answer.has_value()) << "no answer within 30 s";
  ASSERT_TRUE(answer->has_value());
  EXPECT_EQ((*answer)->group, group_);
  EXPECT_TRUE((*answer)->members.empty());
}

// The control: the same question with a request timeout shorter than finding the coordinator,
// on a client that lives on, aborts the process (librdkafka 2.0.2, `eonce->refcnt > 0`).
void AskWithAShortRequestTimeoutAndWait(const std::map<std::string, std::string>& connect,
                                        const std::string& group) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  for (const auto& [k, v] : connect) rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) std::exit(2);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* opts =
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
  rd_kafka_AdminOptions_set_request_timeout(opts, 1, err, sizeof err);
  const char* ids[] = {group.c_str()};
  rd_kafka_DescribeConsumerGroups(rk, ids, 1, opts, queue);
  rd_kafka_AdminOptions_destroy(opts);
  if (rd_kafka_event_t* e = rd_kafka_queue_poll(queue, 10000)) rd_kafka_event_destroy(e);
  std::this_thread::sleep_for(std::chrono::seconds(5));  // the coordinator is found meanwhile
  rd_kafka_queue_destroy(queue);
  rd_kafka_destroy(rk);
  std::exit(0);
}

TEST_F(KafkaGroupLookerTest, ControlARequestThatTimesOutFirstAbortsLibrdkafka) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(AskWithAShortRequestTimeoutAndWait(Connect(), group_), "refcnt");
}

}  // namespace
}  // namespace flow::rt
