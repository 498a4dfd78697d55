#pragma once
// KeyedStateBackend: owns the keyed state of one operator subtask: the key groups it owns, the
// named state objects (ValueState, ListState, MapState) and timer services, and snapshots/restores
// them per key group.
//
// This is the heap backend: typed hash maps per key group, values live as C++ objects, nothing is
// serialized except in SnapshotState/RestoreState. A RocksDB backend keeps the same Create*/
// Snapshot/Restore surface with keys serialized as [key group (2 bytes BE)][key][user key], so a
// key group is a contiguous key range; the typed state classes then become views over it.
//
// Snapshot format (all integers little-endian, see common/serde.h):
//   u32 magic "FLKS", u32 version (1), u32 max_parallelism, u32 group_count,
//   group_count x { u32 key_group, string blob, u32 crc32c(blob) }
//   blob := u32 table_count, table_count x { string table_name, string table_bytes }
// Only non-empty groups are written. RestoreState keeps the groups inside this backend's range and
// skips the others, so the snapshots of several old subtasks can be restored one after another
// into a backend with a different range (rescaling).
//
// Threading: one subtask thread. Create* must happen before RestoreState, with the same names.

#include <memory>
#include <string>
#include <vector>

#include "flow/runtime/state/list_state.h"
#include "flow/runtime/state/map_state.h"
#include "flow/runtime/state/timer_service.h"
#include "flow/runtime/state/value_state.h"

namespace flow::rt {

class KeyedStateBackend {
 public:
  // clock Default: SystemClockMs (only TTL in processing time reads it).
  explicit KeyedStateBackend(KeyGroupSpan range, uint32_t max_parallelism = kDefaultMaxParallelism,
                             ProcessingClock clock = nullptr);
  KeyedStateBackend(const KeyedStateBackend&) = delete;
  KeyedStateBackend& operator=(const KeyedStateBackend&) = delete;

  const KeyGroupSpan& range() const { return ctx_.range; }
  uint32_t max_parallelism() const { return ctx_.max_parallelism; }
  template <typename K>
  uint32_t KeyGroupFor(const K& key) const {
    return KeyGroupOf(key, ctx_.max_parallelism);
  }
  bool Owns(uint32_t key_group) const { return ctx_.range.Contains(key_group); }

  // Names must be unique per backend (a duplicate is our bug and asserts).
  template <StateKey K, Serializable V>
  ValueState<K, V>* CreateValueState(std::string name, StateTtl ttl = {}) {
    return Add(std::make_unique<ValueState<K, V>>(std::move(name), &ctx_, ttl));
  }
  template <StateKey K, Serializable V>
  ListState<K, V>* CreateListState(std::string name, StateTtl ttl = {}) {
    return Add(std::make_unique<ListState<K, V>>(std::move(name), &ctx_, ttl));
  }
  template <StateKey K, StateKey UK, Serializable V>
  MapState<K, UK, V>* CreateMapState(std::string name, StateTtl ttl = {}) {
    return Add(std::make_unique<MapState<K, UK, V>>(std::move(name), &ctx_, ttl));
  }
  template <StateKey K, typename N = VoidNamespace>
  TimerService<K, N>* CreateTimerService(std::string name) {
    return Add(std::make_unique<TimerService<K, N>>(std::move(name), &ctx_));
  }

  // Event time for event-time TTL; only moves forward.
  void AdvanceWatermark(TimestampMs watermark) {
    if (watermark > ctx_.watermark) ctx_.watermark = watermark;
  }
  TimestampMs watermark() const { return ctx_.watermark; }

  // Total entries over all tables and groups (timers included); 0 means no state is held.
  size_t TotalEntries() const;
  void CleanupExpired();
  void Clear();

  void SnapshotState(BinaryWriter* out) const;
  // Adds the owned key groups of a snapshot. InvalidArgument when the snapshot has another
  // max_parallelism or names unknown state; Corruption when bytes do not decode or a checksum
  // fails. On error the backend may hold part of the snapshot.
  [[nodiscard]] Status RestoreState(BinaryReader* in);

 private:
  template <typename T>
  T* Add(std::unique_ptr<T> table) {
    assert(!HasTable(table->name()) && "state name registered twice");
    T* raw = table.get();
    tables_.push_back(std::move(table));
    return raw;
  }
  bool HasTable(const std::string& name) const {
    for (const auto& t : tables_) {
      if (t->name() == name) return true;
    }
    return false;
  }
  [[nodiscard]] Status RestoreGroup(uint32_t key_group, std::string_view blob);

  StateContext ctx_;
  std::vector<std::unique_ptr<StateTable>> tables_;
};

}  // namespace flow::rt
