// The jobs the chaos test kills (tests/chaos/chaos_test.cpp), on the runtime's Job API:
//
//   chaos_job --set job=copy|window|join --set brokers=B --set input=T --set output=T
//             [--set guarantee=exactly_once|at_least_once] [--set files=DIR] <engine flags>
//
// Input records: key "k<n>", value "<i>,<event time ms>" (4 partitions; one Kafka source subtask
// per partition at parallelism 4).
// - copy: every input record to `output` unchanged (key and value); with `files` (exactly once
//   only) also to an exactly-once file sink in DIR as lines "<key>=<value>": one job with a Kafka
//   and a file sink, whose commits must agree after every crash.
// - window: key by key -> tumbling event-time windows of `window_ms` -> count and sum of i per
//   (key, window); output key "<key>|<window start>", value "<key>,<window start>,<count>,<sum>".
//   Under --instance (with --shuffle-brokers) the key-by goes through a repartition topic.
// - join: even records (left) and odd ones (right) of one key and window joined: per (key,
//   window) with records on both sides, value "<key>,<window start>,<left count>,<left sum>,
//   <right count>,<right sum>". Both sides reach the join through one repartition topic under
//   --instance (engine/shuffle_join.h).
//   The window operator is written here (state: open windows; fired when the watermark passes
//   their end) so the test's reference is independent of the runtime's window code.
// - window and join with `--set stage2=true`: each (key, window) row also goes behind a second
//   key-by, by bucket "b<last digit of the key>", into the same tumbling windows: per (bucket,
//   window) the number of rows and the sum of their sums (a join's row: both sides' sums); output
//   key "<bucket>|<window start>", value "<bucket>,<window start>,<rows>,<sum>", to the same
//   topic. Under --instance that key-by is a second repartition topic, behind the first one's
//   keyed operator (a window behind a window or a join).
// The sink is exactly-once (one Kafka transaction per checkpoint) or at-least-once (the plain
// Kafka sink, flushed at barriers), to show that the checker catches the duplicates of the
// latter.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/connectors/kafka_sink.h"
#include "flow/runtime/connectors/kafka_source.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/main.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "flow/runtime/engine/shuffle_join.h"
#include "flow/runtime/engine/shuffle_key_by.h"
#include "flow/runtime/engine/txn_sink.h"
#include "flow/runtime/state/snapshot_scope.h"

namespace {

using flow::rt::Batch;
using flow::rt::BinaryReader;
using flow::rt::BinaryWriter;
using flow::rt::Output;
using flow::rt::Status;
using flow::rt::TimestampMs;

struct Rec {
  std::string key;
  std::string value;
  int64_t i = 0;
  TimestampMs ts = 0;
  // Instances (--instance): the window job's records cross a repartition topic in this encoding.
  void Serialize(BinaryWriter& w) const {
    w.PutString(key);
    w.PutString(value);
    w.PutI64(i);
    w.PutI64(ts);
  }
  Status Deserialize(BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetString(&key));
    FLOW_RETURN_IF_ERROR(r.GetString(&value));
    FLOW_RETURN_IF_ERROR(r.GetI64(&i));
    return r.GetI64(&ts);
  }
};

struct Agg {
  std::string key;
  int64_t start = 0;
  int64_t count = 0;  // the window's records (join: the left side's)
  int64_t sum = 0;
  int64_t right_count = 0;  // join only: the right side's
  int64_t right_sum = 0;
};

Status Decode(const flow::rt::RawRecord& raw, Rec* out) {
  out->key.assign(raw.key);
  out->value.assign(raw.payload);
  auto comma = raw.payload.find(',');
  if (comma == std::string_view::npos) return Status::InvalidArgument("expected `<i>,<ts>`");
  const char* b = raw.payload.data();
  auto r1 = std::from_chars(b, b + comma, out->i);
  auto r2 = std::from_chars(b + comma + 1, b + raw.payload.size(), out->ts);
  if (r1.ec != std::errc() || r2.ec != std::errc())
    return Status::InvalidArgument("expected `<i>,<ts>`");
  return Status::Ok();
}

