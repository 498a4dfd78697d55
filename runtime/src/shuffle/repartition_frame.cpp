#include "flow/runtime/shuffle/repartition_frame.h"

#include <cstring>

#include <fmt/format.h>

namespace flow::rt::shuffle {
namespace {

constexpr uint8_t kIdle = 1;
constexpr uint8_t kEnded = 2;

// Smallest encoded split and source: a count read from the value can never ask for more entries
// than the bytes left could hold, so a corrupt count cannot make us reserve gigabytes.
constexpr size_t kSplitBytes = 4 + 8 + 1;
constexpr size_t kSourceBytes = 8 + 4 + 4;

}  // namespace

std::string ProgressSourceName(std::string_view source, int input) {
  std::string name(source);
  if (input == 1) name += " (right side)";
  return name;
}

void AppendRecordHeader(int input, TimestampMs ts, std::string* out) {
  out->push_back(static_cast<char>(kFrameVersion));
  out->push_back(static_cast<char>(input == 1 ? FrameKind::kRecord1 : FrameKind::kRecord0));
  out->append(reinterpret_cast<const char*>(&ts), sizeof ts);  // little-endian, as BinaryWriter
}

void AppendSources(const std::vector<SourceProgress>& sources, BinaryWriter* out) {
  out->PutU32(static_cast<uint32_t>(sources.size()));
  for (const SourceProgress& source : sources) {
    out->PutString(source.name);
    out->PutU32(source.partitions);
    out->PutU32(static_cast<uint32_t>(source.splits.size()));
    for (const SplitProgress& split : source.splits) {
      out->PutU32(static_cast<uint32_t>(split.partition));
      out->PutI64(split.watermark);
      out->PutU8(static_cast<uint8_t>((split.idle ? kIdle : 0) | (split.ended ? kEnded : 0)));
    }
  }
}

Status ReadSources(BinaryReader* in, std::vector<SourceProgress>* sources) {
  uint32_t count = 0;
  FLOW_RETURN_IF_ERROR(in->GetU32(&count));
  if (count > in->remaining() / kSourceBytes) {
    return Status::Corruption(
        fmt::format("{} sources do not fit in {} bytes", count, in->remaining()));
  }
  sources->clear();
  sources->reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    SourceProgress& source = sources->emplace_back();
    FLOW_RETURN_IF_ERROR(in->GetString(&source.name));
    FLOW_RETURN_IF_ERROR(in->GetU32(&source.partitions));
    uint32_t n = 0;
    FLOW_RETURN_IF_ERROR(in->GetU32(&n));
    if (n > in->remaining() / kSplitBytes) {
      return Status::Corruption(fmt::format("source `{}`: {} partitions do not fit in {} bytes",
                                            source.name, n, in->remaining()));
    }
    source.splits.resize(n);
    for (SplitProgress& split : source.splits) {
      uint32_t partition = 0;
      uint8_t flags = 0;
      FLOW_RETURN_IF_ERROR(in->GetU32(&partition));
      FLOW_RETURN_IF_ERROR(in->GetI64(&split.watermark));
      FLOW_RETURN_IF_ERROR(in->GetU8(&flags));
      if ((flags & ~(kIdle | kEnded)) != 0) {
        return Status::Corruption(fmt::format("source `{}` partition {}: unknown flags {:#x}",
                                              source.name, static_cast<int32_t>(partition), flags));
      }
      split.partition = static_cast<int32_t>(partition);
      split.idle = (flags & kIdle) != 0;
      split.ended = (flags & kEnded) != 0;
    }
  }
  return Status::Ok();
}

std::string EncodeProgress(const ProgressReport& report) {
  BinaryWriter out;
  out.PutU8(kFrameVersion);
  out.PutU8(static_cast<uint8_t>(FrameKind::kProgress));
  out.PutString(report.writer);
  AppendSources(report.sources, &out);
  return out.Release();
}

Result<Frame> DecodeFrame(std::string_view value, std::string_view where) {
  auto bad = [&](const std::string& what) {
    return Status::Corruption(fmt::format("repartition value at {}: {}", where, what));
  };
  if (value.size() < 2)
    return bad(fmt::format("{} bytes, shorter than its 2-byte header", value.size()));
  const auto version = static_cast<uint8_t>(value[0]);
  if (version != kFrameVersion) {
    return bad(
        fmt::format("format version {}, this binary reads version {} (every instance of a job "
                    "must run the same binary)",
                    version, kFrameVersion));
  }
  Frame frame;
  const auto kind = static_cast<uint8_t>(value[1]);
  switch (kind) {
    case static_cast<uint8_t>(FrameKind::kRecord0):
    case static_cast<uint8_t>(FrameKind::kRecord1):
      frame.kind = static_cast<FrameKind>(kind);
      if (value.size() < 2 + sizeof frame.timestamp) {
        return bad(
            fmt::format("a record of {} bytes, shorter than its 10-byte header", value.size()));
      }
      std::memcpy(&frame.timestamp, value.data() + 2, sizeof frame.timestamp);
      frame.record = value.substr(2 + sizeof frame.timestamp);
      return frame;
    case static_cast<uint8_t>(FrameKind::kProgress): {
      frame.kind = FrameKind::kProgress;
      BinaryReader in(value.substr(2));
      Status st = in.GetString(&frame.progress.writer);
      if (st.ok()) st = ReadSources(&in, &frame.progress.sources);
      if (st.ok() && !in.AtEnd())
        st = Status::Corruption(fmt::format("{} bytes after the end", in.remaining()));
      if (!st.ok()) return bad("progress report: " + st.message());
      return frame;
    }
    default:
      return bad(fmt::format("unknown kind {}", kind));
  }
}

}  // namespace flow::rt::shuffle
