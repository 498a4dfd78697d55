#pragma once
// Typed sinks. One SinkFunction instance per sink subtask, used by that subtask's thread only.
// Ready-made: CollectingSink (tests); the RawSink adapter is in raw_adapters.h.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/connectors/connector.h"
#include "flow/runtime/engine/batch.h"
#include "flow/runtime/engine/operator.h"

namespace flow::rt {

template <typename T>
class SinkFunction {
 public:
  virtual ~SinkFunction() = default;
  [[nodiscard]] virtual Status Open(OperatorContext& ctx) { return Status::Ok(); }
  [[nodiscard]] virtual Status Write(const Batch<T>& batch) = 0;
  // Makes everything written so far visible/durable: at end of input, on stop, at checkpoints.
  [[nodiscard]] virtual Status Flush() { return Status::Ok(); }
  // Records were written and then the sink's task got no input for kInputQuietMs (task.h): write
  // out what is buffered, so the results of a quiet job (an idle stdin, a window fired by the
  // clock) are not held back until the next checkpoint or the end. Default: Flush().
  [[nodiscard]] virtual Status OnInputQuiet() { return Flush(); }
  // Always called last, also after a failure.
  virtual void Close() {}
};

template <typename T>
using SinkFactory =
    std::function<std::unique_ptr<SinkFunction<T>>(uint32_t subtask, uint32_t parallelism)>;

// A byte-level sink's encoder: void(const T&, std::string* key, std::string* payload), or with a
// fourth `OutMeta*` (a kafka sink's `metadata:`): the timestamp it sets replaces the record's
// event timestamp, its headers go with the message (RawSink::WriteWithHeaders, TxnRecord).
template <typename T>
using SinkEncode =
    std::function<void(const T&, std::string* key, std::string* payload, OutMeta* meta)>;

template <typename T, typename Encode>
SinkEncode<T> ToSinkEncode(Encode encode) {
  if constexpr (std::is_invocable_v<Encode&, const T&, std::string*, std::string*, OutMeta*>) {
    return encode;
  } else {
    return [e = std::move(encode)](const T& r, std::string* key, std::string* payload,
                                   OutMeta*) mutable { e(r, key, payload); };
  }
}

// What a CollectingSink gathered; shared by all its subtasks. Thread-safe.
template <typename T>
class Collected {
 public:
  struct Item {
    T record;
    TimestampMs ts;
    uint32_t subtask;
  };
  void Add(const Batch<T>& b, uint32_t subtask) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < b.size(); ++i)
      items_.push_back(Item{b.records[i], b.timestamps[i], subtask});
  }
  void AddFlush() {
    std::lock_guard<std::mutex> lock(mu_);
    ++flushes_;
  }
  std::vector<Item> Items() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_;
  }
  std::vector<T> Records() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<T> out;
    for (const Item& i : items_) out.push_back(i.record);
    return out;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.size();
  }
  int flushes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return flushes_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Item> items_;
  int flushes_ = 0;
};

template <typename T>
class CollectingSink final : public SinkFunction<T> {
 public:
  CollectingSink(std::shared_ptr<Collected<T>> out, uint32_t subtask)
      : out_(std::move(out)), subtask_(subtask) {}
  Status Write(const Batch<T>& batch) override {
    out_->Add(batch, subtask_);
    return Status::Ok();
  }
  Status Flush() override {
    out_->AddFlush();
    return Status::Ok();
  }
  // Buffers nothing; flushes() counts barrier and end flushes only.
  Status OnInputQuiet() override { return Status::Ok(); }

 private:
  std::shared_ptr<Collected<T>> out_;
  uint32_t subtask_;
};

template <typename T>
SinkFactory<T> CollectingSinkFactory(std::shared_ptr<Collected<T>> out) {
  return [out](uint32_t subtask, uint32_t) {
    return std::make_unique<CollectingSink<T>>(out, subtask);
  };
}

}  // namespace flow::rt