// Tumbling event-time windows of count and sum of i per key and side (a window job has one side,
// a join two); a window fires when the watermark passes its end.
class Tumbling {
 public:
  // `all_keys`: restores keep every key (breaks the keyed-state contract; for the controls).
  Tumbling(int64_t size, bool all_keys) : size_(size), all_keys_(all_keys) {}
  void Open(const flow::rt::OperatorContext& ctx) {
    key_groups_ = ctx.key_groups;
    max_parallelism_ = ctx.max_parallelism;
  }
  void Add(const Batch<Rec>& batch, int side) {
    for (size_t n = 0; n < batch.size(); ++n) {
      const Rec& r = batch.records[n];
      int64_t start = r.ts - ((r.ts % size_) + size_) % size_;
      if (start + size_ - 1 <= fired_) {
        ++late_;  // its window already fired: a bug in watermarks or restore
        continue;
      }
      Sides& w = open_[{r.key, start}];
      ++w.count[side];
      w.sum[side] += r.i;
    }
  }
  // Fires the windows the watermark passed: emit(Agg, count of sides with records).
  template <typename Emit>
  void Fire(TimestampMs wm, Emit emit) {
    for (auto it = open_.begin(); it != open_.end();) {
      const auto& [key, start] = it->first;
      if (start + size_ - 1 > wm) {
        ++it;
        continue;
      }
      const Sides& w = it->second;
      emit(Agg{key, start, w.count[0], w.sum[0], w.count[1], w.sum[1]}, start + size_ - 1);
      it = open_.erase(it);
    }
    if (wm > fired_) fired_ = wm;
  }
  void Snapshot(BinaryWriter* out) const {
    out->PutI64(fired_);
    out->PutU64(open_.size());
    for (const auto& [k, v] : open_) {
      out->PutString(k.first);
      out->PutI64(k.second);
      for (int side = 0; side < 2; ++side) {
        out->PutI64(v.count[side]);
        out->PutI64(v.sum[side]);
      }
    }
  }
  // Keyed state's contract (docs/checkpoints.md): a restore keeps the keys of this subtask's key
  // groups only, and of the ones the engine restores now (a repartition partition's, when its
  // state is adopted from another instance); several restores take the lowest time fired.
  Status Restore(BinaryReader* in) {
    uint64_t n = 0;
    TimestampMs fired = flow::rt::kMinWatermark;
    FLOW_RETURN_IF_ERROR(in->GetI64(&fired));
    fired_ = restored_ ? std::min(fired_, fired) : fired;
    restored_ = true;
    const flow::rt::KeyGroupSpan limit = flow::rt::SnapshotRestoreScope::Limit();
    FLOW_RETURN_IF_ERROR(in->GetU64(&n));
    for (uint64_t j = 0; j < n; ++j) {
      std::string key;
      int64_t start = 0;
      Sides w;
      FLOW_RETURN_IF_ERROR(in->GetString(&key));
      FLOW_RETURN_IF_ERROR(in->GetI64(&start));
      for (int side = 0; side < 2; ++side) {
        FLOW_RETURN_IF_ERROR(in->GetI64(&w.count[side]));
        FLOW_RETURN_IF_ERROR(in->GetI64(&w.sum[side]));
      }
      const uint32_t kg =
          flow::rt::KeyGroupForHash(flow::rt::StableHash(std::string_view(key)), max_parallelism_);
      if (!all_keys_ && (!key_groups_.Contains(kg) || !limit.Contains(kg))) continue;
      open_[{key, start}] = w;
    }
    return Status::Ok();
  }
  void Close() const {
    if (late_ > 0) fmt::print(stderr, "chaos_job: {} late records dropped\n", late_);
  }

 private:
  struct Sides {
    int64_t count[2] = {0, 0};
    int64_t sum[2] = {0, 0};
  };
  int64_t size_;
  bool all_keys_;
  flow::rt::KeyGroupRange key_groups_{0, flow::rt::kDefaultMaxParallelism};
  uint32_t max_parallelism_ = flow::rt::kDefaultMaxParallelism;
  bool restored_ = false;
  TimestampMs fired_ = flow::rt::kMinWatermark;
  int64_t late_ = 0;
  std::map<std::pair<std::string, int64_t>, Sides> open_;
};

