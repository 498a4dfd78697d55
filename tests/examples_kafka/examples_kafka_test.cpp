// examples/kafka_exactly_once.flow, built with flowc and run against the real broker (LABEL
// kafka). Each run gets its own topics through the example's topic parameters, its own consumer
// group, job id and state dir. Input: randomized, out-of-order clicks over several minutes of
// event time in three partitions, with malformed records among them and, last in every
// partition, a record an hour later with an empty url: it moves the watermark past every window
// (the source is unbounded: a window fires only when later event time arrives) and is then
// dropped by the example's `where url != ""`. Output is read with read_committed and compared
// row by row with a reference computed here: every window row once, none twice.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
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
using codegen_test::ProcessScratchDir;
using codegen_test::Rfc3339;
using codegen_test::ScratchDir;
using test::Isolation;
using test::JavaPartition;
using test::KafkaRecord;
using test::KafkaTestEnv;

constexpr int64_t kMinute = 60000;
constexpr int kInputPartitions = 3;
constexpr int kOutputPartitions = 2;

// One produced input record; `bad` ones must end up in the dead-letter topic.
struct Input {
  int32_t partition = 0;
  std::string payload;
  bool bad = false;
  std::string user, url;
  int64_t bytes = 0, ts = 0;
};

// Per (url, window start): views, bytes and the distinct users.
using Reference =
    std::map<std::pair<std::string, int64_t>, std::tuple<int64_t, int64_t, std::set<std::string>>>;

std::string ClickJson(const Input& c, std::mt19937& rng) {
  std::string tags = "[";
  for (uint32_t i = 0, n = rng() % 3; i < n; ++i)
    tags += std::string(i ? "," : "") + "\"t" + std::to_string(rng() % 5) + "\"";
  tags += "]";
  std::string s = "{\"user\":" + JsonString(c.user) + ",\"url\":" + JsonString(c.url) +
                  ",\"bytes\":" + std::to_string(c.bytes) + ",\"tags\":" + tags;
  switch (rng() % 3) {  // ref: missing, null or a string (nullable)
    case 0:
      break;
    case 1:
      s += ",\"ref\":null";
      break;
    default:
      s += ",\"ref\":\"https://example.com/\"";
      break;
  }
  // Timestamps as RFC 3339 text or epoch milliseconds: both are accepted.
  s += ",\"ts\":" + (rng() % 2 ? JsonString(Rfc3339(c.ts)) : std::to_string(c.ts)) + "}";
  return s;
}

// Clicks for every partition with times from `from` to `from + span`, each at most 4 s behind the
// partition's largest time so far (never late for `watermark 5s`), urls with characters JSON must
// escape, some empty urls (filtered by the example) and three malformed records per partition.
std::vector<Input> MakeClicks(std::mt19937& rng, int64_t from, int64_t span, int per_partition) {
  const std::vector<std::string> urls = {
      "/", "/home", "/a?x=1&y=2", "/caf\xc3\xa9", "/quote\"d\\path", ""};
  std::vector<Input> out;
  for (int32_t p = 0; p < kInputPartitions; ++p) {
    std::set<int> bad_at;
    while (bad_at.size() < 3) bad_at.insert(static_cast<int>(rng() % per_partition));
    for (int j = 0; j < per_partition; ++j) {
      if (bad_at.count(j)) {
        Input b;
        b.partition = p;
        b.bad = true;
        switch (j % 3) {
          case 0:
            b.payload = "{\"user\":\"u1\",\"url\":\"/a\",\"bytes\":\"lots\",\"tags\":[],\"ts\":0}";
            break;
          case 1:
            b.payload = "not json at all";
            break;
          default:
            b.payload =
                "{\"user\":\"u2\",\"url\":\"/b\",\"tags\":[],\"ts\":\"2026-03-01T00:00:00Z\"}";
            break;
        }
        out.push_back(b);
      }
      Input c;
      c.partition = p;
      c.ts = from + span * j / per_partition - static_cast<int64_t>(rng() % 4001);
      c.user = "u" + std::to_string(rng() % 12);
      c.url = urls[rng() % urls.size()];
      c.bytes = static_cast<int64_t>(rng() % 10000);
      c.payload = ClickJson(c, rng);
      out.push_back(c);
    }
  }
  return out;
}

// The record that closes every window: an hour after the data, with an empty url.
std::vector<Input> Flush(int64_t ts) {
  std::vector<Input> out;
  for (int32_t p = 0; p < kInputPartitions; ++p) {
    Input c;
    c.partition = p;
    c.payload =
        "{\"user\":\"flush\",\"url\":\"\",\"bytes\":0,\"tags\":[],\"ts\":" + std::to_string(ts) +
        "}";
    c.ts = ts;
    out.push_back(c);
  }
  return out;
}

