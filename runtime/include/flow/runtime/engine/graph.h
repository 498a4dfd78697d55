#pragma once
// Engine-internal: the type-erased job graph. Nodes and edges know their record types and build
// the typed runtime pieces (drivers, channels, writers, bindings) when the job runs.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flow/runtime/engine/drivers.h"
#include "flow/runtime/engine/partition.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/engine/task.h"

namespace flow::rt::engine_detail {

struct NodeBase {
  std::string name;
  uint32_t parallelism = 1;
  bool is_source = false;
  bool is_sink = false;
  std::vector<int> in_edges;
  std::vector<int> out_edges;
  std::vector<std::string> state_schema;  // Job::SetStateSchema; empty when stateless
  // A repartition topic's reader (Job::MarkShuffleReader): its records come from every instance,
  // each in the partition of its key group, so a key-by behind it stays within the instance.
  bool shuffle_reader = false;

  // "source", "sink" or "operator": part of the job's fingerprint, and shown on the job page.
  const char* kind() const { return is_source ? "source" : is_sink ? "sink" : "operator"; }

  virtual ~NodeBase() = default;
  // The consumer that takes this node's output: the targets as one (typed on the output).
  virtual std::unique_ptr<Consumer> MakeOutput(std::vector<Consumer*> targets) = 0;
  // Non-sources: the driver of one subtask; `next` is the consumer of its output (may be null for
  // sinks).
  virtual std::unique_ptr<Consumer> MakeDriver(OperatorContext ctx, Consumer* next,
                                               size_t batch_size) = 0;
  // Where input `index` (0 or 1) of a driver made by MakeDriver is delivered.
  virtual Consumer* InputOf(Consumer* driver, int index) { return driver; }
  // True when the node's operator keeps no state (OneInputOperator::stateless); sources and sinks
  // count as stateless here (their positions and transactions follow the partitions).
  virtual bool Stateless() const { return is_source || is_sink; }
  // Sources: the task of one subtask.
  virtual std::unique_ptr<Task> MakeSourceTask(OperatorContext ctx, Consumer* next,
                                               size_t batch_size, const JobControl* control) {
    return nullptr;
  }
};

template <typename Out>
struct TypedNode : NodeBase {
  std::unique_ptr<Consumer> MakeOutput(std::vector<Consumer*> targets) override {
    if (targets.empty()) return std::make_unique<DiscardConsumer<Out>>();
    std::vector<BatchConsumer<Out>*> typed;
    for (Consumer* c : targets) typed.push_back(static_cast<BatchConsumer<Out>*>(c));
    return std::make_unique<FanOut<Out>>(std::move(typed));
  }
};

template <typename T, typename TsFn>
struct SourceNode final : TypedNode<T> {
  SourceFactory<T> factory;
  WatermarkSpec spec;
  TsFn ts_fn;
  std::unique_ptr<Consumer> MakeDriver(OperatorContext, Consumer*, size_t) override {
    return nullptr;
  }
  std::unique_ptr<Task> MakeSourceTask(OperatorContext ctx, Consumer* next, size_t batch_size,
                                       const JobControl* control) override {
    auto fn = factory(ctx.subtask, ctx.parallelism);
    return std::make_unique<SourceTask<T, TsFn>>(std::move(fn), std::move(ctx), spec, ts_fn,
                                                 static_cast<BatchConsumer<T>*>(next), batch_size,
                                                 control);
  }
};

template <typename In, typename Out>
struct OneInputNode final : TypedNode<Out> {
  std::function<std::unique_ptr<OneInputOperator<In, Out>>()> factory;
  bool Stateless() const override {
    auto op = factory();
    return op != nullptr && op->stateless();
  }
  std::unique_ptr<Consumer> MakeDriver(OperatorContext ctx, Consumer* next,
                                       size_t batch_size) override {
    return std::make_unique<OneInputDriver<In, Out>>(
        factory(), std::move(ctx), static_cast<BatchConsumer<Out>*>(next), batch_size);
  }
};

template <typename In1, typename In2, typename Out>
struct TwoInputNode final : TypedNode<Out> {
  std::function<std::unique_ptr<TwoInputOperator<In1, In2, Out>>()> factory;
  std::unique_ptr<Consumer> MakeDriver(OperatorContext ctx, Consumer* next,
                                       size_t batch_size) override {
    return std::make_unique<TwoInputDriver<In1, In2, Out>>(
        factory(), std::move(ctx), static_cast<BatchConsumer<Out>*>(next), batch_size);
  }
  Consumer* InputOf(Consumer* driver, int index) override {
    auto* d = static_cast<TwoInputDriver<In1, In2, Out>*>(static_cast<BatchConsumer<In1>*>(driver));
    return index == 0 ? static_cast<Consumer*>(d) : static_cast<Consumer*>(d->input2());
  }
};

// Sink nodes have no output; TypedNode<T> only supplies an unused MakeOutput.
template <typename T>
struct SinkNode final : TypedNode<T> {
  SinkNode() { this->is_sink = true; }
  SinkFactory<T> factory;
  std::unique_ptr<Consumer> MakeDriver(OperatorContext ctx, Consumer*, size_t) override {
    return std::make_unique<SinkDriver<T>>(factory(ctx.subtask, ctx.parallelism), std::move(ctx));
  }
};

struct EdgeBase {
  int from = -1;
  int to = -1;
  int input_index = 0;
  Partitioning kind = Partitioning::kDefault;
  std::string key_name;  // KeyBy edges: the key's name (part of the job's fingerprint)

  virtual ~EdgeBase() = default;
  virtual std::unique_ptr<ChannelBase> MakeChannel(InputGate* gate, size_t capacity) = 0;
  // channels[j] leads to downstream subtask j (a single channel for forward edges).
  virtual std::unique_ptr<Consumer> MakeWriter(const std::vector<ChannelBase*>& channels,
                                               uint32_t up_subtask, uint32_t max_parallelism,
                                               size_t batch_size) = 0;
  virtual std::unique_ptr<ChannelBindingBase> MakeBinding(ChannelBase* channel,
                                                          Consumer* target) = 0;
};

template <typename T>
using HashWriterFactory = std::function<std::unique_ptr<BatchConsumer<T>>(
    std::vector<Channel<T>*>, uint32_t max_parallelism, size_t batch_size)>;

template <typename T>
struct Edge final : EdgeBase {
  HashWriterFactory<T> hash_writer;  // set for Partitioning::kHash

  std::unique_ptr<ChannelBase> MakeChannel(InputGate* gate, size_t capacity) override {
    return std::make_unique<Channel<T>>(gate, capacity);
  }
  std::unique_ptr<Consumer> MakeWriter(const std::vector<ChannelBase*>& channels,
                                       uint32_t up_subtask, uint32_t max_parallelism,
                                       size_t batch_size) override {
    std::vector<Channel<T>*> typed;
    for (ChannelBase* c : channels) typed.push_back(static_cast<Channel<T>*>(c));
    switch (kind) {
      case Partitioning::kHash:
        return hash_writer(std::move(typed), max_parallelism, batch_size);
      case Partitioning::kBroadcast:
        return std::make_unique<BroadcastWriter<T>>(std::move(typed));
      default:
        return std::make_unique<RoundRobinWriter<T>>(std::move(typed), up_subtask);
    }
  }
  std::unique_ptr<ChannelBindingBase> MakeBinding(ChannelBase* channel, Consumer* target) override {
    return std::make_unique<ChannelBinding<T>>(static_cast<Channel<T>*>(channel),
                                               static_cast<BatchConsumer<T>*>(target));
  }
};

}  // namespace flow::rt::engine_detail
