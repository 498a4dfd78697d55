// RawSource + decode and RawSink + encode adapters in running jobs, with the decode error policies.

#include <gtest/gtest.h>

#include <charconv>
#include <mutex>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "test_util.h"

namespace flow::rt {
namespace {

// Serves lines as payloads (1-based line numbers as offsets), in polls of at most 2 records.
class LinesSource final : public RawSource {
 public:
  explicit LinesSource(std::vector<std::string> lines) : lines_(std::move(lines)) {}
  Status Open(uint32_t, uint32_t) override { return Status::Ok(); }
  Result<PollResult> Poll(std::vector<RawRecord>* out, size_t max_records, int) override {
    for (size_t n = 0; n < std::min<size_t>(max_records, 2) && next_ < lines_.size();
         ++n, ++next_) {
      RawRecord r;
      r.payload = lines_[next_];
      r.offset = static_cast<int64_t>(next_ + 1);
      r.timestamp = 1000 + static_cast<TimestampMs>(next_);
      out->push_back(r);
    }
    return next_ < lines_.size() ? PollResult::kRecords : PollResult::kEnd;
  }
  std::string Locate(const RawRecord& r) const override {
    std::string where = "file test.txt line ";
    where += std::to_string(r.offset);
    return where;
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    out->PutU64(next_);
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override { return in->GetU64(&next_); }
  Status Close() override { return Status::Ok(); }

 private:
  std::vector<std::string> lines_;
  uint64_t next_ = 0;
};

Status DecodeInt(const RawRecord& r, int64_t* out) {
  auto [p, ec] = std::from_chars(r.payload.data(), r.payload.data() + r.payload.size(), *out);
  if (ec != std::errc() || p != r.payload.data() + r.payload.size()) {
    return Status::InvalidArgument("not an integer: '" + std::string(r.payload) + "'");
  }
  return Status::Ok();
}

const std::vector<std::string> kLines = {"1", "2", "x3", "4", "5"};

RawSourceFactory Lines() {
  return [] { return std::make_unique<LinesSource>(kLines); };
}

TEST(RawSourceAdapterTest, FailPolicyNamesTheLocation) {
  Job job(JobOptions{});
  job.Source<int64_t>("numbers", RawSourceAdapter<int64_t>(Lines(), DecodeInt), {}, 1)
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  Status s = testing::ExecuteWithWatchdog(job);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      s.message().find(
          "operator 'numbers' subtask 0: cannot decode file test.txt line 3: not an integer: 'x3'"),
      std::string::npos)
      << s.message();
}

TEST(RawSourceAdapterTest, SkipPolicyDropsAndCounts) {
  JobOptions options;
  options.log_level = LogLevel::kError;
  Job job(options);
  auto out = std::make_shared<Collected<int64_t>>();
  DecodeErrorHandling skip;
  skip.policy = DecodeErrorPolicy::kSkip;
  job.Source<int64_t>("numbers", RawSourceAdapter<int64_t>(Lines(), DecodeInt, skip), {}, 1)
      .Sink("sink", CollectingSinkFactory(out));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  std::vector<std::pair<int64_t, TimestampMs>> got;
  for (const auto& i : out->Items()) got.emplace_back(i.record, i.ts);
  // The raw timestamp travels with each record.
  EXPECT_EQ(got, (std::vector<std::pair<int64_t, TimestampMs>>{
                     {1, 1000}, {2, 1001}, {4, 1003}, {5, 1004}}));
  EXPECT_EQ(job.metrics().Sum("flow_decode_errors_total"), 1);
  EXPECT_EQ(job.metrics().Sum("flow_bytes_in_total"), 1 + 1 + 2 + 1 + 1);
}

TEST(RawSourceAdapterTest, DeadLetterPolicyHandsOverTheRecord) {
  JobOptions options;
  options.log_level = LogLevel::kError;
  Job job(options);
  auto out = std::make_shared<Collected<int64_t>>();
  std::mutex mu;
  std::vector<std::string> dead;
  DecodeErrorHandling dl;
  dl.policy = DecodeErrorPolicy::kDeadLetter;
  dl.dead_letter = [&](const RawRecord& r, const Status& error, const std::string& where) {
    std::lock_guard<std::mutex> lock(mu);
    dead.push_back(std::string(r.payload) + "|" + where + "|" + error.message());
  };
  job.Source<int64_t>("numbers", RawSourceAdapter<int64_t>(Lines(), DecodeInt, dl), {}, 1)
      .Sink("sink", CollectingSinkFactory(out));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  EXPECT_EQ(out->size(), 4u);
  EXPECT_EQ(dead, (std::vector<std::string>{"x3|file test.txt line 3|not an integer: 'x3'"}));
}

struct Written {
  std::mutex mu;
  std::vector<std::string> rows;
  int flushes = 0;
  int closes = 0;
};

class MemorySink final : public RawSink {
 public:
  explicit MemorySink(Written* w) : w_(w) {}
  Status Open(uint32_t, uint32_t) override { return Status::Ok(); }
  Status Write(std::string_view key, std::string_view payload, TimestampMs ts) override {
    std::lock_guard<std::mutex> lock(w_->mu);
    w_->rows.push_back(std::string(key) + "=" + std::string(payload) + "@" + std::to_string(ts));
    return Status::Ok();
  }
  Status Flush() override {
    std::lock_guard<std::mutex> lock(w_->mu);
    ++w_->flushes;
    return Status::Ok();
  }
  Status Close() override {
    std::lock_guard<std::mutex> lock(w_->mu);
    ++w_->closes;
    return Status::Ok();
  }

 private:
  Written* w_;
};

TEST(RawSinkAdapterTest, EncodesEveryRecordAndFlushesAtEnd) {
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  Written w;
  job.Source<int64_t>("nums", VectorSourceFactory(std::vector<int64_t>{1, 2, 3}, {10, 20, 30}))
      .Sink("out",
            RawSinkAdapter<int64_t>([&w] { return std::make_unique<MemorySink>(&w); },
                                    [](const int64_t& v, std::string* key, std::string* payload) {
                                      *key = 'k';
                                      *key += std::to_string(v);
                                      *payload = std::to_string(v * v);
                                    }));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  std::sort(w.rows.begin(), w.rows.end());
  EXPECT_EQ(w.rows, (std::vector<std::string>{"k1=1@10", "k2=4@20", "k3=9@30"}));
  EXPECT_EQ(w.flushes, 2);
  EXPECT_EQ(w.closes, 2);
  EXPECT_EQ(job.metrics().Sum("flow_bytes_out_total"), 2 + 1 + 2 + 1 + 2 + 1);
}

}  // namespace
}  // namespace flow::rt
