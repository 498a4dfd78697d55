// flowc build with Kafka sources and sinks against the real broker (LABEL kafka): topics are
// created here, input is produced and output read back with the test env's own clients, and
// results are compared with references computed here.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "io_test_util.h"
#include "kafka/kafka_test_env.h"

namespace flow::codegen_io_test {
namespace {

// Event time starts at the current hour, not at a fixed date (see RecentEventTimeOrigin).
int64_t T0() {
  return RecentEventTimeOrigin();
}

using codegen_test::BuildJob;
using codegen_test::JsonString;
using codegen_test::Rfc3339;
using codegen_test::ScratchDir;
using codegen_test::Sorted;
using codegen_test::WriteText;
using test::Isolation;
using test::JavaPartition;
using test::KafkaRecord;
using test::KafkaTestEnv;

constexpr int64_t kWindow = 10000;

std::string Build(const std::string& dir, const std::string& script) {
  WriteText(dir + "/job.flow", script);
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  EXPECT_EQ(built.exit_code, 0) << built.err;
  return dir + "/job";
}

std::string ClickJson(const std::string& user, int64_t ts, int64_t n) {
  return "{\"user\":" + JsonString(user) + ",\"n\":" + std::to_string(n) +
         ",\"ts\":" + JsonString(Rfc3339(ts)) + "}";
}

class CodegenIoKafka : public ::testing::Test {
 protected:
  void SetUp() override {
    rt::Status s = env_.CheckReachable();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  KafkaTestEnv env_;
};

// Out-of-order JSON clicks in 4 partitions -> keyed tumbling count and sum -> Kafka, at
// parallelism 1 and 4. Every record is within the watermark bound of its partition, so the output
// is exactly the reference; one far-future record per partition moves the watermark past every
// data window. Output messages are keyed by the user and land in the Java partitioner's partition.
TEST_F(CodegenIoKafka, WindowedCountFromFourPartitionsMatchesReference) {
  std::string dir = ScratchDir("kafka_window");
  std::string bin = Build(dir, R"(
param input: string
param output: string
param brokers: string = "127.0.0.1:9092"
schema Click { user: string, ts: timestamp, n: int }
from kafka(topic: input, brokers: brokers, group: "codegen-io", start: earliest) format json as Click
  event time ts watermark 5s
  | key by user
  | window tumbling 10s
  | aggregate count() as clicks, sum(n) as total
  | into kafka(topic: output, brokers: brokers) format json
)");
  auto input = env_.CreateUniqueTopic("cgio-clicks", 4);
  ASSERT_TRUE(input.ok()) << input.status().ToString();
  std::vector<KafkaRecord> records;
  // (user, window start) -> (count, sum), computed from the records as they are produced.
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> want;
  uint64_t rng = 12345;
  auto next = [&rng](uint64_t bound) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (rng >> 33) % bound;
  };
  for (int32_t p = 0; p < 4; ++p) {
    for (int64_t j = 0; j < 60; ++j) {
      // At most 4 s behind the partition's largest time so far: never late with watermark 5s.
      int64_t ts = T0() + j * 700 - static_cast<int64_t>(next(4001));
      std::string user = "u" + std::to_string(next(6));
      int64_t n = static_cast<int64_t>(next(10));
      records.push_back(KafkaRecord{p, "", ClickJson(user, ts, n)});
      auto& agg = want[{user, ts - ((ts % kWindow) + kWindow) % kWindow}];
      agg.first += 1;
      agg.second += n;
    }
    records.push_back(KafkaRecord{p, "", ClickJson("flush", T0() + 3600000, 0)});
  }
  ASSERT_TRUE(env_.Produce(*input, records).ok());
  std::vector<std::string> want_lines;
  for (const auto& [key, agg] : want) {
    want_lines.push_back("{\"user\":" + JsonString(key.first) +
                         ",\"window_start\":" + JsonString(Rfc3339(key.second)) +
                         ",\"window_end\":" + JsonString(Rfc3339(key.second + kWindow)) +
                         ",\"clicks\":" + std::to_string(agg.first) +
                         ",\"total\":" + std::to_string(agg.second) + "}");
  }
  for (int parallelism : {1, 4}) {
    SCOPED_TRACE("parallelism " + std::to_string(parallelism));
    auto output = env_.CreateUniqueTopic("cgio-counts", 3);
    ASSERT_TRUE(output.ok()) << output.status().ToString();
    Background job({bin, "--set", "input=" + *input, "--set", "output=" + *output, "--set",
                    "brokers=" + env_.brokers(), "--parallelism", std::to_string(parallelism),
                    "--progress-interval", "0"},
                   dir);
    auto got = env_.ConsumeCount(*output, want_lines.size(), Isolation::kReadCommitted,
                                 test::Millis(180000));
    std::string err = job.Err();
    job.Stop(30);
    ASSERT_TRUE(got.ok()) << got.status().ToString() << "\n" << err;
    // Nothing beyond the reference arrives (read again after the job stopped).
    auto all = env_.ConsumeToEnd(*output, Isolation::kReadCommitted);
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    std::vector<std::string> lines;
    for (const KafkaRecord& r : *all) {
      lines.push_back(r.value);
      std::string user = r.value.substr(9, r.value.find('"', 9) - 9);
      EXPECT_EQ(r.key, user) << r.value;
      EXPECT_EQ(r.partition, JavaPartition(r.key, 3)) << r.key;
    }
    EXPECT_EQ(Sorted(lines), Sorted(want_lines));
  }
}

// `idle`: three of four partitions never get a record; once they are idle, the one partition with
// data moves the watermark alone and every window fires (without `idle` none would).
TEST_F(CodegenIoKafka, IdlePartitionsDoNotHoldTheWatermark) {
  std::string dir = ScratchDir("kafka_idle");
  std::string bin = Build(dir, R"(
param input: string
param output: string
param brokers: string
schema Click { user: string, ts: timestamp, n: int }
from kafka(topic: input, brokers: brokers) format json as Click
  event time ts watermark 1s idle 2s
  | key by user
  | window tumbling 10s
  | aggregate count() as clicks, sum(n) as total
  | into kafka(topic: output, brokers: brokers) format json
)");
  auto input = env_.CreateUniqueTopic("cgio-idle-in", 4);
  auto output = env_.CreateUniqueTopic("cgio-idle-out", 1);
  ASSERT_TRUE(input.ok() && output.ok());
  std::vector<KafkaRecord> records;
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> want;
  for (int64_t j = 0; j < 40; ++j) {
    int64_t ts = T0() + j * 1500;
    std::string user = j % 3 == 0 ? "x" : "y";
    records.push_back(KafkaRecord{0, "", ClickJson(user, ts, j)});
    auto& agg = want[{user, ts - ts % kWindow}];
    agg.first += 1;
    agg.second += j;
  }
  records.push_back(KafkaRecord{0, "", ClickJson("flush", T0() + 3600000, 0)});
  ASSERT_TRUE(env_.Produce(*input, records).ok());
  std::vector<std::string> want_lines;
  for (const auto& [key, agg] : want) {
    want_lines.push_back("{\"user\":" + JsonString(key.first) +
                         ",\"window_start\":" + JsonString(Rfc3339(key.second)) +
                         ",\"window_end\":" + JsonString(Rfc3339(key.second + kWindow)) +
                         ",\"clicks\":" + std::to_string(agg.first) +
                         ",\"total\":" + std::to_string(agg.second) + "}");
  }
  Background job({bin, "--set", "input=" + *input, "--set", "output=" + *output, "--set",
                  "brokers=" + env_.brokers(), "--parallelism", "4", "--progress-interval", "0"},
                 dir);
  auto got = env_.ConsumeCount(*output, want_lines.size(), Isolation::kReadCommitted,
                               test::Millis(180000));
  std::string err = job.Err();
  job.Stop(30);
  ASSERT_TRUE(got.ok()) << got.status().ToString() << "\n" << err;
  std::vector<std::string> lines;
  for (const KafkaRecord& r : *got) lines.push_back(r.value);
  EXPECT_EQ(Sorted(lines), Sorted(want_lines));
}

// CSV (positional) from Kafka to Kafka keyed by two values; an unreachable broker on either side
// fails the job with exit code 1 and a message naming the brokers, well before the test's time
// limit.
TEST_F(CodegenIoKafka, CsvThroughKafkaAndBrokerDownIsAClearError) {
  std::string dir = ScratchDir("kafka_csv");
  std::string bin = Build(dir, R"(
param input: string
param output: string
param in_brokers: string
param out_brokers: string
schema P { id: string, v: int, tag: string? }
from kafka(topic: input, brokers: in_brokers) format csv as P
  on error skip
  | where v > 0
  | key by id, v
  | into kafka(topic: output, brokers: out_brokers) format csv
)");
  auto input = env_.CreateUniqueTopic("cgio-csv-in", 2);
  auto output = env_.CreateUniqueTopic("cgio-csv-out", 2);
  ASSERT_TRUE(input.ok() && output.ok());
  ASSERT_TRUE(env_.Produce(*input, {{0, "", "a,1,\"x,y\""},
                                    {1, "", "b,-2,"},
                                    {1, "", "c,oops,"},
                                    {0, "", "\"d\"\"\",3,\"\""}})
                  .ok());
  std::vector<std::string> common = {
      bin, "--set", "input=" + *input, "--set", "output=" + *output, "--progress-interval", "0"};
  {
    std::vector<std::string> argv = common;
    argv.insert(argv.end(), {"--set", "in_brokers=" + env_.brokers(), "--set",
                             "out_brokers=" + env_.brokers()});
    Background job(argv, dir);
    auto got = env_.ConsumeCount(*output, 2, Isolation::kReadCommitted, test::Millis(120000));
    // Both outputs come from partition 0; the skipped record is in partition 1, read on its own
    // time.
    std::string err = job.ErrOnceContains("kafka topic " + *input + " partition 1 offset 1", 60);
    job.Stop(30);
    ASSERT_TRUE(got.ok()) << got.status().ToString() << "\n" << err;
    std::vector<std::tuple<std::string, std::string, int32_t>> seen;
    for (const KafkaRecord& r : *got) seen.emplace_back(r.key, r.value, r.partition);
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(seen.size(), 2u);
    // Several key values: the key is their CSV text.
    std::string key_d = "\"d\"\"\",3";
    EXPECT_EQ(seen[0],
              std::make_tuple(key_d, std::string("\"d\"\"\",3,\"\""), JavaPartition(key_d, 2)));
    EXPECT_EQ(seen[1], std::make_tuple(std::string("a,1"), std::string("a,1,\"x,y\""),
                                       JavaPartition("a,1", 2)));
    EXPECT_NE(err.find("skipped undecodable record"), std::string::npos) << err;
    EXPECT_NE(err.find("kafka topic " + *input + " partition 1 offset 1"), std::string::npos)
        << err;
  }
  for (bool source_down : {true, false}) {
    SCOPED_TRACE(source_down ? "source broker down" : "sink broker down");
    std::vector<std::string> argv = common;
    std::string down = "127.0.0.1:1";
    argv.insert(argv.end(), {"--set", "in_brokers=" + (source_down ? down : env_.brokers()),
                             "--set", "out_brokers=" + (source_down ? env_.brokers() : down)});
    Ran ran = RunLimited(argv, 150);  // 124 (killed at the limit) would be a hang
    EXPECT_EQ(ran.exit_code, 1) << ran.err;
    EXPECT_NE(ran.err.find(down), std::string::npos) << ran.err;
  }
}

// `on error fail` (the default) on a Kafka source: exit 1 naming topic, partition and offset.
TEST_F(CodegenIoKafka, MalformedRecordFailsNamingPartitionAndOffset) {
  std::string dir = ScratchDir("kafka_fail");
  std::string bin = Build(dir, R"(
param input: string
param brokers: string
schema A { x: int }
from kafka(topic: input, brokers: brokers) format json as A | into stdout format json
)");
  auto input = env_.CreateUniqueTopic("cgio-bad", 2);
  ASSERT_TRUE(input.ok()) << input.status().ToString();
  ASSERT_TRUE(env_.Produce(*input, {{1, "", "{\"x\":1}"}, {1, "", "{\"x\":\"one\"}"}}).ok());
  Ran ran =
      RunLimited({bin, "--set", "input=" + *input, "--set", "brokers=" + env_.brokers()}, 150);
  EXPECT_EQ(ran.exit_code, 1) << ran.err;
  EXPECT_NE(ran.err.find("cannot decode source at job.flow:5 kafka topic " + *input +
                         " partition 1 offset 1"),
            std::string::npos)
      << ran.err;
}

// `properties:` in a script: librdkafka settings with ${ENV} values reach the clients (the copy
// runs); an unset variable and a setting Flow owns are usage errors (exit 2) that say what to do.
TEST_F(CodegenIoKafka, ScriptPropertiesReachTheClientsAndFlowsOwnAreRefused) {
  std::string dir = ScratchDir("kafka_props");
  std::string bin = Build(dir, R"(
param input: string
param output: string
param brokers: string
schema A { x: int }
from kafka(topic: input, brokers: brokers, properties: ["client.id=flow-cgio", "fetch.wait.max.ms=${FLOW_CGIO_WAIT}"])
  format json as A
  | into kafka(topic: output, brokers: brokers, properties: ["linger.ms=1"]) format json
)");
  auto input = env_.CreateUniqueTopic("cgio-props-in", 1);
  auto output = env_.CreateUniqueTopic("cgio-props-out", 1);
  ASSERT_TRUE(input.ok() && output.ok());
  ASSERT_TRUE(env_.Produce(*input, {{0, "", "{\"x\":1}"}, {0, "", "{\"x\":2}"}}).ok());
  const std::vector<std::string> argv = {bin,
                                         "--set",
                                         "input=" + *input,
                                         "--set",
                                         "output=" + *output,
                                         "--set",
                                         "brokers=" + env_.brokers()};
  ::unsetenv("FLOW_CGIO_WAIT");
  Ran unset = RunLimited(argv, 60);
  EXPECT_EQ(unset.exit_code, 2) << unset.err;
  EXPECT_NE(unset.err.find("FLOW_CGIO_WAIT"), std::string::npos) << unset.err;
  ::setenv("FLOW_CGIO_WAIT", "50", 1);
  {
    // The source is unbounded: once both records are out, a SIGTERM stops the job (exit 0).
    Background job(argv, dir);
    auto got = env_.ConsumeCount(*output, 2, Isolation::kReadUncommitted, test::Millis(60000));
    EXPECT_TRUE(got.ok()) << got.status().ToString() << "\n" << job.Err();
    EXPECT_EQ(job.Stop(30), 0) << job.Err();
  }
  ::unsetenv("FLOW_CGIO_WAIT");

  std::string own = Build(dir, R"(
schema A { x: int }
from kafka(topic: "t", brokers: "127.0.0.1:1", properties: ["group.id=mine"]) format json as A
  | into stdout format json
)");
  Ran refused = RunLimited({own}, 60);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("`group.id` cannot be set"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("`group:`"), std::string::npos) << refused.err;
}

// `transaction_timeout` and `retry_timeout` of an exactly-once Kafka sink reach its transaction:
// a timeout shorter than a checkpoint can take is refused at start naming both (exit 1, not
// retried), and a long enough one copies the input exactly once.
TEST_F(CodegenIoKafka, ScriptTransactionSettingsReachTheExactlyOnceSink) {
  std::string dir = ScratchDir("kafka_txn_settings");
  auto script = [](const std::string& timeout) {
    return R"(
param input: string
param output: string
param brokers: string
schema A { x: int }
from kafka(topic: input, brokers: brokers) format json as A
  | into kafka(topic: output, brokers: brokers, transaction_timeout: )" +
           timeout + R"(, retry_timeout: 5s) format json exactly_once
)";
  };
  auto input = env_.CreateUniqueTopic("cgio-txn-in", 1);
  auto output = env_.CreateUniqueTopic("cgio-txn-out", 1);
  ASSERT_TRUE(input.ok() && output.ok());
  ASSERT_TRUE(env_.Produce(*input, {{0, "", "{\"x\":1}"}, {0, "", "{\"x\":2}"}}).ok());
  auto argv = [&](const std::string& bin, const std::string& job) {
    return std::vector<std::string>{bin,
                                    "--set",
                                    "input=" + *input,
                                    "--set",
                                    "output=" + *output,
                                    "--set",
                                    "brokers=" + env_.brokers(),
                                    "--checkpoint-interval",
                                    "1s",
                                    "--checkpoint-timeout",
                                    "10s",
                                    "--state-dir",
                                    dir + "/state-" + job,
                                    "--job-id",
                                    test::UniqueName(job)};
  };
  // 10 s checkpoint timeout + 1 s interval + 5 s retry bound (+0.2 s) > 15 s: too short.
  std::string short_bin = Build(dir, script("15s"));
  Ran refused = RunLimited(argv(short_bin, "cgio-txn-short"), 60);
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("15000 ms is too short"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("commit's own bound 5200"), std::string::npos) << refused.err;

  std::string bin = Build(dir, script("2m"));
  Background job(argv(bin, "cgio-txn-ok"), dir);
  auto got = env_.ConsumeCount(*output, 2, Isolation::kReadCommitted, test::Millis(60000));
  EXPECT_TRUE(got.ok()) << got.status().ToString() << "\n" << job.Err();
  EXPECT_EQ(job.Stop(30), 0) << job.Err();
}

}  // namespace
}  // namespace flow::codegen_io_test
