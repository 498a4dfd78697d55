// Batched writes into exactly-once sinks (unit): TwoPhaseCommitSink::WriteBatch's default keeps
// Write's order and stops at the first error; the engine's sink driver writes whole batches, and
// retries exactly the records a refused batch did not take, so a job's committed output is its
// input once each and in order; an error in the middle of a batch fails the job and nothing after
// the failing record is written. The references are the generator's own formula.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/txn_sink.h"

namespace flow::rt {
namespace {

// A sink with only Write: WriteBatch is the interface's default.
class WriteOnlySink final : public TwoPhaseCommitSink {
 public:
  explicit WriteOnlySink(std::string fail_on) : fail_on_(std::move(fail_on)) {}
  Status Open(uint32_t, uint32_t) override { return Status::Ok(); }
  Status Recover(int64_t) override { return Status::Ok(); }
  Status BeginTransaction() override { return Status::Ok(); }
  Status Write(std::string_view key, std::string_view payload, TimestampMs ts) override {
    if (payload == fail_on_) return Status::IoError("refused " + std::string(payload));
    written.push_back(std::string(key) + "=" + std::string(payload) + "@" + std::to_string(ts));
    return Status::Ok();
  }
  Status PreCommit(int64_t) override { return Status::Ok(); }
  Status Commit(int64_t) override { return Status::Ok(); }
  Status Abort(int64_t) override { return Status::Ok(); }
  Status Close() override { return Status::Ok(); }
  bool CommitIsResumable() const override { return true; }

  std::vector<std::string> written;

 private:
  std::string fail_on_;
};

TEST(TxnWriteBatchTest, DefaultWriteBatchWritesInOrderAndStopsAtTheFirstError) {
  std::vector<std::string> keys = {"a", "b", "c", "d"};
  std::vector<std::string> payloads = {"1", "2", "bad", "4"};
  std::vector<TxnRecord> records;
  for (size_t i = 0; i < keys.size(); ++i)
    records.push_back(TxnRecord{keys[i], payloads[i], TimestampMs(10 + i)});

  WriteOnlySink all("never");
  size_t written = 99;
  ASSERT_TRUE(all.WriteBatch(records, &written).ok());
  EXPECT_EQ(written, 4u);
  EXPECT_EQ(all.written, (std::vector<std::string>{"a=1@10", "b=2@11", "c=bad@12", "d=4@13"}));

  WriteOnlySink failing("bad");
  Status s = failing.WriteBatch(records, &written);
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("refused bad"), std::string::npos) << s.ToString();
  EXPECT_EQ(written, 2u);
  EXPECT_EQ(failing.written, (std::vector<std::string>{"a=1@10", "b=2@11"}));
}

// What the fake sinks of one job made visible, shared by its subtasks.
struct Store {
  std::mutex mu;
  std::vector<int64_t> committed;
  int64_t refusals = 0;
  int64_t batches = 0;
  int64_t largest_batch = 0;
};

// A resumable transactional sink in memory. Every second WriteBatch takes only the first
// `take` records and answers kUnavailable (a full buffer); a payload equal to `fail_on` is an
// error. Data moves pending -> committed exactly as the 2PC contract says.
class FlakySink final : public TwoPhaseCommitSink {
 public:
  FlakySink(std::shared_ptr<Store> store, size_t take, int64_t fail_on)
      : store_(std::move(store)), take_(take), fail_on_(fail_on) {}
  Status Open(uint32_t, uint32_t) override { return Status::Ok(); }
  Status Recover(int64_t) override { return Status::Ok(); }
  Status BeginTransaction() override { return Status::Ok(); }
  Status Write(std::string_view, std::string_view, TimestampMs) override {
    return Status::Internal("the engine should write batches");
  }
  Status WriteBatch(std::span<const TxnRecord> records, size_t* written) override {
    *written = 0;
    {
      std::lock_guard lock(store_->mu);
      ++store_->batches;
      store_->largest_batch =
          std::max<int64_t>(store_->largest_batch, static_cast<int64_t>(records.size()));
    }
    const bool refuse = (calls_++ % 2 == 1) && records.size() > take_;
    const size_t n = refuse ? take_ : records.size();
    for (size_t i = 0; i < n; ++i) {
      const int64_t v = std::stoll(std::string(records[i].payload));
      if (v == fail_on_) return Status::IoError("cannot write record " + std::to_string(v));
      open_.push_back(v);
      ++*written;
    }
    if (refuse) {
      std::lock_guard lock(store_->mu);
      ++store_->refusals;
      return Status::Unavailable("buffer full");
    }
    return Status::Ok();
  }
  Status PreCommit(int64_t id) override {
    pending_.emplace_back(id, std::move(open_));
    open_.clear();
    return Status::Ok();
  }
  Status Commit(int64_t id) override {
    std::lock_guard lock(store_->mu);
    while (!pending_.empty() && pending_.front().first <= id) {
      for (int64_t v : pending_.front().second) store_->committed.push_back(v);
      pending_.erase(pending_.begin());
    }
    return Status::Ok();
  }
  Status Abort(int64_t) override { return Status::Ok(); }
  Status Close() override { return Status::Ok(); }
  bool CommitIsResumable() const override { return true; }

