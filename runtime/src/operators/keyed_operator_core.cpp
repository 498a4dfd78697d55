#include "flow/runtime/operators/keyed_operator_core.h"

#include <algorithm>

#include "flow/runtime/operators/window_spec.h"

namespace flow::rt {
namespace {
constexpr uint32_t kMagic = 0x504F4C46;  // "FLOP" little-endian
constexpr uint32_t kVersion = 1;

KeyedOperatorOptions WithClock(KeyedOperatorOptions o) {
  if (!o.clock) o.clock = SystemClockMs;
  return o;
}
}  // namespace

std::string OperatorSignature(std::string_view kind,
                              std::initializer_list<std::pair<std::string_view, int64_t>> params) {
  std::string s(kind);
  char sep = '(';
  for (const auto& [name, value] : params) {
    s.append(1, sep).append(name).append("=").append(std::to_string(value));
    sep = ',';
  }
  if (params.size() > 0) s.append(")");
  return s;
}

Status KeyedOperatorOptions::Validate() const {
  if (allowed_lateness < 0 || allowed_lateness > kMaxWindowDuration) {
    return Status::InvalidArgument("allowed lateness must be between 0 and 2^60 ms, got " +
                                   std::to_string(allowed_lateness));
  }
  if (key_groups.empty() || key_groups.end > max_parallelism) {
    return Status::InvalidArgument("key-group range " + key_groups.ToString() +
                                   " is empty or beyond max parallelism " +
                                   std::to_string(max_parallelism));
  }
  return Status::Ok();
}

KeyedOperatorCore::KeyedOperatorCore(std::string kind, KeyedOperatorOptions options)
    : kind_(std::move(kind)),
      options_(WithClock(std::move(options))),
      backend_(
          options_.key_groups, options_.max_parallelism, options_.clock,
          options_.state_backend ? *options_.state_backend : StateBackendOptionsFromEnvironment()) {
  assert(options_.Validate().ok() && "operator options must be validated before construction");
}

std::optional<TimestampMs> KeyedOperatorCore::RecordTime(TimestampMs timestamp) {
  TimestampMs t =
      options_.time_domain == TimeDomain::kProcessingTime ? options_.clock() : timestamp;
  if (t > kMaxEventTime || t < -kMaxEventTime) {
    ++counters_.invalid_timestamps;
    return std::nullopt;
  }
  return t;
}

bool KeyedOperatorCore::AdvanceWatermark(TimestampMs watermark) {
  if (watermark <= watermark_) return false;
  watermark_ = watermark;
  backend_.AdvanceWatermark(watermark);
  return true;
}

void KeyedOperatorCore::Snapshot(BinaryWriter* out) const {
  out->PutU32(kMagic);
  out->PutU32(kVersion);
  out->PutString(kind_);
  out->PutI64(watermark_);
  backend_.SnapshotState(out);
}

Status KeyedOperatorCore::Restore(BinaryReader* in) {
  // Built with append: GCC 12 reports a false -Wrestrict on `string + literal` chains at -O3.
  auto error = [this](StatusCode code, std::string_view what) {
    std::string m = kind_;
    m.append(" snapshot: ").append(what);
    return Status(code, std::move(m));
  };
  uint32_t magic = 0, version = 0;
  std::string kind;
  int64_t watermark = 0;
  FLOW_RETURN_IF_ERROR(in->GetU32(&magic));
  if (magic != kMagic) return error(StatusCode::kCorruption, "bad magic number");
  FLOW_RETURN_IF_ERROR(in->GetU32(&version));
  if (version != kVersion) {
    return error(StatusCode::kCorruption, "unsupported version " + std::to_string(version));
  }
  FLOW_RETURN_IF_ERROR(in->GetString(&kind));
  if (kind != kind_) {
    return error(StatusCode::kInvalidArgument, "taken from a '" + kind + "' operator");
  }
  FLOW_RETURN_IF_ERROR(in->GetI64(&watermark));
  Status s = backend_.RestoreState(in);
  if (!s.ok()) return error(s.code(), s.message());
  if (!in->AtEnd()) return error(StatusCode::kCorruption, "trailing bytes");
  watermark_ = restored_ ? std::min(watermark_, watermark) : watermark;
  restored_ = true;
  backend_.AdvanceWatermark(watermark_);
  return Status::Ok();
}

}  // namespace flow::rt
