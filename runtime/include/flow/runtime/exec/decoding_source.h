#pragma once
// Typed sources over the byte-level connectors (file, stdin, kafka) for generated code, with a
// per-source policy for records that cannot be decoded (`on error` in the script):
//
//   auto src = MakeDecodingSource<Click>("kafka", {{"topic", "clicks"}, {"brokers", b}},
//       [] { return JsonRecordDecoder<Click, decltype(&DecodeClick)>(&DecodeClick); }, policy);
//
// A decoder is made per subtask (they hold parser state) and is called as
//   Result<bool> decoder(const RawRecord&, T* out)
// true: `out` is a record; false: the raw record is not data (a CSV header row); an error: the
// record is malformed and goes to the policy (kUnavailable and kPermissionDenied are not the
// record's fault: they fail the job, see PollBatch):
//   kFail        the job fails: "cannot decode <source> <position>: <reason>", e.g.
//                "cannot decode clicks.source file in.csv line 7: line 7, column 2 (`bytes`): ..."
//                (position from RawSource::Locate: file and line, or kafka partition and offset)
//   kSkip        the record is dropped and counted
//   kDeadLetter  dropped, counted, and written to the dead-letter sink as one JSON object
//                {"source": ..., "position": ..., "error": ..., "raw": ...} (raw: the record's
//                bytes as a JSON string; invalid UTF-8 bytes become U+FFFD). Each source subtask
//                opens its own dead-letter sink and flushes it after every poll that wrote to it,
//                before the position can be checkpointed (at-least-once).
// Metrics (per source subtask): flow_decode_errors_total, flow_records_skipped_total (skip and
// dead_letter), flow_dead_letters_total. A source that dropped records logs one summary line when
// it closes ("source closed ... skipped=N dead_letters=N") and the first 10 drops as warnings.
// Per-record splits (Kafka partitions) are reported to the engine for per-partition watermarks.
// Threading: one instance per subtask thread. Errors: connector errors are returned as they are.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flow/runtime/common/metrics.h"
#include "flow/runtime/connectors/connector_factory.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/exec/io.h"
#include "flow/runtime/formats/json_encoder.h"

namespace flow::exec {

enum class OnError { kFail, kSkip, kDeadLetter };

struct ErrorPolicy {
  OnError on_error = OnError::kFail;  // Default: kFail
  // The script's name of the source, in messages and dead letters ("clicks.source").
  std::string source;
  // kDeadLetter: where dead letters go (a connector kind and options, validated when built).
  rt::RawSinkFactory dead_letter;
};

// The metric names (docs/connectors.md).
inline constexpr std::string_view kMetricRecordsSkipped = "flow_records_skipped_total";
inline constexpr std::string_view kMetricDeadLetters = "flow_dead_letters_total";

// The dead-letter JSON object for one record.
void EncodeDeadLetter(const std::string& source, const std::string& position,
                      const rt::Status& error, std::string_view raw, rt::JsonEncoder* out);

template <typename T, typename Decoder>
class DecodingSource final : public rt::SourceFunction<T> {
 public:
  DecodingSource(std::unique_ptr<rt::RawSource> raw, std::unique_ptr<Decoder> decoder,
                 ErrorPolicy policy)
      : raw_(std::move(raw)), decoder_(std::move(decoder)), policy_(std::move(policy)) {}

