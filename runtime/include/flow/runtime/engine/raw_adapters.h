#pragma once
// Adapters between the byte-level connector contract (connectors/connector.h) and typed
// sources/sinks: RawSource + decode function -> SourceFunction<T>; RawSink + encode function ->
// SinkFunction<T>. Errors from the connector are returned as they are; the engine prefixes them
// with the operator's name and subtask.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/connectors/connector.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/log/log.h"

namespace flow::rt {

enum class DecodeErrorPolicy {
  kFail,  // the job fails with a message naming the record's location (default)
  kSkip,  // the record is dropped and counted (flow_decode_errors_total); first few are logged
  kDeadLetter,  // the record is dropped, counted and handed to `dead_letter`
};

struct DecodeErrorHandling {
  DecodeErrorPolicy policy = DecodeErrorPolicy::kFail;
  // Called on the source task's thread with the raw record, the decode error and its location.
  std::function<void(const RawRecord& record, const Status& error, const std::string& location)>
      dead_letter;
};

// What a connector of the operator `ctx` gets from the engine: the job's cancellation flag and,
// with a state dir, <state dir>/connectors/<operator name> (characters outside [A-Za-z0-9._-]
// replaced by '_').
inline ConnectorContext ConnectorContextOf(const OperatorContext& ctx) {
  ConnectorContext c;
  c.cancel = ctx.cancel;
  c.kafka_properties = ctx.kafka_properties;
  c.metrics = ctx.metrics;
  c.job_id = ctx.job_id;
  c.operator_name = ctx.name;
  c.instance = ctx.instance;
  c.handover = ctx.handover;
  if (!ctx.state_dir.empty()) {
    std::string name = ctx.name;
    for (char& ch : name) {
      const bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                        (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
      if (!keep) ch = '_';
    }
    c.durable_dir = ctx.state_dir + "/connectors/" + (name.empty() ? std::string("source") : name);
  }
  return c;
}

using RawSourceFactory = std::function<std::unique_ptr<RawSource>()>;
using RawSinkFactory = std::function<std::unique_ptr<RawSink>()>;

// decode: Status(const RawRecord&, T*). A record's timestamp starts as the RawRecord's timestamp
// (kNoTimestamp when none); the job's timestamp function may replace it.
template <typename T, typename Decode>
class RawSourceFunction final : public SourceFunction<T> {
 public:
  RawSourceFunction(std::unique_ptr<RawSource> raw, Decode decode, DecodeErrorHandling errors)
      : raw_(std::move(raw)), decode_(std::move(decode)), errors_(std::move(errors)) {}

  Status Open(OperatorContext& ctx) override {
    name_ = ctx.name;
    bytes_in_ = ctx.metrics.Counter(kMetricBytesIn, "Bytes read by sources");
    decode_errors_ = ctx.metrics.Counter(kMetricDecodeErrors, "Records that failed to decode");
    raw_->Bind(ConnectorContextOf(ctx));
    return raw_->Open(ctx.subtask, ctx.parallelism);
  }

  Result<PollResult> PollBatch(Batch<T>& out, size_t max) override {
    raw_records_.clear();
    splits_.clear();
    auto r = raw_->Poll(&raw_records_, max, kPollTimeoutMs);
    if (!r.ok()) {
      return r.status();  // the engine adds the source's name and subtask
    }
    int64_t bytes = 0;
    bool has_partitions = false;
    for (const RawRecord& rec : raw_records_) {
      bytes += static_cast<int64_t>(rec.payload.size() + rec.key.size());
      T value{};
      Status s = decode_(rec, &value);
      if (!s.ok()) {
        FLOW_RETURN_IF_ERROR(HandleDecodeError(rec, s));
        continue;
      }
      out.Add(std::move(value), rec.timestamp);
      splits_.push_back(rec.partition);
      has_partitions = has_partitions || rec.partition >= 0;
    }
    if (!has_partitions) splits_.clear();
    bytes_in_->Add(bytes);
    return *r;
  }

  const std::vector<int32_t>* LastSplits() const override {
    return splits_.empty() ? nullptr : &splits_;
  }
  bool SplitsPending() const override { return raw_->SplitsPending(); }
  Status SnapshotPosition(BinaryWriter* out) const override { return raw_->SnapshotPosition(out); }
  Status RestorePosition(BinaryReader* in) override { return raw_->RestorePosition(in); }
  std::optional<std::pair<uint32_t, std::vector<int32_t>>> OwnedSplits() const override {
    return raw_->OwnedSplits();
  }
  Status OnCheckpoint(int64_t id) override { return raw_->OnCheckpoint(id); }
  Status OnCheckpointComplete(int64_t id) override { return raw_->OnCheckpointComplete(id); }
  Status RestoreRescaled(const std::vector<OldSourcePosition>& old,
                         uint32_t old_parallelism) override {
    return raw_->RestoreRescaled(old, old_parallelism);
  }
  Status Close() override { return raw_->Close(); }

 private:
  static constexpr int kPollTimeoutMs = 100;
  static constexpr int64_t kLoggedErrors = 10;

  Status HandleDecodeError(const RawRecord& rec, const Status& error) {
    decode_errors_->Add(1);
    std::string where = raw_->Locate(rec);
    switch (errors_.policy) {
      case DecodeErrorPolicy::kFail:
        return Status(error.code() == StatusCode::kOk ? StatusCode::kInvalidArgument : error.code(),
                      fmt::format("cannot decode {}: {}", where, error.message()));
      case DecodeErrorPolicy::kDeadLetter:
        if (errors_.dead_letter) errors_.dead_letter(rec, error, where);
        [[fallthrough]];
      case DecodeErrorPolicy::kSkip:
        if (++logged_ <= kLoggedErrors) {
          Log(LogLevel::kWarn, "source", "skipped undecodable record",
              {{"source", name_}, {"at", where}, {"error", error.message()}});
        }
        return Status::Ok();
    }
    return Status::Ok();
  }

  std::unique_ptr<RawSource> raw_;
  Decode decode_;
  DecodeErrorHandling errors_;
  std::string name_;
  std::vector<RawRecord> raw_records_;
  std::vector<int32_t> splits_;
  Metric* bytes_in_ = nullptr;
  Metric* decode_errors_ = nullptr;
  int64_t logged_ = 0;
};

template <typename T, typename Decode>
SourceFactory<T> RawSourceAdapter(RawSourceFactory make_raw, Decode decode,
                                  DecodeErrorHandling errors = {}) {
  return [make_raw, decode, errors](uint32_t, uint32_t) -> std::unique_ptr<SourceFunction<T>> {
    return std::make_unique<RawSourceFunction<T, Decode>>(make_raw(), decode, errors);
  };
}

// encode: see SinkEncode (engine/sink.h). The record's event timestamp is passed to
// RawSink::Write unless the encoder set another.
template <typename T, typename Encode>
class RawSinkFunction final : public SinkFunction<T> {
 public:
  RawSinkFunction(std::unique_ptr<RawSink> raw, Encode encode)
      : raw_(std::move(raw)), encode_(std::move(encode)) {}

  Status Open(OperatorContext& ctx) override {
    name_ = ctx.name;
    bytes_out_ = ctx.metrics.Counter(kMetricBytesOut, "Bytes written by sinks");
    raw_->Bind(ConnectorContextOf(ctx));
    FLOW_RETURN_IF_ERROR(raw_->Open(ctx.subtask, ctx.parallelism));
    opened_ = true;
    return Status::Ok();
  }
  Status Write(const Batch<T>& batch) override {
    int64_t bytes = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      key_.clear();
      payload_.clear();
      if constexpr (kHasMeta) {
        meta_.timestamp = kNoTimestamp;
        meta_.headers.clear();
        encode_(batch.records[i], &key_, &payload_, &meta_);
        bytes += static_cast<int64_t>(key_.size() + payload_.size());
        const TimestampMs ts =
            meta_.timestamp != kNoTimestamp ? meta_.timestamp : batch.timestamps[i];
        FLOW_RETURN_IF_ERROR(raw_->WriteWithHeaders(key_, payload_, ts, meta_.headers));
      } else {
        encode_(batch.records[i], &key_, &payload_);
        bytes += static_cast<int64_t>(key_.size() + payload_.size());
        FLOW_RETURN_IF_ERROR(raw_->Write(key_, payload_, batch.timestamps[i]));
      }
    }
    bytes_out_->Add(bytes);
    return Status::Ok();
  }
  Status Flush() override { return raw_->Flush(); }
  void Close() override {
    if (!opened_) return;
    opened_ = false;
    Status s = raw_->Close();
    if (!s.ok())
      Log(LogLevel::kError, "sink", "close failed", {{"sink", name_}, {"error", s.ToString()}});
  }

 private:
  static constexpr bool kHasMeta =
      std::is_invocable_v<Encode&, const T&, std::string*, std::string*, OutMeta*>;
  std::unique_ptr<RawSink> raw_;
  Encode encode_;
  std::string name_;
  std::string key_;
  std::string payload_;
  OutMeta meta_;
  Metric* bytes_out_ = nullptr;
  bool opened_ = false;
};

template <typename T, typename Encode>
SinkFactory<T> RawSinkAdapter(RawSinkFactory make_raw, Encode encode) {
  return [make_raw, encode](uint32_t, uint32_t) -> std::unique_ptr<SinkFunction<T>> {
    return std::make_unique<RawSinkFunction<T, Encode>>(make_raw(), encode);
  };
}

}  // namespace flow::rt
