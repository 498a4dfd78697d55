#pragma once
// The values of a repartition topic: what one instance of a scaled-out job writes for another
// (docs/deploy.md, "Shuffles through Kafka"; docs/exactly-once.md, "State that moves").
//
// A keyed operator whose input may come from any instance reads one repartition topic. Upstream
// instances write two kinds of values into it, inside their Kafka transaction:
// - records: the operator's input records in the runtime's binary encoding (Serializer<T>),
//   tagged with the input they belong to (0, or 1 for a join's right side: one topic carries both
//   sides of a join, so a partition's state depends on one offset);
// - progress: per input partition of each upstream Kafka source, the writer's watermark and
//   whether that partition is idle or ended. Event time downstream is then the minimum over every
//   input partition, as in one process, whichever instance reads which partition.
//
// Format (little-endian, common/serde.h), version 1:
//   u8 version=1, u8 kind (0 record of input 0, 1 record of input 1, 2 progress), then
//   record:   i64 event time (kNoEventTime = kMinWatermark when none), the encoded record (the
//   rest); progress: string writer, u32 sources, per source {string name, u32 partitions (of its
//   topic),
//             u32 n, n x {i32 partition, i64 watermark, u8 flags (1 idle, 2 ended)}}.
// Decoding never trusts its input: a value that does not decode is kCorruption naming what is
// wrong and where; a later version is refused as such (an older binary reading a newer job's
// topic).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"

namespace flow::rt::shuffle {

inline constexpr uint8_t kFrameVersion = 1;

enum class FrameKind : uint8_t { kRecord0 = 0, kRecord1 = 1, kProgress = 2 };

// One input partition of an upstream source as its writer saw it.
struct SplitProgress {
  int32_t partition = 0;
  TimestampMs watermark = kMinWatermark;
  bool idle = false;
  bool ended = false;
  bool operator==(const SplitProgress&) const = default;
};

struct SourceProgress {
  std::string name;         // the source operator's name in the job graph
  uint32_t partitions = 0;  // partitions of its topic when the writer wrote this
  std::vector<SplitProgress> splits;
  bool operator==(const SourceProgress&) const = default;
};

struct ProgressReport {
  std::string writer;  // "<instance>/<subtask>": for logs and errors only
  std::vector<SourceProgress> sources;
  bool operator==(const ProgressReport&) const = default;
};

// The name a writer of input `input` reports an upstream source's progress under: the source's
// name for input 0, with " (right side)" for input 1. A source that feeds both sides of a join
// reaches the topic through two writers, each ahead of the other at times; one entry per side
// keeps the slower side's records from being late behind the faster side's report.
std::string ProgressSourceName(std::string_view source, int input);

// The header in front of a record of input `input` (0 or 1) with event time `ts`; the encoded
// record follows.
void AppendRecordHeader(int input, TimestampMs ts, std::string* out);
std::string EncodeProgress(const ProgressReport& report);

// The per-source part of a progress report, also PartitionProgress's snapshot: u32 sources, per
// source {string name, u32 partitions, u32 n, n x {i32 partition, i64 watermark, u8 flags}}.
void AppendSources(const std::vector<SourceProgress>& sources, BinaryWriter* out);
[[nodiscard]] Status ReadSources(BinaryReader* in, std::vector<SourceProgress>* sources);

struct Frame {
  FrameKind kind = FrameKind::kRecord0;
  TimestampMs timestamp = kMinWatermark;  // records: the event time (kNoEventTime is this value)
  std::string_view record;                // records: the encoded record (a view into the value)
  ProgressReport progress;                // progress only
  int input() const { return kind == FrameKind::kRecord1 ? 1 : 0; }
};

// `where` names the value in errors, e.g. "topic __flow_repartition_j.w partition 3 offset 17".
[[nodiscard]] Result<Frame> DecodeFrame(std::string_view value, std::string_view where);

}  // namespace flow::rt::shuffle