  rt::Status Open(rt::OperatorContext& ctx) override {
    name_ = policy_.source.empty() ? ctx.name : policy_.source;
    bytes_in_ = ctx.metrics.Counter(rt::kMetricBytesIn, "Bytes read by sources");
    errors_ = ctx.metrics.Counter(rt::kMetricDecodeErrors, "Records that failed to decode");
    skipped_ = ctx.metrics.Counter(kMetricRecordsSkipped,
                                   "Undecodable records dropped (on error skip/dead_letter)");
    dead_ = ctx.metrics.Counter(kMetricDeadLetters,
                                "Undecodable records written to the dead-letter sink");
    if (policy_.on_error == OnError::kDeadLetter) {
      dead_sink_ = policy_.dead_letter();
      if (dead_sink_ == nullptr) return rt::Status::Internal("dead-letter sink was not validated");
      dead_sink_->Bind(rt::ConnectorContextOf(ctx));
      FLOW_RETURN_IF_ERROR(dead_sink_->Open(ctx.subtask, ctx.parallelism));
    }
    raw_->Bind(rt::ConnectorContextOf(ctx));
    return raw_->Open(ctx.subtask, ctx.parallelism);
  }

  rt::Result<rt::PollResult> PollBatch(rt::Batch<T>& out, size_t max) override {
    raw_records_.clear();
    splits_.clear();
    auto r = raw_->Poll(&raw_records_, max, kPollTimeoutMs);
    if (!r.ok()) return r.status();
    int64_t bytes = 0;
    bool has_partitions = false;
    bool wrote_dead = false;
    for (const rt::RawRecord& rec : raw_records_) {
      bytes += static_cast<int64_t>(rec.payload.size() + rec.key.size());
      T value{};
      rt::Result<bool> d = (*decoder_)(rec, &value);
      if (!d.ok()) {
        // The record may be fine: a service the decoder needs (a schema registry) is not
        // reachable, or refuses our credentials. The job fails before this record's position is
        // checkpointed, and a restart (or the fixed configuration) reads it again.
        if (d.status().code() == rt::StatusCode::kUnavailable ||
            d.status().code() == rt::StatusCode::kPermissionDenied) {
          return d.status();
        }
        FLOW_RETURN_IF_ERROR(Reject(rec, d.status()));
        wrote_dead = wrote_dead || policy_.on_error == OnError::kDeadLetter;
        continue;
      }
      if (!*d) continue;  // a header row
      out.Add(std::move(value), rec.timestamp);
      splits_.push_back(rec.partition);
      has_partitions = has_partitions || rec.partition >= 0;
    }
    if (!has_partitions) splits_.clear();
    bytes_in_->Add(bytes);
    if (wrote_dead) FLOW_RETURN_IF_ERROR(dead_sink_->Flush());
    return *r;
  }

  const std::vector<int32_t>* LastSplits() const override {
    return splits_.empty() ? nullptr : &splits_;
  }
  bool SplitsPending() const override { return raw_->SplitsPending(); }
  // Under --instance a repartition writer reports its sources' event time per split from these:
  // without them no report is written, and every window behind the topic waits for good.
  std::optional<std::pair<uint32_t, std::vector<int32_t>>> OwnedSplits() const override {
    return raw_->OwnedSplits();
  }
  rt::Status SnapshotPosition(rt::BinaryWriter* out) const override {
    return raw_->SnapshotPosition(out);
  }
  rt::Status RestorePosition(rt::BinaryReader* in) override { return raw_->RestorePosition(in); }
  rt::Status OnCheckpoint(int64_t id) override { return raw_->OnCheckpoint(id); }
  rt::Status OnCheckpointComplete(int64_t id) override { return raw_->OnCheckpointComplete(id); }
  // Restore at another parallelism: the connector redistributes its splits (files, partitions).
  rt::Status RestoreRescaled(const std::vector<rt::OldSourcePosition>& old,
                             uint32_t old_parallelism) override {
    return raw_->RestoreRescaled(old, old_parallelism);
  }
  rt::Status Close() override {
    if (skipped_count_ > 0) {
      rt::Log(rt::LogLevel::kInfo, "source", "source closed",
              {{"source", name_},
               {"skipped", std::to_string(skipped_count_)},
               {"dead_letters", std::to_string(dead_count_)}});
    }
    rt::Status s = raw_->Close();
    if (dead_sink_ != nullptr) {
      rt::Status d = dead_sink_->Close();
      dead_sink_.reset();
      if (s.ok()) s = d;
    }
    return s;
  }

