#pragma once
// Building blocks shared by the keyed state kinds: the StateTable interface the backend uses to
// snapshot, restore and measure state without knowing its types; the StateContext (owned key
// groups, clocks) every table reads; TTL configuration; and HeapTable, the heap backend's typed
// per-key-group hash maps.
//
// Threading: a backend and all its tables belong to one subtask thread; nothing here locks.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/state/key_group_span.h"
#include "flow/runtime/state/key_hash.h"
#include "flow/runtime/state/serializer.h"

namespace flow::rt {

// Returns the current processing time in ms since the epoch.
using ProcessingClock = std::function<TimestampMs()>;
TimestampMs SystemClockMs();

// The owned key groups and the two notions of "now" that TTL expiry uses.
struct StateContext {
  KeyGroupSpan range;
  uint32_t max_parallelism = kDefaultMaxParallelism;
  ProcessingClock clock;                  // Default: SystemClockMs
  TimestampMs watermark = kMinWatermark;  // advanced by the operator (event-time TTL)
};

enum class TtlTimeDomain {
  kProcessingTime,  // expiry measured on the backend's processing clock
  kEventTime,       // expiry measured on the current watermark
};

enum class TtlUpdate {
  kOnWrite,         // Default: creating or writing an entry restarts its lifetime
  kOnReadAndWrite,  // reads restart it too
};

// An entry written at time t (in `domain`) is invisible, and removed, from t + ttl on.
// ttl <= 0 (Default) disables TTL.
struct StateTtl {
  DurationMs ttl = 0;
  TtlTimeDomain domain = TtlTimeDomain::kProcessingTime;
  TtlUpdate update = TtlUpdate::kOnWrite;
  bool enabled() const { return ttl > 0; }
};

inline TimestampMs SaturatingAdd(TimestampMs t, DurationMs d) {
  if (d > 0 && t > kMaxWatermark - d) return kMaxWatermark;
  if (d < 0 && t < kMinWatermark - d) return kMinWatermark;
  return t + d;
}

// A value plus the time it expires (kMaxWatermark when TTL is off).
template <typename V>
struct TtlEntry {
  V value{};
  TimestampMs expires_at = kMaxWatermark;

  void Serialize(BinaryWriter& w) const {
    WriteValue(w, value);
    w.PutI64(expires_at);
  }
  Status Deserialize(BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(ReadValue(r, &value));
    return r.GetI64(&expires_at);
  }
};

// TTL bookkeeping shared by the state kinds.
class TtlPolicy {
 public:
  TtlPolicy(const StateContext* ctx, StateTtl ttl) : ctx_(ctx), ttl_(ttl) {}
  bool enabled() const { return ttl_.enabled(); }
  TimestampMs Now() const {
    return ttl_.domain == TtlTimeDomain::kEventTime ? ctx_->watermark : ctx_->clock();
  }
  TimestampMs ExpiryFromNow() const {
    return ttl_.enabled() ? SaturatingAdd(Now(), ttl_.ttl) : kMaxWatermark;
  }
  bool Expired(TimestampMs expires_at) const { return ttl_.enabled() && Now() >= expires_at; }
  bool RefreshOnRead() const { return ttl_.update == TtlUpdate::kOnReadAndWrite; }

 private:
  const StateContext* ctx_;
  StateTtl ttl_;
};

// The backend's untyped view of one named piece of state (a state kind or a timer service).
class StateTable {
 public:
  virtual ~StateTable() = default;
  virtual const std::string& name() const = 0;
  // Number of entries (keys; for MapState, user-key entries) in `key_group`.
  virtual size_t KeyGroupSize(uint32_t key_group) const = 0;
  // Appends the entries of `key_group` (owned) to `out`.
  virtual void SnapshotKeyGroup(uint32_t key_group, BinaryWriter* out) const = 0;
  // Adds the entries in `in` to `key_group` (owned). Corruption when the bytes do not decode or a
  // key does not belong to `key_group`.
  [[nodiscard]] virtual Status RestoreKeyGroup(uint32_t key_group, BinaryReader* in) = 0;
  // Removes every expired entry (a full scan; lookups also drop expired entries lazily).
  virtual void CleanupExpired() {}
  virtual void Clear() = 0;
};

// Typed storage of the heap backend: one hash map K -> S per owned key group. Callers hash the
// key once (KeyGroupOf) and may pass the group to avoid hashing again.
template <StateKey K, Serializable S>
class HeapTable : public StateTable {
 public:
  using Map = std::unordered_map<K, S, KeyHasher<K>>;

  HeapTable(std::string name, const StateContext* ctx)
      : name_(std::move(name)), ctx_(ctx), groups_(ctx->range.size()) {}

  const std::string& name() const override { return name_; }
  uint32_t KeyGroup(const K& key) const { return KeyGroupOf(key, ctx_->max_parallelism); }
  // The map of an owned group; asserts ownership (routing a foreign key here is our bug).
  Map& Group(uint32_t key_group) {
    assert(ctx_->range.Contains(key_group) && "key group not owned by this state backend");
    return groups_[key_group - ctx_->range.first];
  }
  const Map& Group(uint32_t key_group) const {
    assert(ctx_->range.Contains(key_group) && "key group not owned by this state backend");
    return groups_[key_group - ctx_->range.first];
  }
  std::vector<Map>& groups() { return groups_; }
  const StateContext* context() const { return ctx_; }

  size_t KeyGroupSize(uint32_t key_group) const override { return Group(key_group).size(); }
  void SnapshotKeyGroup(uint32_t key_group, BinaryWriter* out) const override {
    const Map& m = Group(key_group);
    out->PutU64(m.size());
    for (const auto& [k, s] : m) {
      WriteValue(*out, k);
      WriteValue(*out, s);
    }
  }
  Status RestoreKeyGroup(uint32_t key_group, BinaryReader* in) override {
    uint64_t n = 0;
    FLOW_RETURN_IF_ERROR(ReadCount(*in, &n, name_.c_str()));
    Map& m = Group(key_group);
    for (uint64_t i = 0; i < n; ++i) {
      K k{};
      S s{};
      FLOW_RETURN_IF_ERROR(ReadValue(*in, &k));
      FLOW_RETURN_IF_ERROR(ReadValue(*in, &s));
      if (KeyGroup(k) != key_group) {
        return Status::Corruption("state '" + name_ + "': a key of key group " +
                                  std::to_string(KeyGroup(k)) + " was stored under group " +
                                  std::to_string(key_group));
      }
      m.insert_or_assign(std::move(k), std::move(s));
    }
    return Status::Ok();
  }
  void Clear() override {
    for (Map& m : groups_) m.clear();
  }

 private:
  std::string name_;
  const StateContext* ctx_;
  std::vector<Map> groups_;
};

}  // namespace flow::rt
