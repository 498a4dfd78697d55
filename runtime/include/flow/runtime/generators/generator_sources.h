#pragma once
// Engine sources over the generators, for generated code:
//
//   // from nexmark(kind: bid, events: 1000000)
//   auto bids = NexmarkSourceFactory<Bid>(config, NexmarkKind::kBid,
//       [](NexmarkEvent& e, Bid* out) { out->auction = e.bid.auction; ... });
//   // from datagen(count: 1000, seed: 7) as Reading
//   auto readings = DatagenSourceFactory<Reading>(config,
//       [](DatagenRng& rng, Reading* out) { out->sensor = rng.VocabString("sensor"); ... });
//
// Each subtask generates its slice of the one sequence (index % parallelism == subtask), so the
// records do not depend on the parallelism. Every record carries its generated event time
// (the event's dateTime / the rng's Timestamp()). Bounded configs end with PollResult::kEnd.
// Positions are snapshotted per subtask; restoring at another parallelism is InvalidArgument.
//
// Errors: the factories validate the config up front and return InvalidArgument naming the bad
// argument; the sources themselves cannot fail. Threading: one source per subtask thread.

#include <cassert>
#include <memory>
#include <utility>

#include "flow/runtime/engine/source.h"
#include "flow/runtime/generators/datagen.h"
#include "flow/runtime/generators/nexmark.h"

namespace flow::rt {

// convert: void(NexmarkEvent& event, T* out); may move out of the event's member of `kind`.
template <typename T, typename Convert>
class NexmarkSource final : public SourceFunction<T> {
 public:
  NexmarkSource(NexmarkGenerator generator, NexmarkKind kind, Convert convert)
      : generator_(std::move(generator)), kind_(kind), convert_(std::move(convert)) {}

  Status Open(OperatorContext& ctx) override {
    if (!ctx.instance.empty()) return UnsharedSourceError("nexmark source", ctx.instance);
    return Status::Ok();
  }

  Result<PollResult> PollBatch(Batch<T>& out, size_t max) override {
    for (size_t n = 0; n < max; ++n) {
      if (!generator_.NextOfKind(kind_, &event_)) return PollResult::kEnd;
      T record{};
      convert_(event_, &record);
      out.Add(std::move(record), event_.timestamp);
    }
    return generator_.HasNext() ? PollResult::kRecords : PollResult::kEnd;
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    generator_.SnapshotPosition(out);
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override { return generator_.RestorePosition(in); }

 private:
  NexmarkGenerator generator_;
  NexmarkKind kind_;
  Convert convert_;
  NexmarkEvent event_;  // reused so string buffers keep their capacity
};

template <typename T, typename Convert>
Result<SourceFactory<T>> NexmarkSourceFactory(const NexmarkConfig& config, NexmarkKind kind,
                                              Convert convert) {
  FLOW_RETURN_IF_ERROR(config.Validate());
  SourceFactory<T> factory = [config, kind, convert](uint32_t subtask, uint32_t parallelism) {
    auto generator = NexmarkGenerator::Create(config, subtask, parallelism);
    assert(generator.ok() && "NexmarkSourceFactory: the engine passed a bad subtask");
    return std::make_unique<NexmarkSource<T, Convert>>(std::move(generator).value(), kind, convert);
  };
  return factory;
}

// fill: void(DatagenRng& rng, T* out), drawing the fields in schema order.
template <typename T, typename Fill>
class DatagenSource final : public SourceFunction<T> {
 public:
  DatagenSource(DatagenSlice slice, Fill fill) : slice_(std::move(slice)), fill_(std::move(fill)) {}

  Status Open(OperatorContext& ctx) override {
    if (!ctx.instance.empty()) return UnsharedSourceError("datagen source", ctx.instance);
    return Status::Ok();
  }

  Result<PollResult> PollBatch(Batch<T>& out, size_t max) override {
    for (size_t n = 0; n < max && slice_.HasNext(); ++n) {
      DatagenRng rng = slice_.Next();
      T record{};
      fill_(rng, &record);
      out.Add(std::move(record), rng.Timestamp());
    }
    return slice_.HasNext() ? PollResult::kRecords : PollResult::kEnd;
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    slice_.SnapshotPosition(out);
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override { return slice_.RestorePosition(in); }

 private:
  DatagenSlice slice_;
  Fill fill_;
};

template <typename T, typename Fill>
Result<SourceFactory<T>> DatagenSourceFactory(const DatagenConfig& config, Fill fill) {
  FLOW_RETURN_IF_ERROR(config.Validate());
  SourceFactory<T> factory = [config, fill](uint32_t subtask, uint32_t parallelism) {
    auto slice = DatagenSlice::Create(config, subtask, parallelism);
    assert(slice.ok() && "DatagenSourceFactory: the engine passed a bad subtask");
    return std::make_unique<DatagenSource<T, Fill>>(std::move(slice).value(), fill);
  };
  return factory;
}

}  // namespace flow::rt