// What the two window operators share: the windows, their state, and the late-record report.
template <typename Base>
class TumblingOperator : public Base {
 public:
  TumblingOperator(int64_t size, bool all_keys) : windows_(size, all_keys) {}
  Status Open(flow::rt::OperatorContext& ctx) override {
    windows_.Open(ctx);
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override {
    windows_.Snapshot(out);
    return Status::Ok();
  }
  Status RestoreState(BinaryReader* in) override { return windows_.Restore(in); }
  void Close() override { windows_.Close(); }

 protected:
  Tumbling windows_;
};

// window: one side; every window fires.
class TumblingSum final : public TumblingOperator<flow::rt::OneInputOperator<Rec, Agg>> {
 public:
  using TumblingOperator::TumblingOperator;
  Status ProcessBatch(const Batch<Rec>& batch, Output<Agg>&) override {
    windows_.Add(batch, 0);
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm, Output<Agg>& out) override {
    windows_.Fire(wm, [&](Agg a, TimestampMs ts) { out.Emit(std::move(a), ts); });
    return Status::Ok();
  }
};

// join: a window join of even (left) and odd (right) records of one key; a window fires when
// both sides have records in it.
class TumblingJoin final : public TumblingOperator<flow::rt::TwoInputOperator<Rec, Rec, Agg>> {
 public:
  using TumblingOperator::TumblingOperator;
  Status ProcessBatch1(const Batch<Rec>& batch, Output<Agg>&) override {
    windows_.Add(batch, 0);
    return Status::Ok();
  }
  Status ProcessBatch2(const Batch<Rec>& batch, Output<Agg>&) override {
    windows_.Add(batch, 1);
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm, Output<Agg>& out) override {
    windows_.Fire(wm, [&](Agg a, TimestampMs ts) {
      if (a.count > 0 && a.right_count > 0) out.Emit(std::move(a), ts);
    });
    return Status::Ok();
  }
};

uint64_t KeyHash(const Rec& r) {
  return flow::rt::StableHash(std::string_view(r.key));
}

// A window's row: key "<key>|<window start>", value "<key>,<window start>,<count>,<sum>".
void EncodeSums(const Agg& a, std::string* key, std::string* payload) {
  *key = fmt::format("{}|{}", a.key, a.start);
  *payload = fmt::format("{},{},{},{}", a.key, a.start, a.count, a.sum);
}

// A join's row: as a window's, with the right side's count and sum after the left side's.
void EncodeJoined(const Agg& a, std::string* key, std::string* payload) {
  EncodeSums(a, key, payload);
  *payload += fmt::format(",{},{}", a.right_count, a.right_sum);
}

template <typename T, typename Encode>
Status AddSink(flow::rt::Job& job, const flow::rt::Stream<T>& s, const std::string& guarantee,
               const std::string& brokers, const std::string& topic, int64_t retry_timeout_ms,
               int64_t transaction_timeout_ms, Encode encode, const std::string& name = "out") {
  if (guarantee == "exactly_once") {
    flow::rt::KafkaTxnSinkConfig config;
    config.brokers = brokers;
    config.sink.topic = topic;
    config.retry_timeout_ms = retry_timeout_ms;
    config.transaction_timeout_ms = transaction_timeout_ms;
    flow::rt::ExactlyOnceSink<T>(s, job, name, flow::rt::KafkaTxnSink(config), encode);
    return Status::Ok();
  }
  if (guarantee != "at_least_once")
    return Status::InvalidArgument("guarantee: exactly_once or at_least_once");
  flow::rt::KafkaSinkOptions o;
  o.brokers = brokers;
  o.topic = topic;
  s.Sink(name, flow::rt::RawSinkAdapter<T>([o] { return std::make_unique<flow::rt::KafkaSink>(o); },
                                           encode));
  return Status::Ok();
}

// stage2 (see the top): `rows` re-keyed by bucket and summed per window, into `output` as "out2".
Status AddSecondStage(flow::rt::Job& job, const flow::rt::Stream<Agg>& rows, int64_t size,
                      bool all_keys, const std::string& guarantee, const std::string& brokers,
                      const std::string& output, int64_t retry_timeout_ms,
                      int64_t transaction_timeout_ms) {
  auto buckets = rows.Map<Rec>("bucket", [](const Agg& a) {
    Rec r;
    r.key = std::string("b") + (a.key.empty() ? '-' : a.key.back());
    r.i = a.sum + a.right_sum;
    r.ts = a.start;
    return r;
  });
  auto keyed = flow::rt::KeyByAcrossInstances(job, buckets, "window2", "bucket", &KeyHash);
  if (!keyed.ok()) return keyed.status();
  auto sums = keyed->Then<Agg>(
      "window2", [size, all_keys] { return std::make_unique<TumblingSum>(size, all_keys); });
  return AddSink<Agg>(job, sums, guarantee, brokers, output, retry_timeout_ms,
                      transaction_timeout_ms, &EncodeSums, "out2");
}
}  // namespace

