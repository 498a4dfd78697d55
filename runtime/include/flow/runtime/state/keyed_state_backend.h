#pragma once
// KeyedStateBackend: owns the keyed state of one operator subtask: the key groups it owns, the
// named state objects (ValueState, ListState, MapState) and timer services, and snapshots/restores
// them per key group.
//
// Two kinds (StateBackendOptions::kind), same Create*/Snapshot/Restore surface, so operators do
// not know which one runs:
//   heap:    typed hash maps per key group, values live as C++ objects, nothing is serialized
//            except in snapshots and restores.
//   rocksdb: the same typed maps are a bounded cache (cache_entries per state) in front of a
//            RocksDB instance (state/kv_store.h) keyed [key group u16 BE][key], so a key group is
//            a contiguous key range and state may be larger than memory. Timers stay on the heap.
//
// Snapshots: SnapshotState/RestoreState (below) is the portable full format either kind reads;
// SnapshotAsync/RestoreFrom (state/state_snapshot.h) are asynchronous, and incremental for rocksdb.
//
// Snapshot format (all integers little-endian, see common/serde.h):
//   u32 magic "FLKS", u32 version (1), u32 max_parallelism, u32 group_count,
//   group_count x { u32 key_group, string blob, u32 crc32c(blob) }
//   blob := u32 table_count, table_count x { string table_name, string table_bytes }
// Only non-empty groups are written. RestoreState keeps the groups inside this backend's range and
// skips the others, so the snapshots of several old subtasks can be restored one after another
// into a backend with a different range (rescaling).
//
// Threading: one subtask thread (a PendingSnapshot's Write may run on another thread meanwhile).
// Create* must happen before RestoreState/RestoreFrom, with the same names.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flow/runtime/state/list_state.h"
#include "flow/runtime/state/map_state.h"
#include "flow/runtime/state/state_snapshot.h"
#include "flow/runtime/state/timer_service.h"
#include "flow/runtime/state/value_state.h"

namespace flow::rt {

enum class StateBackendKind { kHeap, kRocksDb };

struct StateBackendOptions {
  StateBackendKind kind = StateBackendKind::kHeap;  // Default: heap
  // rocksdb: parent of the per-backend database directories (each backend makes a fresh
  // subdirectory and deletes it when destroyed). Default: $TMPDIR or /tmp.
  std::string local_dir;
  // rocksdb: entries kept in memory per state (ValueState/ListState: keys; MapState: keys with
  // their whole map). Default: 65536; minimum 1.
  size_t cache_entries = 65536;
  // rocksdb: memtable size per state. Default: 16 MiB.
  size_t write_buffer_bytes = 16u << 20;
};

// "heap" / "rocksdb" (--state-backend); InvalidArgument naming the value otherwise.
Result<StateBackendKind> ParseStateBackendKind(std::string_view text);
const char* StateBackendKindName(StateBackendKind kind);

// What backends built without explicit options use (tools, tests; the engine hands every keyed
// operator the job's options through OperatorContext::state_backend): read from the environment,
// FLOW_STATE_BACKEND (heap|rocksdb), FLOW_STATE_LOCAL_DIR, FLOW_STATE_CACHE_ENTRIES; a bad value
// ends the process with exit code 2 and a message naming the variable.
StateBackendOptions StateBackendOptionsFromEnvironment();

class KeyedStateBackend {
 public:
  // clock Default: SystemClockMs (only TTL in processing time reads it). Uses `options`, or
  // StateBackendOptionsFromEnvironment(); a rocksdb backend that cannot open its database ends the
  // process with a message naming the directory (use Make to get the error instead).
  explicit KeyedStateBackend(KeyGroupSpan range, uint32_t max_parallelism = kDefaultMaxParallelism,
                             ProcessingClock clock = nullptr);
  KeyedStateBackend(KeyGroupSpan range, uint32_t max_parallelism, ProcessingClock clock,
                    const StateBackendOptions& options);
  // IoError when the rocksdb database cannot be created.
  static Result<std::unique_ptr<KeyedStateBackend>> Make(KeyGroupSpan range,
                                                         uint32_t max_parallelism,
                                                         ProcessingClock clock,
                                                         StateBackendOptions options);
  ~KeyedStateBackend();
  KeyedStateBackend(const KeyedStateBackend&) = delete;
  KeyedStateBackend& operator=(const KeyedStateBackend&) = delete;