void AddToReference(const std::vector<Input>& in, Reference* ref) {
  for (const Input& c : in) {
    if (c.bad || c.url.empty()) continue;
    auto& [views, bytes, users] = (*ref)[{c.url, c.ts - ((c.ts % kMinute) + kMinute) % kMinute}];
    views += 1;
    bytes += c.bytes;
    users.insert(c.user);
  }
}

// The output row without `visitors` (compared exactly), as the job's JSON encoder writes it.
std::string RowPrefix(const std::string& url, int64_t start, int64_t views, int64_t bytes) {
  return "{\"url\":" + JsonString(url) + ",\"window_start\":" + JsonString(Rfc3339(start)) +
         ",\"window_end\":" + JsonString(Rfc3339(start + kMinute)) +
         ",\"views\":" + std::to_string(views) + ",\"bytes\":" + std::to_string(bytes);
}

class KafkaExample : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string dir = ProcessScratchDir("kafka_example_build");
    Ran built = BuildJob(std::string(FLOW_SOURCE_DIR) + "/examples/kafka_exactly_once.flow",
                         dir + "/kafka_exactly_once");
    build_error_ = built.exit_code == 0 ? "" : "flowc build failed:\n" + built.err;
    binary_ = dir + "/kafka_exactly_once";
  }

  void SetUp() override {
    ASSERT_EQ(build_error_, "");
    rt::Status s = env_.CheckReachable();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  struct Topics {
    std::string clicks, rejected, output, group, job_id;
  };

  Topics MakeTopics() {
    Topics t;
    auto clicks = env_.CreateUniqueTopic("example-clicks", kInputPartitions);
    auto rejected = env_.CreateUniqueTopic("example-rejected", 1);
    auto output = env_.CreateUniqueTopic("example-page-bytes", kOutputPartitions);
    EXPECT_TRUE(clicks.ok() && rejected.ok() && output.ok());
    if (clicks.ok()) t.clicks = *clicks;
    if (rejected.ok()) t.rejected = *rejected;
    if (output.ok()) t.output = *output;
    t.group = test::UniqueName("example-group");
    t.job_id = test::UniqueName("example-job");
    return t;
  }

  void Produce(const Topics& t, const std::vector<Input>& in) {
    std::vector<KafkaRecord> records;
    for (const Input& c : in) records.push_back(KafkaRecord{c.partition, "", c.payload});
    rt::Status s = env_.Produce(t.clicks, records);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  std::unique_ptr<Background> Start(const Topics& t, int parallelism, const std::string& dir) {
    return std::make_unique<Background>(
        std::vector<std::string>{
            binary_, "--set", "brokers=" + env_.brokers(), "--set", "group=" + t.group, "--set",
            "clicks_topic=" + t.clicks, "--set", "rejected_topic=" + t.rejected, "--set",
            "output_topic=" + t.output, "--parallelism", std::to_string(parallelism), "--state-dir",
            dir + "/state", "--job-id", t.job_id, "--progress-interval", "0"},
        dir);
  }

  // Every committed output row equals one reference row: same url, window, views and bytes
  // exactly, visitors within HyperLogLog error; none missing, none twice. Message keys are the url
  // and pick the Java partitioner's partition.
  void ExpectOutput(const Topics& t, const Reference& ref) {
    auto got = env_.ConsumeToEnd(t.output, Isolation::kReadCommitted);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    std::map<std::string, int64_t> want;  // row prefix -> exact distinct users
    for (const auto& [key, agg] : ref) {
      want[RowPrefix(key.first, key.second, std::get<0>(agg), std::get<1>(agg))] =
          static_cast<int64_t>(std::get<2>(agg).size());
    }
    std::map<std::string, int64_t> seen;
    for (const KafkaRecord& r : *got) {
      size_t at = r.value.rfind(",\"visitors\":");
      ASSERT_NE(at, std::string::npos) << r.value;
      std::string prefix = r.value.substr(0, at);
      int64_t visitors = std::stoll(r.value.substr(at + 12));
      EXPECT_EQ(seen.count(prefix), 0u) << "duplicate row " << r.value;
      seen[prefix] = visitors;
      auto w = want.find(prefix);
      if (w == want.end()) {
        ADD_FAILURE() << "unexpected row " << r.value;
        continue;
      }
      // 2^14 registers: about 0.8% standard error; a dozen users fall in the sketch's exact range,
      // but allow one either way rather than depend on the estimator's rounding.
      EXPECT_LE(std::llabs(visitors - w->second), 1) << r.value << " want visitors " << w->second;
      std::string url = r.value.substr(7, r.value.find(",\"window_start\"") - 7);  // after {"url":
      EXPECT_EQ(JsonString(r.key), url) << "message key of " << r.value;
      EXPECT_EQ(r.partition, JavaPartition(r.key, kOutputPartitions)) << r.key;
    }
    EXPECT_EQ(seen.size(), want.size());
    for (const auto& [prefix, n] : want)
      EXPECT_EQ(seen.count(prefix), 1u) << "missing row " << prefix;
  }

  // The dead-letter topic holds every malformed record (raw text, topic, partition and offset);
  // `exactly` when the job never restarted (the dead-letter sink is at-least-once).
  void ExpectDeadLetters(const Topics& t, const std::vector<Input>& in, bool exactly) {
    std::map<std::string, int> want;  // "<position>|<raw>" -> times
    std::map<int32_t, int64_t> offsets;
    for (const Input& c : in) {
      int64_t offset = offsets[c.partition]++;
      if (!c.bad) continue;
      want["kafka topic " + t.clicks + " partition " + std::to_string(c.partition) + " offset " +
           std::to_string(offset) + "|" + JsonString(c.payload)] = 1;
    }
    ASSERT_GE(want.size(), 3u * kInputPartitions);  // three per partition and MakeClicks call
    auto got = env_.ConsumeToEnd(t.rejected, Isolation::kReadCommitted);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    std::map<std::string, int> seen;
    for (const KafkaRecord& r : *got) {
      // {"source": "...", "position": "...", "error": "...", "raw": "..."}
      size_t pos = r.value.find("\"position\":");
      size_t err = r.value.find(",\"error\":");
      size_t raw = r.value.find(",\"raw\":");
      ASSERT_TRUE(pos != std::string::npos && err != std::string::npos && raw != std::string::npos)
          << r.value;
      EXPECT_NE(r.value.find("\"source\":\"source at kafka_exactly_once.flow:"), std::string::npos)
          << r.value;
      std::string position = r.value.substr(pos + 12, err - pos - 13);
      EXPECT_GT(raw - err, 12u) << "an error message: " << r.value;
      ++seen[position + "|" + r.value.substr(raw + 7, r.value.size() - raw - 8)];
    }
    for (const auto& [k, n] : want) {
      EXPECT_GE(seen[k], 1) << "missing dead letter " << k;
      if (exactly) {
        EXPECT_EQ(seen[k], 1) << k;
      }
    }
    for (const auto& [k, n] : seen) EXPECT_EQ(want.count(k), 1u) << "unexpected dead letter " << k;
  }

  // Waits until the job logged `n` completed checkpoints (bounded; false if it ends first).
  static bool WaitForCheckpoints(Background& job, size_t n, int seconds) {
    auto completed = [n](const std::string& err) {
      size_t count = 0;
      for (size_t at = err.find("result=completed"); at != std::string::npos;
           at = err.find("result=completed", at + 1)) {
        ++count;
      }
      return count >= n;
    };
    return completed(job.WaitForErr(completed, seconds));
  }

  KafkaTestEnv env_;
  static inline std::string binary_;
  static inline std::string build_error_;
};

// At parallelism 1 and 2 (partitions 0 and 2 on subtask 0, 1 on subtask 1): all output, once.
// A graceful stop (SIGTERM) and a restart on the same state dir and job id add nothing.
TEST_F(KafkaExample, EveryWindowOnceAtParallelism1And2) {
  for (int parallelism : {1, 2}) {
    SCOPED_TRACE("parallelism " + std::to_string(parallelism));
    std::string dir = ScratchDir("kafka_example_p" + std::to_string(parallelism));
    std::mt19937 rng(100 + parallelism);
    Topics t = MakeTopics();
    std::vector<Input> in = MakeClicks(rng, T0(), 5 * kMinute, 150);
    std::vector<Input> flush = Flush(T0() + 60 * kMinute);
    in.insert(in.end(), flush.begin(), flush.end());
    Produce(t, in);
    Reference ref;
    AddToReference(in, &ref);
    ASSERT_GE(ref.size(), 25u);
    {
      auto job = Start(t, parallelism, dir);
      auto got =
          env_.ConsumeCount(t.output, ref.size(), Isolation::kReadCommitted, test::Millis(240000));
      std::string err = job->Err();
      int code = job->Stop(60);
      ASSERT_TRUE(got.ok()) << got.status().ToString() << "\n" << err;
      EXPECT_EQ(code, 0) << job->Err();
    }
    {
      // Restart: restores the last committed checkpoint, whose offsets follow every record.
      auto job = Start(t, parallelism, dir);
      bool checkpointed = WaitForCheckpoints(*job, 2, 120);
      int code = job->Stop(60);
      EXPECT_TRUE(checkpointed) << job->Err();
      EXPECT_EQ(code, 0) << job->Err();
      EXPECT_NE(job->Err().find("restoring"), std::string::npos) << job->Err();
    }
    ExpectOutput(t, ref);
    ExpectDeadLetters(t, in, true);
  }
}

// SIGKILL while windows are being written, then a restart on the same state dir and job id while
// the rest of the input arrives: still every window row exactly once for read_committed readers.
TEST_F(KafkaExample, KillAndRestartKeepsExactlyOnce) {
  std::string dir = ScratchDir("kafka_example_kill");
  std::mt19937 rng(7);
  Topics t = MakeTopics();
  std::vector<Input> first = MakeClicks(rng, T0(), 4 * kMinute, 120);
  std::vector<Input> second = MakeClicks(rng, T0() + 4 * kMinute, 4 * kMinute, 120);
  std::vector<Input> flush = Flush(T0() + 60 * kMinute);
  Reference ref;
  AddToReference(first, &ref);
  AddToReference(second, &ref);
  Produce(t, first);
  {
    auto job = Start(t, 2, dir);
    // Some windows of the first part are committed (the watermark passed their end), others not.
    auto some = env_.ConsumeCount(t.output, 3, Isolation::kReadCommitted, test::Millis(240000));
    ASSERT_TRUE(some.ok()) << some.status().ToString() << "\n" << job->Err();
    job->Kill();
  }
  Produce(t, second);
  Produce(t, flush);
  {
    auto job = Start(t, 2, dir);
    auto got =
        env_.ConsumeCount(t.output, ref.size(), Isolation::kReadCommitted, test::Millis(240000));
    std::string err = job->Err();
    int code = job->Stop(60);
    ASSERT_TRUE(got.ok()) << got.status().ToString() << "\n" << err;
    EXPECT_EQ(code, 0) << job->Err();
    EXPECT_NE(err.find("restoring"), std::string::npos) << err;
  }
  ExpectOutput(t, ref);
  std::vector<Input> all = first;
  // Offsets continue per partition across the three produce calls.
  all.insert(all.end(), second.begin(), second.end());
  all.insert(all.end(), flush.begin(), flush.end());
  ExpectDeadLetters(t, all, false);
}

// What a user trying the example sees (docs/connectors.md, "When windows on Kafka fire"): clicks
// within one minute of event time give no output, also after every partition went idle (30 s)
// — the watermark stays 5 s behind the largest ts. One later click in one partition closes the
// minute: the other partitions are idle and do not hold it back.
TEST_F(KafkaExample, WindowsWaitForLaterEventTimeAndIdlePartitionsDoNotHoldThem) {
  std::string dir = ScratchDir("kafka_example_idle");
  std::mt19937 rng(9);
  Topics t = MakeTopics();
  std::vector<Input> in;
  for (const Input& c : MakeClicks(rng, T0() + 5000, 50000, 20)) {
    if (!c.bad) in.push_back(c);
  }
  Produce(t, in);
  Reference ref;
  AddToReference(in, &ref);
  auto job = Start(t, 2, dir);
  // Past the idle timeout, with checkpoints (and so commits) every second meanwhile.
  std::this_thread::sleep_for(std::chrono::seconds(40));
  auto none = env_.ConsumeToEnd(t.output, Isolation::kReadCommitted);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->size(), 0u) << "a window fired before event time passed it: "
                              << (none->empty() ? "" : (*none)[0].value);
  EXPECT_TRUE(WaitForCheckpoints(*job, 5, 60)) << job->Err();
  Input later;
  later.partition = 1;
  later.ts = T0() + kMinute +
             5000;  // watermark = ts - 5 s - 1 ms = the minute's last millisecond: just enough
  later.payload =
      "{\"user\":\"-\",\"url\":\"\",\"bytes\":0,\"tags\":[],\"ts\":" + std::to_string(later.ts) +
      "}";
  Produce(t, {later});
  auto got =
      env_.ConsumeCount(t.output, ref.size(), Isolation::kReadCommitted, test::Millis(120000));
  std::string err = job->Err();
  EXPECT_EQ(job->Stop(60), 0) << job->Err();
  ASSERT_TRUE(got.ok()) << got.status().ToString() << "\n" << err;
  ExpectOutput(t, ref);
}

}  // namespace
}  // namespace flow::codegen_io_test