int main(int argc, char** argv) {
  using flow::rt::ParamType;
  return flow::rt::RunMain(
      argc, argv,
      {{"job", ParamType::kString, "copy", "copy, window or join"},
       {"brokers", ParamType::kString, "127.0.0.1:9092", "bootstrap servers"},
       {"input", ParamType::kString, "", "input topic"},
       {"output", ParamType::kString, "", "output topic"},
       {"guarantee", ParamType::kString, "exactly_once", "exactly_once or at_least_once"},
       {"window_ms", ParamType::kInt, "5000", "tumbling window size"},
       {"stage2", ParamType::kBool, "false",
        "window and join: also sum the rows per bucket and window behind a second key-by"},
       {"restore_all_keys", ParamType::kBool, "false",
        "window: a restore keeps every key, whatever its key group (the control of the tests "
        "that move state between instances)"},
       {"files", ParamType::kString, "",
        "copy, exactly once: also write the records to files here"},
       {"retry_timeout_ms", ParamType::kInt, "0",
        "exactly once: how long Kafka is waited for (0: 60 s)"},
       {"transaction_timeout_ms", ParamType::kInt, "0",
        "exactly once: transaction.timeout.ms (0: the runtime's default)"},
       {"out_of_orderness_ms", ParamType::kInt, "0",
        "the source's bound on out-of-order event times (0: none, a late record is counted)"}},
      [](flow::rt::Job& job) -> Status {
        const auto& p = job.params();
        auto kind = p.GetString("job");
        auto brokers = p.GetString("brokers");
        auto input = p.GetString("input");
        auto output = p.GetString("output");
        auto guarantee = p.GetString("guarantee");
        auto window_ms = p.GetInt("window_ms");
        auto all_keys = p.GetBool("restore_all_keys");
        auto stage2 = p.GetBool("stage2");
        auto files = p.GetString("files");
        auto retry = p.GetInt("retry_timeout_ms");
        auto txn_timeout = p.GetInt("transaction_timeout_ms");
        auto bound = p.GetInt("out_of_orderness_ms");
        if (!kind.ok() || !brokers.ok() || !input.ok() || !output.ok() || !guarantee.ok() ||
            !window_ms.ok() || !files.ok() || !retry.ok() || !txn_timeout.ok() || !bound.ok() ||
            input->empty() || output->empty() || *window_ms <= 0 || *retry < 0 ||
            *txn_timeout < 0 || *bound < 0) {
          return Status::InvalidArgument("bad parameters (input and output are required)");
        }
        flow::rt::KafkaSourceOptions so;
        so.brokers = *brokers;
        so.topic = *input;
        so.start = flow::rt::KafkaStart::kEarliest;
        auto source = flow::rt::RawSourceAdapter<Rec>(
            [so] { return std::make_unique<flow::rt::KafkaSource>(so); }, &Decode);
        flow::rt::WatermarkSpec spec{.mode = flow::rt::TimeMode::kEventTime,
                                     .max_out_of_orderness = *bound};
        auto records = job.Source<Rec>("input", source, spec, 0, [](const Rec& r) { return r.ts; });
        if (*kind == "copy") {
          if (!files->empty()) {
            if (*guarantee != "exactly_once")
              return Status::InvalidArgument("files: exactly_once only");
            flow::rt::ExactlyOnceFileSinkOptions fo;
            fo.directory = *files;
            flow::rt::ExactlyOnceSink<Rec>(records, job, "files", flow::rt::FileTxnSink(fo),
                                           [](const Rec& r, std::string*, std::string* payload) {
                                             *payload = r.key + "=" + r.value;
                                           });
          }
          return AddSink<Rec>(job, records, *guarantee, *brokers, *output, *retry, *txn_timeout,
                              [](const Rec& r, std::string* key, std::string* payload) {
                                *key = r.key;
                                *payload = r.value;
                              });
        }
        const int64_t size = *window_ms;
        const bool all = all_keys.ok() && *all_keys;
        auto second_stage = [&](const flow::rt::Stream<Agg>& rows) {
          if (!stage2.ok() || !*stage2) return Status::Ok();
          return AddSecondStage(job, rows, size, all, *guarantee, *brokers, *output, *retry,
                                *txn_timeout);
        };
        if (*kind == "join") {
          // Both sides come from one source: its progress reaches the topic once per side.
          auto even = records.Filter("left", [](const Rec& r) { return r.i % 2 == 0; });
          auto odd = records.Filter("right", [](const Rec& r) { return r.i % 2 != 0; });
          auto joined = flow::rt::JoinAcrossInstances<Agg>(
              job, even, odd, "join", "key", &KeyHash, &KeyHash,
              [size, all] { return std::make_unique<TumblingJoin>(size, all); });
          if (!joined.ok()) return joined.status();
          FLOW_RETURN_IF_ERROR(second_stage(*joined));
          return AddSink<Agg>(job, *joined, *guarantee, *brokers, *output, *retry, *txn_timeout,
                              &EncodeJoined);
        }
        if (*kind != "window") return Status::InvalidArgument("job: copy, window or join");
        // Under --instance the key-by crosses instances through a repartition topic.
        auto keyed = flow::rt::KeyByAcrossInstances(job, records, "window", "key", &KeyHash);
        if (!keyed.ok()) return keyed.status();
        auto sums = keyed->Then<Agg>(
            "window", [size, all] { return std::make_unique<TumblingSum>(size, all); });
        FLOW_RETURN_IF_ERROR(second_stage(sums));
        return AddSink<Agg>(job, sums, *guarantee, *brokers, *output, *retry, *txn_timeout,
                            &EncodeSums);
      });
}