  StateBackendKind kind() const { return options_.kind; }
  // rocksdb: the store (tests, benchmarks); nullptr on the heap.
  KvStore* store() { return store_.get(); }

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

  // Event time for event-time TTL; only moves forward. rocksdb: also trims the caches back to
  // their capacity (operators call this before touching state for the watermark, so no pointer
  // into the state is held).
  void AdvanceWatermark(TimestampMs watermark) {
    if (watermark <= ctx_.watermark) return;
    ctx_.watermark = watermark;
    if (store_ != nullptr) {
      for (const auto& t : tables_) t->TrimCache();
    }
  }
  TimestampMs watermark() const { return ctx_.watermark; }

  // Total entries over all tables and groups (timers included); 0 means no state is held.
  size_t TotalEntries() const;
  void CleanupExpired();
  void Clear();

  // Inside an AsyncSnapshotScope (state/snapshot_scope.h) a rocksdb backend writes only a
  // reference and hands the asynchronous part to the scope.
  void SnapshotState(BinaryWriter* out) const;
  // Adds the owned key groups of a snapshot. InvalidArgument when the snapshot has another
  // max_parallelism or names unknown state; Corruption when bytes do not decode or a checksum
  // fails. On error the backend may hold part of the snapshot.
  [[nodiscard]] Status RestoreState(BinaryReader* in);

  // Synchronous part of snapshot `checkpoint_id` (see state/state_snapshot.h); `name` names the
  // snapshot's own file. IoError when the rocksdb checkpoint cannot be made.
  Result<std::unique_ptr<PendingSnapshot>> SnapshotAsync(int64_t checkpoint_id, std::string name);
  // Adds the owned key groups of a snapshot written by SnapshotAsync of either kind (`file` is
  // the first file Write returned). Several snapshots may be restored one after another
  // (rescaling). Errors as RestoreState; a damaged file is Corruption naming it.
  [[nodiscard]] Status RestoreFrom(const StoredFile& file, SnapshotFileSource* source);

  // rocksdb, incremental snapshots: shared files this backend wrote, by local SST name.
  std::map<std::string, StoredFile> UploadedFiles() const;
  // Test hook: runs before each file the asynchronous part writes (e.g. to slow it down).
  void SetWriteHookForTest(std::function<void(const std::string& file)> hook) {
    write_hook_ = std::move(hook);
  }

 private:
  // Does not open the store (Make does, to return its error).
  struct NoStore {};
  KeyedStateBackend(NoStore, KeyGroupSpan range, uint32_t max_parallelism, ProcessingClock clock,
                    const StateBackendOptions& options);
  template <typename T>
  T* Add(std::unique_ptr<T> table) {
    assert(!HasTable(table->name()) && "state name registered twice");
    T* raw = table.get();
    if (store_ != nullptr) {
      Status s = AttachTable(raw);
      if (!s.ok()) StateStoreCorrupt(raw->name(), s);
    }
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
  [[nodiscard]] Status RestoreAsyncRef(BinaryReader* in);  // "FLKA", via SnapshotRestoreScope
  [[nodiscard]] Status OpenStore();
  [[nodiscard]] Status AttachTable(StateTable* table);
  [[nodiscard]] Status RestoreRocksDb(std::string_view bytes, const std::string& what,
                                      SnapshotFileSource* source);
  void SnapshotHeapTables(BinaryWriter* out) const;  // FLKS of the tables not in the store
  void SnapshotTables(BinaryWriter* out, bool heap_only) const;
  friend class RocksDbPendingSnapshot;

  StateContext ctx_;
  StateBackendOptions options_;
  std::unique_ptr<KvStore> store_;
  Status store_status_;      // why the store is missing (rocksdb)
  std::string instance_id_;  // unique per database: prefixes shared file names
  std::vector<std::unique_ptr<StateTable>> tables_;
  mutable std::mutex uploaded_mu_;
  std::map<std::string, StoredFile> uploaded_;
  std::function<void(const std::string&)> write_hook_;
  int restore_count_ = 0;
};

}  // namespace flow::rt
