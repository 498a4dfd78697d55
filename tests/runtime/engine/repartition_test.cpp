// Both halves of a key-by between instances against the real broker (label `kafka`): records a
// RepartitionSink committed come back out of a RepartitionSource in a running job, decoded, with
// their event times, and nothing of an aborted transaction; the job's event time is what the
// progress reports say (held back while an upstream partition is unreported, then the minimum over
// them); a record in the wrong partition fails the job naming where it was read. The expected
// watermarks and records are the test's own.

#include "flow/runtime/engine/repartition.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "flow/runtime/engine/txn_sink.h"
#include "flow/runtime/shuffle/repartition_topic.h"
#include "flow/runtime/txn/repartition_sink.h"
#include "flow/runtime/txn/txn_sink_spec.h"
#include "kafka/kafka_test_env.h"
#include "runtime/txn/txn_test_options.h"

namespace flow::rt {
namespace {

using test::KafkaTestEnv;
using test::Millis;
using test::UniqueName;

struct Rec {
  std::string key;
  int64_t n = 0;
  void Serialize(BinaryWriter& w) const {
    w.PutString(key);
    w.PutI64(n);
  }
  Status Deserialize(BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetString(&key));
    return r.GetI64(&n);
  }
};

uint64_t KeyHash(const Rec& r) {
  return StableHash(std::string_view(r.key));
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Passes records on and remembers the highest watermark that reached it.
class WatermarkProbe final : public OneInputOperator<Rec, Rec> {
 public:
  explicit WatermarkProbe(std::shared_ptr<std::atomic<int64_t>> seen) : seen_(std::move(seen)) {}
  Status ProcessBatch(const Batch<Rec>& batch, Output<Rec>& out) override {
    for (size_t i = 0; i < batch.size(); ++i) out.Emit(batch.records[i], batch.timestamps[i]);
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm, Output<Rec>&) override {
    if (wm > seen_->load()) seen_->store(wm);
    return Status::Ok();
  }

 private:
  std::shared_ptr<std::atomic<int64_t>> seen_;
};

constexpr int32_t kPartitions = 4;

// source_parallelism: of the repartition source; probe_parallelism 0: chained to it (each
// subtask's own watermark), else behind a rebalance (the minimum over the source's subtasks).
// state_dir: checkpoints every 100 ms into it, restoring the newest.
struct Shape {
  uint32_t source_parallelism = 2;
  uint32_t probe_parallelism = 0;
  std::string state_dir;
};

class RepartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status reachable = kafka_.CheckReachable(Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
    job_ = UniqueName("rpsrc");
    auto topic = shuffle::RepartitionTopicName(job_, "orders.window");
    ASSERT_TRUE(topic.ok());
    topic_ = *topic;
    StartWriter();
  }
  // The writing instance: a transaction group with one repartition sink, recovered from what the
  // group committed last (a restart after an abort continues from it).
  void StartWriter() {
    KafkaTransactionOptions o = test_support::TestTransactionOptions(kafka_.brokers(), job_);
    auto group = KafkaTransactionGroup::Start(o, 1);
    ASSERT_TRUE(group.ok()) << group.status().ToString();
    group_ = std::move(group).value();
    RepartitionSinkOptions so;
    so.topic = topic_;
    so.partitions = kPartitions;
    sink_ = std::make_unique<RepartitionSink>(group_.get(), 0, so);
    Status st = sink_->Open(0, 1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    epoch_ = group_->last_committed();
    ASSERT_TRUE(sink_->Recover(epoch_).ok());
    ASSERT_TRUE(sink_->BeginTransaction().ok());
  }
  void TearDown() override {
    sink_.reset();
    group_.reset();
  }

  void Write(const std::vector<Rec>& records, TimestampMs ts) {
    std::vector<std::string> keys, payloads;
    SinkEncode<Rec> encode = RepartitionEncode<Rec>(&KeyHash);
    for (const Rec& r : records) {
      keys.emplace_back();
      payloads.emplace_back();
      encode(r, &keys.back(), &payloads.back(), nullptr);
    }
    std::vector<TxnRecord> batch;
    for (size_t i = 0; i < records.size(); ++i) batch.push_back({keys[i], payloads[i], ts});
    size_t written = 0;
    Status s = sink_->WriteBatch(batch, &written);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // A report of the upstream source `orders.source` (2 partitions) with the given splits.
  void Progress(std::vector<shuffle::SplitProgress> splits) {
    shuffle::ProgressReport r;
    r.writer = "test/0";
    r.sources.push_back(shuffle::SourceProgress{"orders.source", 2, std::move(splits)});
    Status s = sink_->WriteProgress(r);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Commit() {
    ++epoch_;
    ASSERT_TRUE(sink_->PreCommit(epoch_).ok());
    Status s = sink_->Commit(epoch_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(sink_->BeginTransaction().ok());
  }

  // A job: RepartitionSource (parallelism 2) -> WatermarkProbe -> collect. Runs in a thread.
  struct Running {
    std::unique_ptr<Job> job;
    std::shared_ptr<Collected<Rec>> out = std::make_shared<Collected<Rec>>();
    std::shared_ptr<std::atomic<int64_t>> watermark =
        std::make_shared<std::atomic<int64_t>>(kMinWatermark);
    Status result;
    std::thread thread;
  };
  std::unique_ptr<Running> Start(const Shape& shape = Shape()) {
    auto run = std::make_unique<Running>();
    JobOptions options;
    options.parallelism = shape.source_parallelism;
    if (!shape.state_dir.empty()) {
      options.checkpoint.state_dir = shape.state_dir;
      options.checkpoint.options.interval_ms = 100;
    }
    run->job = std::make_unique<Job>(options);
    KafkaSourceOptions ko;
    ko.brokers = kafka_.brokers();
    RepartitionSourceSpec spec;
    spec.topic = topic_;
    spec.partitions = kPartitions;
    spec.upstream_sources = {"orders.source"};
    WatermarkSpec ws;
    ws.mode = TimeMode::kEventTime;
    ws.interval = 50;
    auto seen = run->watermark;
    run->job->Source<Rec>("orders.shuffle", RepartitionSourceFactory<Rec>(ko, spec), ws)
        .Then<Rec>(
            "probe", [seen] { return std::make_unique<WatermarkProbe>(seen); },
            shape.probe_parallelism)
        .Sink("collect", CollectingSinkFactory(run->out), shape.probe_parallelism);
    Running* r = run.get();
    run->thread = std::thread([r] { r->result = r->job->Execute(); });
    return run;
  }
  static void Stop(Running* run) {
    run->job->RequestStop();
    run->thread.join();
  }
  template <typename Pred>
  static bool WaitFor(Pred pred, int64_t ms = 30000) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return pred();
  }

  KafkaTestEnv kafka_;
  std::string job_, topic_;
  std::unique_ptr<KafkaTransactionGroup> group_;
  std::unique_ptr<RepartitionSink> sink_;
  int64_t epoch_ = 0;
};

TEST_F(RepartitionTest, CommittedRecordsComeBackAndEventTimeFollowsTheProgressReports) {
  const TimestampMs t0 = NowMs() - 60000;
  std::vector<Rec> committed;
  for (int i = 0; i < 200; ++i) committed.push_back(Rec{fmt::format("k{}", i % 23), i});
  Write(committed, t0);
  // Only input partition 0 of the upstream source has reported: partition 1 holds time back.
  Progress({{0, t0 + 5000, false, false}});
  Commit();
  std::vector<Rec> aborted{{"x", -1}, {"y", -2}};
  Write(aborted, t0);
  ASSERT_TRUE(sink_->Abort(epoch_ + 1).ok());
  // The group is failed after an abort: a new one (a restart) takes over.
  sink_.reset();
  group_.reset();
  StartWriter();
  ASSERT_EQ(epoch_, 1);

  auto run = Start();
  EXPECT_TRUE(WaitFor([&] { return run->out->size() >= committed.size(); }))
      << run->out->size() << " of " << committed.size();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(run->watermark->load(), kMinWatermark) << "input partition 1 was never reported";

  // Both upstream partitions reported: the minimum of theirs, never more.
  Progress({{0, t0 + 7000, false, false}, {1, t0 + 3000, false, false}});
  Commit();
  EXPECT_TRUE(WaitFor([&] { return run->watermark->load() >= t0 + 3000; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(run->watermark->load(), t0 + 3000);
  // An idle upstream partition stops holding time back.
  Progress({{1, t0 + 3000, true, false}});
  Commit();
  EXPECT_TRUE(WaitFor([&] { return run->watermark->load() >= t0 + 7000; }));
  EXPECT_EQ(run->watermark->load(), t0 + 7000);
  Stop(run.get());
  EXPECT_TRUE(run->result.ok()) << run->result.ToString();

  std::map<std::pair<std::string, int64_t>, int> want, got;
  for (const Rec& r : committed) ++want[{r.key, r.n}];
  for (const auto& item : run->out->Items()) {
    ++got[{item.record.key, item.record.n}];
    EXPECT_EQ(item.ts, t0);
  }
  EXPECT_EQ(got, want);
}

TEST_F(RepartitionTest, ARecordInAnotherKeyGroupsPartitionFailsTheJobNamingWhere) {
  // Key "a" hashes to some partition; write its frame into another one, as a writer built with
  // another partition count would.
  Rec r{"a", 1};
  std::string key, payload;
  RepartitionEncode<Rec> (&KeyHash)(r, &key, &payload, nullptr);
  const int32_t right = shuffle::PartitionOfHash(KeyHash(r), kDefaultMaxParallelism, kPartitions);
  const int32_t wrong = (right + 1) % kPartitions;
  std::string header;
  shuffle::AppendRecordHeader(0, NowMs(), &header);
  const std::string value = header + payload;
  ASSERT_TRUE(kafka_.Produce(topic_, {test::KafkaRecord{wrong, key, value}}).ok());

  auto run = Start();
  run->thread.join();
  EXPECT_EQ(run->result.code(), StatusCode::kCorruption) << run->result.ToString();
  const std::string msg = run->result.message();
  EXPECT_NE(msg.find("partition " + std::to_string(wrong) + " offset 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("belongs in partition " + std::to_string(right)), std::string::npos) << msg;
}

// Five subtasks read four partitions: the fifth has none and must not hold the operator behind
// them at the start of time.
TEST_F(RepartitionTest, ASubtaskWithoutPartitionsIsIdleAndHoldsNothingBack) {
  const TimestampMs t0 = NowMs() - 60000;
  Write({{"a", 1}, {"b", 2}}, t0);
  Progress({{0, t0 + 4000, false, false}, {1, t0 + 6000, false, false}});
  Commit();
  auto run =
      Start({.source_parallelism = kPartitions + 1, .probe_parallelism = 1, .state_dir = ""});
  EXPECT_TRUE(WaitFor([&] { return run->watermark->load() >= t0 + 4000; }))
      << "watermark " << run->watermark->load();
  EXPECT_EQ(run->watermark->load(), t0 + 4000);
  Stop(run.get());
  EXPECT_TRUE(run->result.ok()) << run->result.ToString();
}

// The partitions' progress is part of the source's position: a job restored from a checkpoint
// starts at the event time the reports before it gave, not at the start of time (which would
// fire windows again), with no new report.
TEST_F(RepartitionTest, ProgressIsRestoredFromACheckpoint) {
  const TimestampMs t0 = NowMs() - 60000;
  const std::string dir = fmt::format("/tmp/flow-repartition-test-{}", job_);
  std::filesystem::remove_all(dir);
  Write({{"a", 1}}, t0);
  Progress({{0, t0 + 7000, false, false}, {1, t0 + 3000, false, false}});
  Commit();
  auto first = Start({.source_parallelism = 2, .probe_parallelism = 0, .state_dir = dir});
  ASSERT_TRUE(WaitFor([&] { return first->watermark->load() >= t0 + 3000; }));
  // A checkpoint taken after the reports were read (the watermark shows they were).
  const auto newest = [&] {
    int64_t best = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const int64_t id = ParseCheckpointDir(e.path().filename().string());
      if (id > 0 && std::filesystem::exists(e.path() / "_metadata")) best = std::max(best, id);
    }
    return best;
  };
  // The one after the next: the next may have been triggered before the reports were read.
  const int64_t before = newest();
  ASSERT_TRUE(WaitFor([&] { return newest() > before + 1; }));
  Stop(first.get());
  ASSERT_TRUE(first->result.ok()) << first->result.ToString();

  auto second = Start({.source_parallelism = 2, .probe_parallelism = 0, .state_dir = dir});
  EXPECT_TRUE(WaitFor([&] { return second->watermark->load() >= t0 + 3000; }))
      << "watermark " << second->watermark->load();
  EXPECT_EQ(second->watermark->load(), t0 + 3000);
  EXPECT_EQ(second->out->size(), 0u) << "the restored offsets are past the record";
  Stop(second.get());
  EXPECT_TRUE(second->result.ok()) << second->result.ToString();
  std::filesystem::remove_all(dir);
}

// The writing half's own reports: a job of --instance "a" reads an input topic of two
// partitions in its consumer group and writes through a repartition sink chained to the source;
// the reader's event time is then what one process reading both partitions would have: the lower
// of the two partitions' highest event times (less 1 ms, no out-of-orderness), never more.
TEST_F(RepartitionTest, TheSinksOwnReportsGiveTheReaderTheInputPartitionsEventTime) {
  const TimestampMs t0 = NowMs() - 60000;
  auto input = kafka_.CreateUniqueTopic("rpin", 2);
  ASSERT_TRUE(input.ok()) << input.status().ToString();
  std::vector<test::KafkaRecord> records;
  std::map<std::pair<std::string, int64_t>, int> want;
  for (int i = 0; i < 10; ++i) {
    const int64_t ts = t0 + 1000 * i;
    records.push_back({0, "", fmt::format("p0k{}:{}", i % 3, ts)});
    ++want[{fmt::format("p0k{}", i % 3), ts}];
    if (i < 5) {
      records.push_back({1, "", fmt::format("p1k{}:{}", i % 2, ts)});
      ++want[{fmt::format("p1k{}", i % 2), ts}];
    }
  }
  ASSERT_TRUE(kafka_.Produce(*input, records).ok());

  // The writer: event time from the record (Rec::n), one subtask per input partition.
  const std::string state = fmt::format("/tmp/flow-repartition-writer-{}", job_);
  std::filesystem::remove_all(state);
  JobOptions wo;
  wo.parallelism = 2;
  wo.job_id = job_ + "-writer";
  wo.instance = "a";
  wo.checkpoint.state_dir = state;
  wo.checkpoint.options.interval_ms = 200;
  Job writer(wo);
  KafkaSourceOptions in;
  in.brokers = kafka_.brokers();
  in.topic = *input;
  auto decode = [](const RawRecord& rec, Rec* out) {
    const std::string_view v = rec.payload;
    const size_t colon = v.find(':');
    if (colon == std::string_view::npos) return Status::InvalidArgument("no colon");
    out->key = std::string(v.substr(0, colon));
    out->n = std::stoll(std::string(v.substr(colon + 1)));
    return Status::Ok();
  };
  WatermarkSpec ws;
  ws.mode = TimeMode::kEventTime;
  ws.interval = 50;
  auto orders = writer.Source<Rec>(
      "orders.source",
      RawSourceAdapter<Rec>([in] { return std::make_unique<KafkaSource>(in); }, decode), ws, 0,
      [](const Rec& r) { return r.n; });
  KafkaTxnSinkConfig config;
  config.brokers = kafka_.brokers();
  RepartitionSinkOptions so;
  so.topic = topic_;
  so.partitions = kPartitions;
  so.upstream_sources = {"orders.source"};
  ExactlyOnceSink<Rec>(orders, writer, "orders.shuffle.write", RepartitionTxnSink(config, so),
                       RepartitionEncode<Rec>(&KeyHash));
  Status written;
  std::thread writing([&] { written = writer.Execute(); });

  auto run = Start();
  const TimestampMs expected = t0 + 4000 - 1;  // partition 1's highest event time, less 1 ms
  EXPECT_TRUE(WaitFor([&] { return run->watermark->load() >= expected; }, 60000))
      << "watermark " << run->watermark->load();
  EXPECT_TRUE(WaitFor([&] { return run->out->size() >= records.size(); }, 30000));
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(run->watermark->load(), expected) << "partition 1 has nothing later";
  writer.RequestStop();
  writing.join();
  EXPECT_TRUE(written.ok()) << written.ToString();
  Stop(run.get());
  EXPECT_TRUE(run->result.ok()) << run->result.ToString();
  std::map<std::pair<std::string, int64_t>, int> got;
  for (const auto& item : run->out->Items()) {
    ++got[{item.record.key, item.record.n}];
    EXPECT_EQ(item.ts, item.record.n) << "the event time travels with the record";
  }
  EXPECT_EQ(got, want);
  std::filesystem::remove_all(state);
}

}  // namespace
}  // namespace flow::rt
