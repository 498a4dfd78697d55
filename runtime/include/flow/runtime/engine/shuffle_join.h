#pragma once
// JoinAcrossInstances: a keyed two-input operator (a join) that works the same in one process and
// across the instances of a scaled-out job (docs/deploy.md, "Shuffles through Kafka").
//
//   auto joined = JoinAcrossInstances<Out>(job, orders, payments, "orders.join", "join key",
//                                          order_hash, payment_hash, join_factory);
//
// One process (no --instance): Connect(left.KeyBy(..), right.KeyBy(..)).Then<Out>(op, factory).
// Under --instance both sides must reach the instance that owns their key, and both keys of one
// key group must reach the same one. Two topics read by two consumer groups would be assigned
// independently, so the sides share ONE repartition topic (one consumer group, one assignment):
//   left  --forward--> "<op>.shuffle.write.left"   RepartitionSink, frames of input 0
//   right --forward--> "<op>.shuffle.write.right"  RepartitionSink, frames of input 1
//   "<op>.shuffle" (a RepartitionSource of JoinInput<L, R>) --key-by--> "<op>"
// where "<op>" runs the join operator behind JoinInputsOperator, which hands each run of one
// side's records to the operator's ProcessBatch1/ProcessBatch2 in the order they came. The
// engine sees a one-input keyed operator behind a repartition reader, as for a window, so state
// adoption and retention work unchanged. Event time: the reader's is the minimum over every input
// partition of both sides' sources, which is what a two-input operator combines in one process.
// The right side reports its sources' progress under ProgressSourceName(name, 1), so a source
// that feeds both sides (a stream joined with itself) is tracked once per side.
// Errors: as KeyByAcrossInstances (shuffle_key_by.h, whose halves it uses), naming the join.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/operator.h"
#include "flow/runtime/engine/repartition.h"
#include "flow/runtime/engine/shuffle_key_by.h"

namespace flow::rt {

// A one-input operator over both sides of a join (the records of one repartition topic): each run
// of consecutive records of one side goes to `inner` as one batch of that side, so the order of
// records, and of records against watermarks, is the order they arrived in.
template <typename L, typename R, typename Out>
class JoinInputsOperator final : public OneInputOperator<JoinInput<L, R>, Out> {
 public:
  explicit JoinInputsOperator(std::unique_ptr<TwoInputOperator<L, R, Out>> inner)
      : inner_(std::move(inner)) {}

  Status Open(OperatorContext& ctx) override { return inner_->Open(ctx); }
  Status ProcessBatch(const Batch<JoinInput<L, R>>& batch, Output<Out>& out) override {
    left_.Clear();
    right_.Clear();
    for (size_t i = 0; i < batch.size(); ++i) {
      const JoinInput<L, R>& rec = batch.records[i];
      if (rec.index() == 0) {
        if (!right_.empty()) FLOW_RETURN_IF_ERROR(FlushRight(out));
        left_.Add(std::get<0>(rec), batch.timestamps[i]);
      } else {
        if (!left_.empty()) FLOW_RETURN_IF_ERROR(FlushLeft(out));
        right_.Add(std::get<1>(rec), batch.timestamps[i]);
      }
    }
    if (!left_.empty()) FLOW_RETURN_IF_ERROR(FlushLeft(out));
    if (!right_.empty()) FLOW_RETURN_IF_ERROR(FlushRight(out));
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm, Output<Out>& out) override {
    return inner_->OnWatermark(wm, out);
  }
  Status OnProcessingTime(TimestampMs now, Output<Out>& out) override {
    return inner_->OnProcessingTime(now, out);
  }
  Status SnapshotState(BinaryWriter* out) override { return inner_->SnapshotState(out); }
  Status RestoreState(BinaryReader* in) override { return inner_->RestoreState(in); }
  Status Finish(Output<Out>& out) override { return inner_->Finish(out); }
  void Close() override { inner_->Close(); }

 private:
  Status FlushLeft(Output<Out>& out) {
    Status s = inner_->ProcessBatch1(left_, out);
    left_.Clear();
    return s;
  }
  Status FlushRight(Output<Out>& out) {
    Status s = inner_->ProcessBatch2(right_, out);
    right_.Clear();
    return s;
  }

