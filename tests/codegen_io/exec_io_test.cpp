// The runtime glue of generated sources and sinks (flow/runtime/exec/decoding_source.h,
// record_decoders.h, encoding_sink.h) with scripted connectors: error policies, CSV header rows,
// per-record splits, option translation and the delivery hook.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flow/runtime/exec/decoding_source.h"
#include "flow/runtime/exec/encoding_sink.h"
#include "flow/runtime/exec/record_decoders.h"

namespace flow::exec {
namespace {

struct Reading {
  std::string sensor;
  double celsius = 0;
};

// Yields its records in one poll, then kEnd.
class ScriptedSource final : public rt::RawSource {
 public:
  explicit ScriptedSource(std::vector<rt::RawRecord> records) : records_(std::move(records)) {}
  rt::Status Open(uint32_t, uint32_t) override { return rt::Status::Ok(); }
  rt::Result<rt::PollResult> Poll(std::vector<rt::RawRecord>* out, size_t, int) override {
    if (done_) return rt::PollResult::kEnd;
    done_ = true;
    out->insert(out->end(), records_.begin(), records_.end());
    return rt::PollResult::kRecords;
  }
  std::string Locate(const rt::RawRecord& r) const override {
    return "kafka topic t partition " + std::to_string(r.partition) + " offset " +
           std::to_string(r.offset);
  }
  rt::Status SnapshotPosition(rt::BinaryWriter*) const override { return rt::Status::Ok(); }
  rt::Status RestorePosition(rt::BinaryReader*) override { return rt::Status::Ok(); }
  rt::Status Close() override { return rt::Status::Ok(); }
  // Partitions 0, 1 and 3 of 4, once it has polled (as a consumer knows its assignment).
  std::optional<std::pair<uint32_t, std::vector<int32_t>>> OwnedSplits() const override {
    if (!done_) return std::nullopt;
    return std::make_pair(4u, std::vector<int32_t>{0, 1, 3});
  }

 private:
  std::vector<rt::RawRecord> records_;
  bool done_ = false;
};

// Keeps what is written; counts flushes.
struct SinkLog {
  std::vector<std::string> payloads;
  int flushes = 0;
};
class LoggingSink final : public rt::RawSink {
 public:
  explicit LoggingSink(std::shared_ptr<SinkLog> log) : log_(std::move(log)) {}
  rt::Status Open(uint32_t, uint32_t) override { return rt::Status::Ok(); }
  rt::Status Write(std::string_view, std::string_view payload, rt::TimestampMs) override {
    log_->payloads.emplace_back(payload);
    return rt::Status::Ok();
  }
  rt::Status Flush() override {
    ++log_->flushes;
    return rt::Status::Ok();
  }
  rt::Status Close() override { return rt::Status::Ok(); }

