#pragma once
// Ready-made stateless operators over lambdas. Each is a template over the function type, so the
// per-record call is inlined (no virtual call or std::function per record).
//
// Code generation fuses a run of stateless steps (where/select/explode) into ONE function
//   void fn(const In& record, TimestampMs ts, Output<Out>& out)
// and wraps it with MakeChain.

#include <memory>
#include <type_traits>
#include <utility>

#include "flow/runtime/engine/operator.h"

namespace flow::rt {

// fn: void(const In&, TimestampMs, Output<Out>&). Emits any number of records per input.
template <typename In, typename Out, typename Fn>
class ChainOperator final : public OneInputOperator<In, Out> {
 public:
  explicit ChainOperator(Fn fn) : fn_(std::move(fn)) {}
  bool stateless() const override { return true; }
  Status ProcessBatch(const Batch<In>& batch, Output<Out>& out) override {
    const size_t n = batch.size();
    for (size_t i = 0; i < n; ++i) fn_(batch.records[i], batch.timestamps[i], out);
    return Status::Ok();
  }

 private:
  Fn fn_;
};

// fn: Out(const In&). The output keeps the input's timestamp.
template <typename In, typename Out, typename Fn>
class MapOperator final : public OneInputOperator<In, Out> {
 public:
  explicit MapOperator(Fn fn) : fn_(std::move(fn)) {}
  bool stateless() const override { return true; }
  Status ProcessBatch(const Batch<In>& batch, Output<Out>& out) override {
    const size_t n = batch.size();
    for (size_t i = 0; i < n; ++i) out.Emit(fn_(batch.records[i]), batch.timestamps[i]);
    return Status::Ok();
  }

 private:
  Fn fn_;
};

// fn: bool(const In&). Keeps records for which fn is true.
template <typename T, typename Fn>
class FilterOperator final : public OneInputOperator<T, T> {
 public:
  explicit FilterOperator(Fn fn) : fn_(std::move(fn)) {}
  bool stateless() const override { return true; }
  Status ProcessBatch(const Batch<T>& batch, Output<T>& out) override {
    const size_t n = batch.size();
    for (size_t i = 0; i < n; ++i) {
      if (fn_(batch.records[i])) out.Emit(batch.records[i], batch.timestamps[i]);
    }
    return Status::Ok();
  }

 private:
  Fn fn_;
};

// fn: void(const In&, Emit&) where emit(Out) appends one output with the input's timestamp
// (explode / unnest).
template <typename In, typename Out, typename Fn>
class FlatMapOperator final : public OneInputOperator<In, Out> {
 public:
  explicit FlatMapOperator(Fn fn) : fn_(std::move(fn)) {}
  bool stateless() const override { return true; }
  Status ProcessBatch(const Batch<In>& batch, Output<Out>& out) override {
    const size_t n = batch.size();
    for (size_t i = 0; i < n; ++i) {
      TimestampMs ts = batch.timestamps[i];
      auto emit = [&out, ts](Out&& r) { out.Emit(std::move(r), ts); };
      fn_(batch.records[i], emit);
    }
    return Status::Ok();
  }

 private:
  Fn fn_;
};

// Passes records through unchanged (used for Union).
template <typename T>
class IdentityOperator final : public OneInputOperator<T, T> {
 public:
  bool stateless() const override { return true; }
  Status ProcessBatch(const Batch<T>& batch, Output<T>& out) override {
    for (size_t i = 0; i < batch.size(); ++i) out.Emit(batch.records[i], batch.timestamps[i]);
    return Status::Ok();
  }
};

template <typename In, typename Out, typename Fn>
std::unique_ptr<OneInputOperator<In, Out>> MakeChain(Fn fn) {
  return std::make_unique<ChainOperator<In, Out, Fn>>(std::move(fn));
}

}  // namespace flow::rt
