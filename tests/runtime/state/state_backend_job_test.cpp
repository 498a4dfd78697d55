// The --state-backend flags, and a job whose keyed state runs on the backend they select:
// checkpoints taken with the rocksdb backend restore to the exact per-key counts.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "../engine/test_util.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/options.h"
#include "flow/runtime/state/keyed_state_backend.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

Result<ParsedArgs> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "job");
  return ParseJobArgs(static_cast<int>(args.size()), args.data(), {});
}

TEST(StateBackendFlagsTest, ParsesAndRejectsWithTheFlagName) {
  auto r = Parse(
      {"--state-backend", "rocksdb", "--state-local-dir=/var/tmp", "--state-cache-entries", "500"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->options.state_backend, "rocksdb");
  EXPECT_EQ(r->options.state_local_dir, "/var/tmp");
  EXPECT_EQ(r->options.state_cache_entries, 500u);
  auto d = Parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->options.state_backend, "heap");

  auto bad = Parse({"--state-backend", "leveldb"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--state-backend leveldb"), std::string::npos);
  auto zero = Parse({"--state-cache-entries", "0"});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("--state-cache-entries"), std::string::npos);
  EXPECT_NE(JobUsage("job", {}).find("--state-backend"), std::string::npos);
}

constexpr uint64_t kRecords = 3000;
constexpr int64_t kKeys = 97;

// Counts records per key in a ValueState of a backend built the way keyed operators build
// theirs: with the job's options from the context, in Open (the exec adapters build the operator
// there).
class KeyedCounter final : public OneInputOperator<int64_t, int64_t> {
 public:
  KeyedCounter(std::map<int64_t, int64_t>* out, StateBackendKind* kind) : out_(out), kind_(kind) {}
  Status Open(OperatorContext& ctx) override {
    if (ctx.state_backend == nullptr) return Status::Internal("no state backend options");
    backend_ = std::make_unique<KeyedStateBackend>(KeyGroupSpan::All(), kDefaultMaxParallelism,
                                                   nullptr, *ctx.state_backend);
    counts_ = backend_->CreateValueState<int64_t, int64_t>("counts");
    *kind_ = backend_->kind();
    return Status::Ok();
  }
  Status ProcessBatch(const Batch<int64_t>& batch, Output<int64_t>&) override {
    for (size_t i = 0; i < batch.size(); ++i) counts_->GetOrInsert(batch.records[i] % kKeys) += 1;
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override {
    backend_->SnapshotState(out);
    return Status::Ok();
  }
  Status RestoreState(BinaryReader* in) override { return backend_->RestoreState(in); }
  Status Finish(Output<int64_t>&) override {
    counts_->ForEach([this](const int64_t& k, int64_t& n) { (*out_)[k] = n; });
    return Status::Ok();
  }

 private:
  std::unique_ptr<KeyedStateBackend> backend_;
  ValueState<int64_t, int64_t>* counts_ = nullptr;
  std::map<int64_t, int64_t>* out_;
  StateBackendKind* kind_;
};

Status RunJob(const CheckpointFlags& flags, std::map<int64_t, int64_t>* counts,
              StateBackendKind* kind) {
  JobOptions options;
  options.checkpoint = flags;
  options.state_backend = "rocksdb";
  options.state_cache_entries = 8;  // most keys live only in RocksDB
  Job job(options);
  auto gen = [](uint64_t i, int64_t* out) {
    if (i >= kRecords) return false;
    if (i % 30 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    *out = static_cast<int64_t>(i);
    return true;
  };
  job.Source<int64_t>("numbers", GeneratorSourceFactory<int64_t>(gen),
                      WatermarkSpec{.mode = TimeMode::kNone})
      .Rebalance()
      .Then<int64_t>("count",
                     [counts, kind] { return std::make_unique<KeyedCounter>(counts, kind); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  return testing::ExecuteWithWatchdog(job);
}

TEST(StateBackendJobTest, RocksDbStateRestoresFromAMidRunCheckpoint) {
  fs::path dir =
      fs::temp_directory_path() / ("flow_state_backend_job_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CheckpointFlags flags;
  flags.state_dir = dir.string();
  flags.options.interval_ms = 20;
  flags.retained = 100;
  std::map<int64_t, int64_t> counts;
  StateBackendKind kind = StateBackendKind::kHeap;
  ASSERT_TRUE(RunJob(flags, &counts, &kind).ok());
  EXPECT_EQ(kind, StateBackendKind::kRocksDb);
  std::map<int64_t, int64_t> expected;
  for (uint64_t i = 0; i < kRecords; ++i) expected[static_cast<int64_t>(i) % kKeys] += 1;
  EXPECT_EQ(counts, expected);

  // A checkpoint taken mid-run, restored: the per-key counts end exact.
  std::optional<std::string> mid_run;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (ParseCheckpointDir(entry.path().filename().string()) < 0) continue;
    auto point = VerifyCheckpoint(entry.path().string());
    if (!point.ok()) continue;
    auto sources = SnapshotsOf(point->metadata, "numbers");
    if (sources.size() != 1 || sources[0]->finished) continue;
    BinaryReader r(sources[0]->source_position);
    uint64_t position = 0;
    ASSERT_TRUE(r.GetU64(&position).ok());
    if (position > 0 && position < kRecords) mid_run = entry.path().string();
  }
  ASSERT_TRUE(mid_run.has_value()) << "no checkpoint was taken while the source ran";
  CheckpointFlags restore;
  restore.restore = *mid_run;
  std::map<int64_t, int64_t> restored;
  ASSERT_TRUE(RunJob(restore, &restored, &kind).ok());
  EXPECT_EQ(restored, expected);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace flow::rt