 private:
  std::shared_ptr<SinkLog> log_;
};

rt::Status DecodeReading(rt::CsvDecoder& d, Reading* out) {
  FLOW_RETURN_IF_ERROR(d.Read<rt::CsvString>(0, &out->sensor));
  return d.Read<rt::CsvFloat>(1, &out->celsius);
}

constexpr std::array<std::string_view, 2> kNames{"sensor", "celsius"};
constexpr std::array<bool, 2> kRequired{true, true};

rt::RawRecord Rec(std::string_view payload, int32_t partition, int64_t offset) {
  rt::RawRecord r;
  r.payload = payload;
  r.partition = partition;
  r.offset = offset;
  return r;
}

using Source = DecodingSource<Reading, CsvRecordDecoder<Reading, decltype(&DecodeReading)>>;

std::unique_ptr<Source> MakeSource(std::vector<rt::RawRecord> records, ErrorPolicy policy,
                                   bool header) {
  CsvFormat format;
  format.header = header;
  return std::make_unique<Source>(
      std::make_unique<ScriptedSource>(std::move(records)),
      std::make_unique<CsvRecordDecoder<Reading, decltype(&DecodeReading)>>(&DecodeReading, format,
                                                                            kNames, kRequired),
      std::move(policy));
}

TEST(ExecDecodingSource, FailNamesSourcePositionAndReason) {
  ErrorPolicy policy;
  policy.source = "source at job.flow:3";
  auto src = MakeSource({Rec("a,1.5", 0, 10), Rec("b,warm", 2, 11)}, policy, false);
  rt::MetricsRegistry registry;
  rt::OperatorContext ctx;
  ctx.metrics = rt::MetricGroup(&registry, "src", 0);
  ASSERT_TRUE(src->Open(ctx).ok());
  rt::Batch<Reading> batch;
  auto r = src->PollBatch(batch, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), rt::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(
                "cannot decode source at job.flow:3 kafka topic t partition 2 offset 11: "),
            std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("expected float"), std::string::npos);
  EXPECT_EQ(registry.Sum(rt::kMetricDecodeErrors), 1);
}

TEST(ExecDecodingSource, SkipCountsAndKeepsSplitsOfGoodRecords) {
  ErrorPolicy policy;
  policy.on_error = OnError::kSkip;
  auto src = MakeSource({Rec("a,1.5", 0, 1), Rec("b,x", 1, 1), Rec("c,2", 3, 7), Rec("d", 1, 2)},
                        policy, false);
  rt::MetricsRegistry registry;
  rt::OperatorContext ctx;
  ctx.metrics = rt::MetricGroup(&registry, "src", 0);
  ASSERT_TRUE(src->Open(ctx).ok());
  rt::Batch<Reading> batch;
  auto r = src->PollBatch(batch, 100);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch.records[0].sensor, "a");
  EXPECT_EQ(batch.records[1].celsius, 2.0);
  ASSERT_NE(src->LastSplits(), nullptr);
  EXPECT_EQ(*src->LastSplits(), (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(registry.Sum(kMetricRecordsSkipped), 2);
  EXPECT_EQ(registry.Sum(kMetricDeadLetters), 0);
  EXPECT_TRUE(src->Close().ok());
}

// A repartition writer under --instance reports event time per split of its sources from these;
// a decoding source that hid them left every window behind the topic waiting for good.
TEST(ExecDecodingSource, ReportsTheSplitsItsConnectorOwns) {
  auto src = MakeSource({Rec("a,1.5", 0, 1), Rec("c,2", 3, 7)}, ErrorPolicy{}, false);
  rt::MetricsRegistry registry;
  rt::OperatorContext ctx;
  ctx.metrics = rt::MetricGroup(&registry, "src", 0);
  ASSERT_TRUE(src->Open(ctx).ok());
  EXPECT_FALSE(src->OwnedSplits().has_value()) << "not known before the connector knows them";
  rt::Batch<Reading> batch;
  ASSERT_TRUE(src->PollBatch(batch, 100).ok());
  auto owned = src->OwnedSplits();
  ASSERT_TRUE(owned.has_value());
  EXPECT_EQ(owned->first, 4u);
  EXPECT_EQ(owned->second, (std::vector<int32_t>{0, 1, 3}));
}

// A decoder whose service (a schema registry) fails while decoding one record.
struct ServiceDecoder {
  rt::StatusCode code;
  rt::Result<bool> operator()(const rt::RawRecord& r, Reading* out) {
    if (r.payload == "needs-the-registry") return rt::Status(code, "schema registry http://sr: no");
    out->sensor = std::string(r.payload);
    return true;
  }
};

// Not the record's fault: skipping it would lose it for good, so the job fails instead (and reads
// it again after a restart or a fixed configuration).
TEST(ExecDecodingSource, AServiceFailureFailsTheJobEvenWhenBadRecordsAreSkipped) {
  for (rt::StatusCode code : {rt::StatusCode::kUnavailable, rt::StatusCode::kPermissionDenied}) {
    ErrorPolicy policy;
    policy.on_error = OnError::kSkip;
    DecodingSource<Reading, ServiceDecoder> src(
        std::make_unique<ScriptedSource>(
            std::vector<rt::RawRecord>{Rec("a", 0, 1), Rec("needs-the-registry", 0, 2)}),
        std::make_unique<ServiceDecoder>(ServiceDecoder{code}), policy);
    rt::MetricsRegistry registry;
    rt::OperatorContext ctx;
    ctx.metrics = rt::MetricGroup(&registry, "src", 0);
    ASSERT_TRUE(src.Open(ctx).ok());
    rt::Batch<Reading> batch;
    auto r = src.PollBatch(batch, 100);
    ASSERT_FALSE(r.ok()) << rt::StatusCodeName(code);
    EXPECT_EQ(r.status().code(), code);
    EXPECT_EQ(registry.Sum(kMetricRecordsSkipped), 0) << rt::StatusCodeName(code);
  }
}

TEST(ExecDecodingSource, DeadLettersAreJsonObjectsFlushedPerPoll) {
  auto log = std::make_shared<SinkLog>();
  ErrorPolicy policy;
  policy.on_error = OnError::kDeadLetter;
  policy.source = "s\"1";
  policy.dead_letter = [log] { return std::make_unique<LoggingSink>(log); };
  std::string bad("x,\xff\"\n", 5);
  auto src = MakeSource({Rec("a,1", 0, 1), Rec(bad, 0, 2)}, policy, false);
  rt::MetricsRegistry registry;
  rt::OperatorContext ctx;
  ctx.metrics = rt::MetricGroup(&registry, "src", 0);
  ASSERT_TRUE(src->Open(ctx).ok());
  rt::Batch<Reading> batch;
  ASSERT_TRUE(src->PollBatch(batch, 100).ok());
  EXPECT_EQ(batch.size(), 1u);
  ASSERT_EQ(log->payloads.size(), 1u);
  EXPECT_EQ(log->flushes, 1);
  std::string want_head =
      "{\"source\":\"s\\\"1\",\"position\":\"kafka topic t partition 0 offset 2\",\"error\":\"";
  EXPECT_EQ(log->payloads[0].rfind(want_head, 0), 0u) << log->payloads[0];
  std::string want_tail = "\",\"raw\":\"x,\xEF\xBF\xBD\\\"\"}";
  EXPECT_EQ(log->payloads[0].substr(log->payloads[0].size() - want_tail.size()), want_tail)
      << log->payloads[0];
  EXPECT_EQ(registry.Sum(kMetricDeadLetters), 1);
}

TEST(ExecDecodingSource, HeaderRowsBindColumnsByName) {
  ErrorPolicy policy;
  auto src = MakeSource({Rec("celsius,extra,sensor", 0, 1), Rec("1.5,e,a", 0, 2),
                         Rec("sensor,celsius", 0, 1), Rec("b,2.5", 0, 2)},
                        policy, true);
  rt::OperatorContext ctx;
  ASSERT_TRUE(src->Open(ctx).ok());
  rt::Batch<Reading> batch;
  ASSERT_TRUE(src->PollBatch(batch, 100).ok());
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch.records[0].sensor, "a");
  EXPECT_EQ(batch.records[0].celsius, 1.5);
  EXPECT_EQ(batch.records[1].sensor, "b");
  EXPECT_EQ(batch.records[1].celsius, 2.5);
}

TEST(ExecIoOptions, ScriptArgumentsBecomeConnectorOptions) {
  auto k = SourceOptions("kafka", {{"group", "g"}, {"read_committed", "false"}, {"topic", "t"}},
                         "json", false);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, (rt::ConnectorOptions{
                    {"group_id", "g"}, {"isolation", "read_uncommitted"}, {"topic", "t"}}));
  auto bad = SourceOptions("kafka", {{"read_committed", "maybe"}}, "json", false);
  EXPECT_EQ(bad.status().code(), rt::StatusCode::kInvalidArgument);
  auto header = SourceOptions("kafka", {}, "csv", true);
  EXPECT_EQ(header.status().code(), rt::StatusCode::kInvalidArgument);
  EXPECT_NE(header.status().message().find("header"), std::string::npos);
  auto file = SourceOptions("file", {{"path", "p"}}, "csv", true);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->at("quoted_newlines"), "true");
  EXPECT_EQ(file->at("replay_first_line_on_restore"), "true");
  EXPECT_EQ(SinkOptions("file", {{"path", "out/"}}), (rt::ConnectorOptions{{"directory", "out/"}}));
  EXPECT_TRUE(CsvDelimiter(";").ok());
  for (const char* d : {"", ";;", "\"", "\n"}) EXPECT_FALSE(CsvDelimiter(d).ok()) << d;
}

TEST(ExecIoOptions, BadSinkOptionsNameTheOption) {
  auto bad =
      RawSinkFactoryFor("kafka", {{"topic", "t"}, {"brokers", "b"}, {"partitioner", "random"}});
  EXPECT_NE(bad.status().message().find("partitioner"), std::string::npos)
      << bad.status().ToString();
}

}  // namespace
}  // namespace flow::exec
