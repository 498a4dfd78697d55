#include "flow/runtime/shuffle/partition_progress.h"

#include <algorithm>

#include <fmt/format.h>

namespace flow::rt::shuffle {
namespace {
constexpr uint32_t kSnapshotVersion = 1;
}  // namespace

PartitionProgress::PartitionProgress(std::vector<std::string> sources) {
  for (std::string& name : sources) sources_.emplace(std::move(name), Source{});
}

Result<bool> PartitionProgress::Apply(const ProgressReport& report) {
  // Validate the whole report before changing anything: a refused report leaves no trace.
  for (const SourceProgress& s : report.sources) {
    if (sources_.find(s.name) == sources_.end()) {
      return Status::InvalidArgument(
          fmt::format("progress from writer `{}` names source `{}`, which this job does not have "
                      "(every instance "
                      "of a job must run the same binary)",
                      report.writer, s.name));
    }
    for (const SplitProgress& split : s.splits) {
      if (split.partition < 0 || static_cast<uint32_t>(split.partition) >= s.partitions) {
        return Status::InvalidArgument(fmt::format(
            "progress from writer `{}`: source `{}` partition {} is outside its {} partitions",
            report.writer, s.name, split.partition, s.partitions));
      }
    }
  }
  for (const SourceProgress& s : report.sources) {
    Source& source = sources_.find(s.name)->second;
    // A topic only ever grows; a writer with older metadata may still report fewer partitions.
    source.partitions = std::max(source.partitions, s.partitions);
    for (const SplitProgress& in : s.splits) {
      Split& split = source.splits[in.partition];
      split.watermark = std::max(split.watermark, in.watermark);
      split.idle = in.idle;
      split.ended = in.ended;
    }
  }
  const TimestampMs next = FromSplits();
  if (next <= watermark_) return false;
  watermark_ = next;
  return true;
}

PartitionProgress::Summary PartitionProgress::Summarize() const {
  Summary sum;
  for (const auto& [name, source] : sources_) {
    if (source.partitions == 0) return sum;  // a source nobody reported yet
    for (uint32_t p = 0; p < source.partitions; ++p) {
      auto it = source.splits.find(static_cast<int32_t>(p));
      if (it == source.splits.end()) return sum;  // a partition nobody reported yet
      const Split& split = it->second;
      if (split.ended) continue;
      sum.any_open = true;
      if (split.idle) {
        sum.idle_max = std::max(sum.idle_max, split.watermark);
      } else {
        sum.any_active = true;
        sum.open_min = std::min(sum.open_min, split.watermark);
      }
    }
  }
  sum.complete = !sources_.empty();
  return sum;
}

TimestampMs PartitionProgress::FromSplits() const {
  const Summary sum = Summarize();
  if (!sum.complete) return kMinWatermark;
  if (!sum.any_open) return kMaxWatermark;
  return sum.any_active ? sum.open_min : sum.idle_max;
}

bool PartitionProgress::Idle() const {
  const Summary sum = Summarize();
  return sum.complete && sum.any_open && !sum.any_active;
}

bool PartitionProgress::Ended() const {
  const Summary sum = Summarize();
  return sum.complete && !sum.any_open;
}

void PartitionProgress::Snapshot(BinaryWriter* out) const {
  std::vector<SourceProgress> sources;
  for (const auto& [name, source] : sources_) {
    SourceProgress& s = sources.emplace_back();
    s.name = name;
    s.partitions = source.partitions;
    for (const auto& [partition, split] : source.splits) {
      s.splits.push_back(SplitProgress{partition, split.watermark, split.idle, split.ended});
    }
  }
  out->PutU32(kSnapshotVersion);
  out->PutI64(watermark_);
  AppendSources(sources, out);
}

Status PartitionProgress::Restore(std::string_view bytes) {
  BinaryReader in(bytes);
  uint32_t version = 0;
  TimestampMs watermark = kMinWatermark;
  std::vector<SourceProgress> sources;
  Status st = in.GetU32(&version);
  if (st.ok() && version != kSnapshotVersion) {
    st = Status::Corruption(fmt::format("version {}, expected {}", version, kSnapshotVersion));
  }
  if (st.ok()) st = in.GetI64(&watermark);
  if (st.ok()) st = ReadSources(&in, &sources);
  if (st.ok() && !in.AtEnd())
    st = Status::Corruption(fmt::format("{} bytes after the end", in.remaining()));
  if (!st.ok()) return Status::Corruption("repartition progress snapshot: " + st.message());

  std::map<std::string, Source, std::less<>> restored;
  for (const auto& [name, unused] : sources_) restored.emplace(name, Source{});
  for (const SourceProgress& s : sources) {
    auto it = restored.find(s.name);
    if (it == restored.end()) {
      return Status::InvalidArgument(fmt::format(
          "repartition progress snapshot names source `{}`, which this job does not have", s.name));
    }
    it->second.partitions = s.partitions;
    for (const SplitProgress& split : s.splits) {
      it->second.splits[split.partition] = Split{split.watermark, split.idle, split.ended};
    }
  }
  sources_ = std::move(restored);
  watermark_ = watermark;
  return Status::Ok();
}

}  // namespace flow::rt::shuffle