 private:
  static constexpr int kPollTimeoutMs = 100;
  static constexpr int64_t kLoggedErrors = 10;

  rt::Status Reject(const rt::RawRecord& rec, const rt::Status& error) {
    errors_->Add(1);
    std::string where = raw_->Locate(rec);
    if (policy_.on_error == OnError::kFail) {
      return rt::Status(
          error.code() == rt::StatusCode::kOk ? rt::StatusCode::kInvalidArgument : error.code(),
          "cannot decode " + name_ + " " + where + ": " + error.message());
    }
    if (policy_.on_error == OnError::kDeadLetter) {
      letter_.Clear();
      EncodeDeadLetter(name_, where, error, rec.payload, &letter_);
      FLOW_RETURN_IF_ERROR(dead_sink_->Write({}, letter_.view(), rec.timestamp));
      dead_->Add(1);
      ++dead_count_;
    }
    skipped_->Add(1);
    if (++skipped_count_ <= kLoggedErrors) {
      rt::Log(rt::LogLevel::kWarn, "source", "skipped undecodable record",
              {{"source", name_}, {"at", where}, {"error", error.message()}});
    }
    return rt::Status::Ok();
  }

  std::unique_ptr<rt::RawSource> raw_;
  std::unique_ptr<Decoder> decoder_;
  ErrorPolicy policy_;
  std::unique_ptr<rt::RawSink> dead_sink_;
  rt::JsonEncoder letter_;
  std::string name_;
  std::vector<rt::RawRecord> raw_records_;
  std::vector<int32_t> splits_;
  rt::Metric* bytes_in_ = nullptr;
  rt::Metric* errors_ = nullptr;
  rt::Metric* skipped_ = nullptr;
  rt::Metric* dead_ = nullptr;
  int64_t skipped_count_ = 0;
  int64_t dead_count_ = 0;
};

// The connector options of a script's source arguments: script names to connector names
// (kafka: group -> group_id, read_committed: true|false -> isolation), and what the format needs
// from the connector (csv on file/stdin: quoted fields may span lines; csv with a header on a
// file: each file's line 1 is delivered, also after a restore, and bound as its header).
// kInvalidArgument for a csv header on a kafka source (messages have no header row).
[[nodiscard]] rt::Result<rt::ConnectorOptions> SourceOptions(const std::string& kind,
                                                             rt::ConnectorOptions script,
                                                             const std::string& format,
                                                             bool csv_header);
// The same for sinks (file: path -> directory).
rt::ConnectorOptions SinkOptions(const std::string& kind, rt::ConnectorOptions script);

// Checks the options now; the factory builds a source per subtask with a fresh decoder from
// make_decoder() (a copyable callable returning a Decoder).
template <typename T, typename MakeDecoder>
[[nodiscard]] rt::Result<rt::SourceFactory<T>> MakeDecodingSource(std::string kind,
                                                                  rt::ConnectorOptions options,
                                                                  MakeDecoder make_decoder,
                                                                  ErrorPolicy policy) {
  auto raw = RawSourceFactoryFor(std::move(kind), std::move(options));
  if (!raw.ok()) return raw.status();
  if (policy.on_error == OnError::kDeadLetter && !policy.dead_letter) {
    return rt::Status::InvalidArgument("on error dead_letter: no dead-letter sink");
  }
  rt::RawSourceFactory make_raw = std::move(*raw);
  return rt::SourceFactory<T>([make_raw, make_decoder, policy](
                                  uint32_t, uint32_t) -> std::unique_ptr<rt::SourceFunction<T>> {
    using Decoder = decltype(make_decoder());
    return std::make_unique<DecodingSource<T, Decoder>>(
        make_raw(), std::make_unique<Decoder>(make_decoder()), policy);
  });
}

}  // namespace flow::exec
