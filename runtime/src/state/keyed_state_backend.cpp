#include "flow/runtime/state/keyed_state_backend.h"

#include <chrono>

namespace flow::rt {
namespace {
constexpr uint32_t kMagic = 0x534B4C46;  // "FLKS" little-endian
constexpr uint32_t kVersion = 1;
}  // namespace

TimestampMs SystemClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

KeyedStateBackend::KeyedStateBackend(KeyGroupSpan range, uint32_t max_parallelism,
                                     ProcessingClock clock) {
  assert(range.end <= max_parallelism && "key-group range beyond max parallelism");
  ctx_.range = range;
  ctx_.max_parallelism = max_parallelism;
  ctx_.clock = clock ? std::move(clock) : ProcessingClock(SystemClockMs);
}

size_t KeyedStateBackend::TotalEntries() const {
  size_t n = 0;
  for (const auto& t : tables_) {
    for (uint32_t g = ctx_.range.first; g < ctx_.range.end; ++g) n += t->KeyGroupSize(g);
  }
  return n;
}

void KeyedStateBackend::CleanupExpired() {
  for (const auto& t : tables_) t->CleanupExpired();
}

void KeyedStateBackend::Clear() {
  for (const auto& t : tables_) t->Clear();
}

void KeyedStateBackend::SnapshotState(BinaryWriter* out) const {
  out->PutU32(kMagic);
  out->PutU32(kVersion);
  out->PutU32(ctx_.max_parallelism);
  std::vector<uint32_t> groups;
  for (uint32_t g = ctx_.range.first; g < ctx_.range.end; ++g) {
    for (const auto& t : tables_) {
      if (t->KeyGroupSize(g) > 0) {
        groups.push_back(g);
        break;
      }
    }
  }
  out->PutU32(static_cast<uint32_t>(groups.size()));
  for (uint32_t g : groups) {
    BinaryWriter blob;
    blob.PutU32(static_cast<uint32_t>(tables_.size()));
    for (const auto& t : tables_) {
      BinaryWriter bytes;
      t->SnapshotKeyGroup(g, &bytes);
      blob.PutString(t->name());
      blob.PutString(bytes.data());
    }
    out->PutU32(g);
    out->PutString(blob.data());
    out->PutU32(Crc32c(blob.data()));
  }
}

Status KeyedStateBackend::RestoreState(BinaryReader* in) {
  uint32_t magic = 0, version = 0, max_parallelism = 0, group_count = 0;
  FLOW_RETURN_IF_ERROR(in->GetU32(&magic));
  if (magic != kMagic) return Status::Corruption("keyed state snapshot: bad magic number");
  FLOW_RETURN_IF_ERROR(in->GetU32(&version));
  if (version != kVersion) {
    return Status::Corruption("keyed state snapshot: unsupported version " +
                              std::to_string(version));
  }
  FLOW_RETURN_IF_ERROR(in->GetU32(&max_parallelism));
  if (max_parallelism != ctx_.max_parallelism) {
    return Status::InvalidArgument("keyed state snapshot has max parallelism " +
                                   std::to_string(max_parallelism) + ", job has " +
                                   std::to_string(ctx_.max_parallelism));
  }
  FLOW_RETURN_IF_ERROR(in->GetU32(&group_count));
  for (uint32_t i = 0; i < group_count; ++i) {
    uint32_t g = 0, crc = 0;
    std::string blob;
    FLOW_RETURN_IF_ERROR(in->GetU32(&g));
    FLOW_RETURN_IF_ERROR(in->GetString(&blob));
    FLOW_RETURN_IF_ERROR(in->GetU32(&crc));
    if (Crc32c(blob) != crc) {
      return Status::Corruption("keyed state snapshot: checksum mismatch in key group " +
                                std::to_string(g));
    }
    if (g >= ctx_.max_parallelism) {
      return Status::Corruption("keyed state snapshot: key group " + std::to_string(g) +
                                " out of range");
    }
    if (!ctx_.range.Contains(g)) continue;  // owned by another subtask after rescaling
    FLOW_RETURN_IF_ERROR(RestoreGroup(g, blob));
  }
  return Status::Ok();
}

Status KeyedStateBackend::RestoreGroup(uint32_t key_group, std::string_view blob) {
  BinaryReader r(blob);
  uint32_t table_count = 0;
  FLOW_RETURN_IF_ERROR(r.GetU32(&table_count));
  for (uint32_t i = 0; i < table_count; ++i) {
    std::string name, bytes;
    FLOW_RETURN_IF_ERROR(r.GetString(&name));
    FLOW_RETURN_IF_ERROR(r.GetString(&bytes));
    StateTable* table = nullptr;
    for (const auto& t : tables_) {
      if (t->name() == name) table = t.get();
    }
    if (table == nullptr) {
      return Status::InvalidArgument("keyed state snapshot names state '" + name +
                                     "', which this operator does not have");
    }
    BinaryReader tr(bytes);
    Status s = table->RestoreKeyGroup(key_group, &tr);
    if (!s.ok()) {
      return Status(s.code(), "key group " + std::to_string(key_group) + ": " + s.message());
    }
    if (!tr.AtEnd()) {
      return Status::Corruption("state '" + name + "' in key group " + std::to_string(key_group) +
                                " has trailing bytes");
    }
  }
  if (!r.AtEnd()) {
    return Status::Corruption("key group " + std::to_string(key_group) + " has trailing bytes");
  }
  return Status::Ok();
}

}  // namespace flow::rt