 private:
  std::shared_ptr<Store> store_;
  size_t take_;
  int64_t fail_on_;
  int64_t calls_ = 0;
  std::vector<int64_t> open_;
  std::vector<std::pair<int64_t, std::vector<int64_t>>> pending_;
};

struct Rec {
  int64_t i = 0;
};

class TxnWriteBatchJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("flow-txn-batch-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Generator 0..n-1 -> FlakySink, parallelism 1, so the committed order is the input order.
  Status Run(int64_t n, size_t take, int64_t fail_on) {
    JobOptions o;
    o.parallelism = 1;
    o.checkpoint.state_dir = (dir_ / "state").string();
    o.checkpoint.interval_ms = 20;
    o.checkpoint.options.interval_ms = 20;
    o.checkpoint.restart.max_attempts = 0;  // the failing test wants the first error
    Job job(o);
    auto gen = [n](uint64_t index, Rec* r) {
      if (static_cast<int64_t>(index) >= n) return false;
      r->i = static_cast<int64_t>(index);
      return true;
    };
    auto s = job.Source<Rec>("gen", GeneratorSourceFactory<Rec>(gen),
                             WatermarkSpec{.mode = TimeMode::kNone});
    TxnSinkSpec spec;
    std::shared_ptr<Store> store = store_;
    spec.factory = [store, take, fail_on](uint32_t, uint32_t) {
      return std::make_unique<FlakySink>(store, take, fail_on);
    };
    ExactlyOnceSink<Rec>(
        s, job, "flaky", std::move(spec),
        [](const Rec& r, std::string*, std::string* payload) { *payload = std::to_string(r.i); });
    return job.Execute();
  }

  std::filesystem::path dir_;
  std::shared_ptr<Store> store_ = std::make_shared<Store>();
};

TEST_F(TxnWriteBatchJobTest, RefusedBatchesAreRetriedFromTheFirstRecordNotTaken) {
  constexpr int64_t kN = 20000;
  Status s = Run(kN, 7, -1);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::lock_guard lock(store_->mu);
  std::vector<int64_t> expected(kN);
  for (int64_t i = 0; i < kN; ++i) expected[static_cast<size_t>(i)] = i;
  EXPECT_EQ(store_->committed, expected);
  // The sink saw whole batches (not one call per record), and the refusals really happened.
  EXPECT_GT(store_->largest_batch, 7);
  EXPECT_GT(store_->refusals, 0);
  EXPECT_LT(store_->batches, kN);
}

TEST_F(TxnWriteBatchJobTest, ErrorInTheMiddleOfABatchFailsTheJobAndNothingAfterItIsCommitted) {
  constexpr int64_t kFailOn = 1234;
  Status s = Run(5000, 1000000, kFailOn);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot write record 1234"), std::string::npos) << s.ToString();
  std::lock_guard lock(store_->mu);
  // Whatever was committed before the failure is a prefix of the input, never past the error.
  for (size_t i = 0; i < store_->committed.size(); ++i)
    ASSERT_EQ(store_->committed[i], static_cast<int64_t>(i));
  EXPECT_LT(static_cast<int64_t>(store_->committed.size()), kFailOn);
}

}  // namespace
}  // namespace flow::rt
