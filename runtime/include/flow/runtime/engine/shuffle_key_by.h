#pragma once
// KeyByAcrossInstances: a key-by that works the same in one process and across the instances of a
// scaled-out job (docs/deploy.md, "Shuffles through Kafka").
//
//   auto keyed = KeyByAcrossInstances(job, where, "per_minute.window", "user", user_hash);
//   if (!keyed.ok()) return keyed.status();
//   keyed->Then<Count>("per_minute.window", window_factory);
//
// One process (no --instance): `in.KeyBy(key_name, key_hash)`, nothing else.
// Under --instance the key-by is cut in two where the graph is built, so the stages need no
// renumbering and the engine sees only a sink and a source:
//   in --forward--> "<op>.shuffle.write"  an exactly-once RepartitionSink (txn/repartition_sink.h)
//                                         in the job's Kafka transaction group on
//                                         --shuffle-brokers, one subtask per subtask of `in`
//   "<op>.shuffle" --key-by-->            a RepartitionSource (engine/repartition.h) of the
//                                         consumer group "flow-<job>.<op>.shuffle"; its key-by
//                                         stays inside the instance, since a partition holds
//                                         whole key groups
// on the topic RepartitionTopicName(job id, op) with --shuffle-partitions partitions. The sink
// reports the event time of the splits of the sources on its forward path (Job::ForwardSourcesOf),
// which is why that path must not repartition. A second key-by behind a keyed operator that reads
// another cut (a window behind a window or a join) reports that reader's key groups instead: those
// of the keyed subtask of its own index. Errors: kInvalidArgument naming the operator and what to
// change (no
// --shuffle-brokers, a name no topic can have, a partition count out of range, such a path, a
// record type without a Serializer, which cannot cross between processes).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/repartition.h"
#include "flow/runtime/engine/txn_sink.h"
#include "flow/runtime/shuffle/repartition_topic.h"

namespace flow::rt {

namespace engine_detail {

// The repartition topic of operator `op` under --instance, with the partition count checked;
// errors name `what`.
inline Result<std::string> RepartitionTopicOf(const JobOptions& o, const std::string& op,
                                              const std::string& what) {
  auto topic = shuffle::RepartitionTopicName(o.job_id, op);
  if (!topic.ok()) return Status(topic.status().code(), what + ": " + topic.status().message());
  if (Status s = shuffle::ValidateRepartitionPartitions(o.shuffle_partitions, o.max_parallelism);
      !s.ok()) {
    return Status(s.code(), fmt::format("{}: --shuffle-partitions: {}", what, s.message()));
  }
  return topic;
}

// The writing half: `in`'s records of input `input` (0, or 1 for a join's right side) into
// `topic` as the exactly-once sink `name`, reporting the progress of `from`.
template <typename T, typename KeyHash>
requires Serializable<T>
void WriteRepartition(Job& job, const Stream<T>& in, const std::string& name,
                      const std::string& topic, int input, ForwardOrigins from, KeyHash key_hash) {
  const JobOptions& o = job.options();
  KafkaTxnSinkConfig config;
  config.brokers = o.shuffle_brokers;
  RepartitionSinkOptions writes;
  writes.topic = topic;
  writes.partitions = o.shuffle_partitions;
  writes.max_parallelism = o.max_parallelism;
  writes.input = input;
  writes.upstream_sources = std::move(from.sources);
  writes.upstream_readers = std::move(from.readers);
  ExactlyOnceSink<T>(in.Forward(), job, name, RepartitionTxnSink(config, writes),
                     RepartitionEncode<T>(key_hash), job.ParallelismOf(in.node()));
}

// The reading half: the shuffle reader `name` of `topic`, whose event time comes from the
// progress of `sources`.
template <typename T>
requires RepartitionReadable<T> Stream<T> ReadRepartition(Job& job, const std::string& name,
                                                          const std::string& topic,
                                                          std::vector<std::string> sources,
                                                          WatermarkSpec spec) {
  const JobOptions& o = job.options();
  KafkaSourceOptions reads;
  reads.brokers = o.shuffle_brokers;
  RepartitionSourceSpec from;
  from.topic = topic;
  from.partitions = o.shuffle_partitions;
  from.max_parallelism = o.max_parallelism;
  from.upstream_sources = std::move(sources);
  spec.mode = TimeMode::kEventTime;
  Stream<T> shuffled =
      job.Source<T>(name, RepartitionSourceFactory<T>(reads, std::move(from)), spec);
  job.MarkShuffleReader(shuffled.node());
  return shuffled;
}

// kInvalidArgument for a cut under --instance without --shuffle-brokers, naming `what`.
inline Status NeedShuffleBrokers(const std::string& what, std::string_view records) {
  return Status::InvalidArgument(
      fmt::format("{}: {} cross between instances through a repartition topic; give "
                  "--shuffle-brokers with the Kafka cluster of the job's exactly-once sinks "
                  "(docs/deploy.md)",
                  what, records));
}

// kInvalidArgument for records without a binary encoding under --instance, naming `what`.
inline Status NeedEncoding(const std::string& what) {
  return Status::InvalidArgument(
      fmt::format("{}: its records have no binary encoding, so they cannot cross between "
                  "instances yet; run the job as one process",
                  what));
}

template <typename T, typename KeyHash>
requires Serializable<T> Result<Stream<T>> CutAcrossInstances(Job& job, const Stream<T>& in,
                                                              const std::string& op,
                                                              std::string key_name,
                                                              KeyHash key_hash, WatermarkSpec spec,
                                                              const std::string& what) {
  auto topic = RepartitionTopicOf(job.options(), op, what);
  if (!topic.ok()) return topic.status();
  auto from = job.ForwardSourcesOf(in.node(), what);
  if (!from.ok()) return from.status();
  WriteRepartition<T>(job, in, op + ".shuffle.write", *topic, 0, *from, key_hash);
  Stream<T> shuffled = ReadRepartition<T>(job, op + ".shuffle", *topic, from->Names(), spec);
  return shuffled.KeyBy(std::move(key_name), key_hash);
}

}  // namespace engine_detail

// `op`: the keyed operator the stream feeds (names the topic and the two nodes). `spec`: the
// reader's watermark settings (its event time comes from the writers' reports; the interval is
// how often it passes it on).
template <typename T, typename KeyHash>
[[nodiscard]] Result<Stream<T>> KeyByAcrossInstances(Job& job, const Stream<T>& in,
                                                     const std::string& op, std::string key_name,
                                                     KeyHash key_hash, WatermarkSpec spec = {}) {
  const JobOptions& o = job.options();
  if (o.instance.empty()) return in.KeyBy(std::move(key_name), key_hash);
  const std::string what =
      fmt::format("--instance {}: operator '{}' (key by {})", o.instance, op, key_name);
  if (o.shuffle_brokers.empty()) return engine_detail::NeedShuffleBrokers(what, "its records");
  if constexpr (!Serializable<T>) {
    return engine_detail::NeedEncoding(what);
  } else {
    return engine_detail::CutAcrossInstances<T>(job, in, op, std::move(key_name), key_hash, spec,
                                                what);
  }
}

}  // namespace flow::rt
