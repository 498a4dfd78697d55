#include "flow/runtime/engine/watermark.h"

#include <algorithm>

namespace flow::rt {

WatermarkGenerator::WatermarkGenerator(const WatermarkSpec& spec, int64_t start_now)
    : spec_(spec), start_now_(start_now) {}

void WatermarkGenerator::OnRecord(TimestampMs ts, int32_t split, int64_t now) {
  if (last_split_ < splits_.size() && splits_[last_split_].id == split) {
    Split& s = splits_[last_split_];
    s.max_ts = std::max(s.max_ts, ts);
    s.last_active = now;
    return;
  }
  for (size_t i = 0; i < splits_.size(); ++i) {
    if (splits_[i].id == split) {
      last_split_ = i;
      splits_[i].max_ts = std::max(splits_[i].max_ts, ts);
      splits_[i].last_active = now;
      return;
    }
  }
  splits_.push_back(Split{split, ts, now});
  last_split_ = splits_.size() - 1;
}

bool WatermarkGenerator::SplitIdle(const Split& s, int64_t now) const {
  return spec_.idle_timeout > 0 && now - s.last_active >= spec_.idle_timeout;
}

TimestampMs WatermarkGenerator::Current(int64_t now, TimestampMs wall_now_ms) const {
  switch (spec_.mode) {
    case TimeMode::kNone:
      return kMinWatermark;
    case TimeMode::kProcessingTime:
      return wall_now_ms - spec_.max_out_of_orderness - 1;
    case TimeMode::kEventTime:
      break;
  }
  TimestampMs low = kMaxWatermark;
  bool any = false;
  for (const Split& s : splits_) {
    if (SplitIdle(s, now)) continue;
    low = std::min(low, s.max_ts);
    any = true;
  }
  if (!any) return kMinWatermark;
  return Lowered(low);
}

TimestampMs WatermarkGenerator::Lowered(TimestampMs max_ts) const {
  // Saturating: a record at the very bottom of the range must not wrap around.
  if (max_ts < kMinWatermark + spec_.max_out_of_orderness + 1) return kMinWatermark;
  return max_ts - spec_.max_out_of_orderness - 1;
}

std::optional<std::pair<TimestampMs, bool>> WatermarkGenerator::SplitWatermark(int32_t split,
                                                                               int64_t now) const {
  for (const Split& s : splits_) {
    if (s.id != split) continue;
    return std::make_pair(Lowered(s.max_ts), SplitIdle(s, now));
  }
  return std::nullopt;
}

void WatermarkGenerator::RetainSplits(const std::vector<int32_t>& owned) {
  std::erase_if(splits_, [&](const Split& s) {
    return std::find(owned.begin(), owned.end(), s.id) == owned.end();
  });
  last_split_ = 0;
}

bool WatermarkGenerator::IsIdle(int64_t now) const {
  if (spec_.idle_timeout <= 0) return false;
  if (splits_.empty()) return now - start_now_ >= spec_.idle_timeout;
  for (const Split& s : splits_) {
    if (!SplitIdle(s, now)) return false;
  }
  return true;
}

namespace {
constexpr uint32_t kSnapshotVersion = 1;

// The snapshot's header: version and reached watermark.
Status ReadSnapshotHeader(BinaryReader* in, TimestampMs* reached) {
  uint32_t version = 0;
  if (!in->GetU32(&version).ok() || version != kSnapshotVersion || !in->GetI64(reached).ok()) {
    return Status::Corruption("source watermark snapshot: bad version or truncated");
  }
  return Status::Ok();
}
}  // namespace

void WatermarkGenerator::Snapshot(TimestampMs reached, int64_t now, BinaryWriter* out) const {
  out->PutU32(kSnapshotVersion);
  out->PutI64(reached);
  out->PutU32(static_cast<uint32_t>(splits_.size()));
  for (const Split& s : splits_) {
    out->PutU32(static_cast<uint32_t>(s.id));
    out->PutI64(s.max_ts);
    out->PutBool(SplitIdle(s, now));
  }
}

Result<TimestampMs> WatermarkGenerator::ReachedInSnapshot(std::string_view bytes) {
  BinaryReader in(bytes);
  TimestampMs reached = kMinWatermark;
  FLOW_RETURN_IF_ERROR(ReadSnapshotHeader(&in, &reached));
  return reached;
}

Status WatermarkGenerator::Restore(std::string_view bytes, int64_t now, TimestampMs* reached) {
  BinaryReader in(bytes);
  TimestampMs header_reached = kMinWatermark;
  FLOW_RETURN_IF_ERROR(ReadSnapshotHeader(&in, &header_reached));
  uint32_t n = 0;
  if (!in.GetU32(&n).ok() || static_cast<uint64_t>(n) * 13 > in.remaining()) {
    return Status::Corruption("source watermark snapshot: bad split count");
  }
  std::vector<Split> splits(n);
  for (Split& s : splits) {
    uint32_t id = 0;
    bool idle = false;
    if (!in.GetU32(&id).ok() || !in.GetI64(&s.max_ts).ok() || !in.GetBool(&idle).ok()) {
      return Status::Corruption("source watermark snapshot: truncated split");
    }
    s.id = static_cast<int32_t>(id);
    // Idle stays idle (until a record arrives); an active split starts its idle timeout anew.
    s.last_active = idle ? now - spec_.idle_timeout : now;
  }
  if (!in.AtEnd()) return Status::Corruption("source watermark snapshot: trailing bytes");
  splits_ = std::move(splits);
  last_split_ = 0;
  start_now_ = now;
  *reached = header_reached;
  return Status::Ok();
}

WatermarkCombiner::WatermarkCombiner(size_t channels) : in_(channels) {}

bool WatermarkCombiner::OnWatermark(size_t channel, TimestampMs wm) {
  In& c = in_[channel];
  if (wm <= c.wm) return false;  // a channel's watermark never goes back
  c.wm = wm;
  return Recompute();
}

bool WatermarkCombiner::OnIdle(size_t channel, bool idle) {
  in_[channel].idle = idle;
  return Recompute();
}

bool WatermarkCombiner::OnEnd(size_t channel) {
  in_[channel].ended = true;
  in_[channel].wm = kMaxWatermark;
  return Recompute();
}

bool WatermarkCombiner::AllIdle() const {
  bool any_open = false;
  for (const In& c : in_) {
    if (c.ended) continue;
    any_open = true;
    if (!c.idle) return false;
  }
  return any_open;
}

bool WatermarkCombiner::AllEnded() const {
  for (const In& c : in_) {
    if (!c.ended) return false;
  }
  return true;
}

bool WatermarkCombiner::Recompute() {
  // Ended channels count as kMaxWatermark; idle ones are skipped. When every open channel is idle,
  // nothing holds time back any more: advance to the highest watermark an open channel reached
  // (as Flink does), so an input that went quiet last does not freeze the job.
  TimestampMs low = kMaxWatermark;
  TimestampMs high_idle = kMinWatermark;
  bool any_active = false;
  for (const In& c : in_) {
    if (c.ended) continue;
    if (c.idle) {
      high_idle = std::max(high_idle, c.wm);
      continue;
    }
    low = std::min(low, c.wm);
    any_active = true;
  }
  if (!any_active && !AllEnded()) low = high_idle;
  if (low <= current_) return false;
  current_ = low;
  return true;
}

}  // namespace flow::rt
