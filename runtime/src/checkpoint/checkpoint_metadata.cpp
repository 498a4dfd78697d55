#include "flow/runtime/checkpoint/checkpoint_metadata.h"

#include <cstdio>
#include <cstring>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/common/serde.h"

namespace flow::rt {

namespace {

constexpr uint32_t kMagic = 0x4D434C46;  // "FLCM" little-endian
// Version 2 added each snapshot's source_watermark, version 3 the operators' state schemas;
// version 1 and 2 files are still read.
constexpr uint32_t kVersion = 3;
constexpr uint32_t kOldestVersion = 1;
constexpr size_t kHeaderBytes = 4 + 4 + 8;  // magic, version, total file size
// Smallest encodings, to reject counts larger than the bytes left before allocating.
constexpr size_t kMinOpBytes = 8 + 4;
constexpr size_t kMinPartBytes = 8;
constexpr size_t kMinSnapshotBytes = 8 + 4 + 4 + 4 + 1 + 8 + 4;
constexpr size_t kMinFileBytes = 8 + 8 + 4 + 1;

Status Truncated(const char* what) {
  return Status::Corruption(
      std::string("checkpoint metadata truncated or malformed while reading ") + what);
}

#define FLOW_META_READ(expr, what)            \
  do {                                        \
    if (!(expr).ok()) return Truncated(what); \
  } while (0)

Status ReadCount(BinaryReader* r, size_t min_each, const char* what, uint32_t* n) {
  FLOW_META_READ(r->GetU32(n), what);
  if (static_cast<uint64_t>(*n) * min_each > r->remaining()) {
    return Status::Corruption(std::string("checkpoint metadata: ") + what + " count " +
                              std::to_string(*n) + " exceeds the " +
                              std::to_string(r->remaining()) + " bytes left");
  }
  return Status::Ok();
}

}  // namespace

std::string EncodeCheckpointMetadata(const CheckpointMetadata& m) {
  BinaryWriter w;
  w.PutU32(kMagic);
  w.PutU32(kVersion);
  w.PutU64(0);  // total file size, patched below
  w.PutI64(m.checkpoint_id);
  w.PutString(m.savepoint_name);
  w.PutI64(m.created_ms);
  w.PutU64(m.job_fingerprint);
  w.PutU32(m.max_parallelism);
  w.PutBool(m.state_schemas);
  w.PutU32(static_cast<uint32_t>(m.operators.size()));
  for (const OperatorParallelism& op : m.operators) {
    w.PutString(op.name);
    w.PutU32(op.parallelism);
    w.PutU32(static_cast<uint32_t>(op.state_schema.size()));
    for (const std::string& part : op.state_schema) w.PutString(part);
  }
  w.PutU32(static_cast<uint32_t>(m.snapshots.size()));
  for (const OperatorSnapshot& s : m.snapshots) {
    w.PutString(s.operator_name);
    w.PutU32(s.subtask);
    w.PutU32(s.key_group_first);
    w.PutU32(s.key_group_end);
    w.PutBool(s.finished);
    w.PutString(s.source_position);
    w.PutString(s.source_watermark);
    w.PutU32(static_cast<uint32_t>(s.files.size()));
    for (const SnapshotFile& f : s.files) {
      w.PutString(f.name);
      w.PutU64(f.size);
      w.PutU32(f.crc32c);
      w.PutBool(f.shared);
    }
  }
  std::string out = w.Release();
  uint64_t total = out.size() + 4;
  std::memcpy(out.data() + 8, &total, sizeof total);
  uint32_t crc = Crc32c(out);
  out.append(reinterpret_cast<const char*>(&crc), sizeof crc);
  return out;
}

Result<CheckpointMetadata> DecodeCheckpointMetadata(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes + 4) {
    return Status::Corruption("checkpoint metadata truncated: " + std::to_string(bytes.size()) +
                              " bytes, expected at least " + std::to_string(kHeaderBytes + 4));
  }
  std::string_view body = bytes.substr(0, bytes.size() - 4);
  uint32_t stored = 0;
  std::memcpy(&stored, bytes.data() + body.size(), 4);
  BinaryReader r(body);
  uint32_t magic = 0;
  uint32_t version = 0;
  FLOW_META_READ(r.GetU32(&magic), "magic");
  if (magic != kMagic)
    return Status::Corruption(
        "checkpoint metadata: bad magic (not a Flow checkpoint metadata file)");
  FLOW_META_READ(r.GetU32(&version), "version");
  if (version < kOldestVersion || version > kVersion) {
    return Status::Corruption(
        "checkpoint metadata: unsupported version " + std::to_string(version) + " (expected " +
        std::to_string(kOldestVersion) + " to " + std::to_string(kVersion) + ")");
  }
  uint64_t declared = 0;
  FLOW_META_READ(r.GetU64(&declared), "file size");
  if (declared != bytes.size()) {
    return Status::Corruption(
        std::string("checkpoint metadata ") + (bytes.size() < declared ? "truncated" : "too long") +
        ": " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(declared));
  }
  uint32_t actual = Crc32c(body);
  if (actual != stored) {
    char buf[96];
    std::snprintf(buf, sizeof buf,
                  "checkpoint metadata: checksum mismatch (expected %08x, actual %08x)", stored,
                  actual);
    return Status::Corruption(buf);
  }
  CheckpointMetadata m;
  FLOW_META_READ(r.GetI64(&m.checkpoint_id), "checkpoint id");
  FLOW_META_READ(r.GetString(&m.savepoint_name), "savepoint name");
  FLOW_META_READ(r.GetI64(&m.created_ms), "creation time");
  FLOW_META_READ(r.GetU64(&m.job_fingerprint), "job fingerprint");
  FLOW_META_READ(r.GetU32(&m.max_parallelism), "max parallelism");
  if (m.max_parallelism == 0) return Status::Corruption("checkpoint metadata: max parallelism 0");
  if (version >= 3) FLOW_META_READ(r.GetBool(&m.state_schemas), "state schemas flag");
  uint32_t n = 0;
  FLOW_RETURN_IF_ERROR(ReadCount(&r, kMinOpBytes, "operator", &n));
  m.operators.resize(n);
  for (OperatorParallelism& op : m.operators) {
    FLOW_META_READ(r.GetString(&op.name), "operator name");
    FLOW_META_READ(r.GetU32(&op.parallelism), "operator parallelism");
    if (version < 3) continue;
    uint32_t parts = 0;
    FLOW_RETURN_IF_ERROR(ReadCount(&r, kMinPartBytes, "state schema part", &parts));
    op.state_schema.resize(parts);
    for (std::string& part : op.state_schema)
      FLOW_META_READ(r.GetString(&part), "state schema part");
  }
  FLOW_RETURN_IF_ERROR(ReadCount(&r, kMinSnapshotBytes, "snapshot", &n));
  m.snapshots.resize(n);
  for (OperatorSnapshot& s : m.snapshots) {
    FLOW_META_READ(r.GetString(&s.operator_name), "snapshot operator name");
    FLOW_META_READ(r.GetU32(&s.subtask), "snapshot subtask");
    FLOW_META_READ(r.GetU32(&s.key_group_first), "snapshot key groups");
    FLOW_META_READ(r.GetU32(&s.key_group_end), "snapshot key groups");
    if (s.key_group_first > s.key_group_end || s.key_group_end > m.max_parallelism) {
      return Status::Corruption("checkpoint metadata: snapshot of " + s.operator_name + "#" +
                                std::to_string(s.subtask) + " has invalid key groups [" +
                                std::to_string(s.key_group_first) + ", " +
                                std::to_string(s.key_group_end) + ")");
    }
    FLOW_META_READ(r.GetBool(&s.finished), "snapshot finished flag");
    FLOW_META_READ(r.GetString(&s.source_position), "source position");
    if (version >= 2) FLOW_META_READ(r.GetString(&s.source_watermark), "source watermark");
    uint32_t nf = 0;
    FLOW_RETURN_IF_ERROR(ReadCount(&r, kMinFileBytes, "file", &nf));
    s.files.resize(nf);
    for (SnapshotFile& f : s.files) {
      FLOW_META_READ(r.GetString(&f.name), "file name");
      FLOW_META_READ(r.GetU64(&f.size), "file size");
      FLOW_META_READ(r.GetU32(&f.crc32c), "file checksum");
      FLOW_META_READ(r.GetBool(&f.shared), "file shared flag");
      if (f.name.empty() || f.name.find('/') != std::string::npos || f.name == "." ||
          f.name == "..") {
        return Status::Corruption("checkpoint metadata: invalid file name '" + f.name + "'");
      }
    }
  }
  if (!r.AtEnd()) {
    return Status::Corruption("checkpoint metadata: " + std::to_string(r.remaining()) +
                              " unexpected trailing bytes");
  }
  return m;
}

uint64_t JobFingerprint(const std::vector<std::string>& parts) {
  uint64_t h = StableHash(std::string_view("flow-job"));
  for (const std::string& p : parts) h = HashCombine(h, StableHash(std::string_view(p)));
  return h;
}

}  // namespace flow::rt