  std::unique_ptr<TwoInputOperator<L, R, Out>> inner_;
  Batch<L> left_;  // reused between batches
  Batch<R> right_;
};

namespace engine_detail {

// Sources (and readers) shared by both sides keep their progress apart: ProgressSourceName(name,
// input).
inline std::vector<std::string> JoinUpstreamSources(const ForwardOrigins& left,
                                                    const ForwardOrigins& right) {
  std::vector<std::string> all;
  for (const std::string& s : left.Names()) all.push_back(shuffle::ProgressSourceName(s, 0));
  for (const std::string& s : right.Names()) all.push_back(shuffle::ProgressSourceName(s, 1));
  return all;
}

template <typename Out, typename L, typename R, typename LeftHash, typename RightHash,
          typename Factory>
Result<Stream<Out>> CutJoinAcrossInstances(Job& job, const Stream<L>& left, const Stream<R>& right,
                                           const std::string& op, std::string key_name,
                                           LeftHash left_hash, RightHash right_hash,
                                           Factory factory, WatermarkSpec spec,
                                           const std::string& what) {
  auto topic = RepartitionTopicOf(job.options(), op, what);
  if (!topic.ok()) return topic.status();
  auto left_sources = job.ForwardSourcesOf(left.node(), what + ", left side");
  if (!left_sources.ok()) return left_sources.status();
  auto right_sources = job.ForwardSourcesOf(right.node(), what + ", right side");
  if (!right_sources.ok()) return right_sources.status();
  WriteRepartition<L>(job, left, op + ".shuffle.write.left", *topic, 0, *left_sources, left_hash);
  WriteRepartition<R>(job, right, op + ".shuffle.write.right", *topic, 1, *right_sources,
                      right_hash);
  using In = JoinInput<L, R>;
  Stream<In> shuffled = ReadRepartition<In>(
      job, op + ".shuffle", *topic, JoinUpstreamSources(*left_sources, *right_sources), spec);
  auto hash = [left_hash, right_hash](const In& r) -> uint64_t {
    return r.index() == 0 ? static_cast<uint64_t>(left_hash(std::get<0>(r)))
                          : static_cast<uint64_t>(right_hash(std::get<1>(r)));
  };
  return shuffled.KeyBy(std::move(key_name), hash)
      .template Then<Out>(op, [factory]() -> std::unique_ptr<OneInputOperator<In, Out>> {
        return std::make_unique<JoinInputsOperator<L, R, Out>>(factory());
      });
}

}  // namespace engine_detail

// `op`: the join operator's name (names the topic and the nodes). `factory`: returns a
// std::unique_ptr to a TwoInputOperator<L, R, Out> (or a derived class). `left_hash` and
// `right_hash` must give equal keys of the two sides equal hashes (KeyHashOf of one key type).
template <typename Out, typename L, typename R, typename LeftHash, typename RightHash,
          typename Factory>
[[nodiscard]] Result<Stream<Out>> JoinAcrossInstances(Job& job, const Stream<L>& left,
                                                      const Stream<R>& right, const std::string& op,
                                                      std::string key_name, LeftHash left_hash,
                                                      RightHash right_hash, Factory factory,
                                                      WatermarkSpec spec = {}) {
  const JobOptions& o = job.options();
  if (o.instance.empty()) {
    return Connect(left.KeyBy(key_name, left_hash), right.KeyBy(key_name, right_hash))
        .template Then<Out>(op, factory);
  }
  const std::string what =
      fmt::format("--instance {}: operator '{}' (join on {})", o.instance, op, key_name);
  if (o.shuffle_brokers.empty()) {
    return engine_detail::NeedShuffleBrokers(what, "the records of both sides");
  }
  if constexpr (!Serializable<L> || !Serializable<R>) {
    return engine_detail::NeedEncoding(what);
  } else {
    return engine_detail::CutJoinAcrossInstances<Out>(job, left, right, op, std::move(key_name),
                                                      left_hash, right_hash, factory, spec, what);
  }
}

}  // namespace flow::rt
