#pragma once
// Building blocks shared by the keyed state kinds: the StateTable interface the backend uses to
// snapshot, restore and measure state without knowing its types; the StateContext (owned key
// groups, clocks) every table reads; TTL configuration; and HeapTable, the heap backend's typed
// per-key-group hash maps.
//
// Threading: a backend and all its tables belong to one subtask thread; nothing here locks.

#include <cassert>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_set.h>
#include <absl/container/node_hash_map.h>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/state/key_group_span.h"
#include "flow/runtime/state/key_hash.h"
#include "flow/runtime/state/kv_store.h"
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

  // rocksdb backend: keep at most `cache_entries` entries in memory and the rest in column
  // family `table` of `store`. Tables that stay on the heap (timers) keep the default.
  virtual bool AttachStore(KvStore* /*store*/, uint32_t /*table*/, size_t /*cache_entries*/) {
    return false;
  }
  // Writes every cached entry back to the store (they stay cached). No-op on the heap.
  virtual void FlushCache() {}
  // Writes every cached entry back and empties the cache, so that the next flush writes only
  // the entries touched since (the cache cannot tell reads from writes). Only where no pointer
  // into the state is held (asynchronous snapshots, at a barrier). No-op on the heap.
  virtual void FlushAndDropCache() {}
  // True when the entries live in the store (rocksdb) rather than only on the heap.
  virtual bool InStore() const { return false; }
  // rocksdb: evicts down to the cache capacity (Get loads without evicting). Only where no
  // pointer into the state is held: the backend calls it when the watermark advances.
  virtual void TrimCache() {}
};

// The backend's own RocksDB failed (a value does not decode, a column family cannot be made).
// Ends the process with a message naming the state (no error channel on the access path).
[[noreturn]] void StateStoreCorrupt(const std::string& table, const Status& status);

// Typed storage of the heap backend: one hash map K -> S per owned key group. Callers hash the
// key once (KeyGroupOf) and may pass the group to avoid hashing again.
//
// rocksdb backend (AttachStore): the same maps are a bounded cache in front of a KvStore. Misses
// load from the store (Find, FindOrCreate); evictions and FlushCache write entries back; removals
// delete from the store at once, except for entries the store never had (created in the cache and
// not written back yet: most window and join state lives and dies between two checkpoints, and a
// tombstone for each made every later lookup of a new key search the memtable). Every cached entry
// counts as dirty (the pointer API cannot tell reads from writes). Only insertions (FindOrCreate,
// Put) and TrimCache (the backend, when the watermark advances) evict, so pointers returned by Get
// stay valid as the state contract promises. On the heap the store pointer is null: one predictable
// branch, no virtual call, per access. The keys of one key group share their hash modulo the
// key-group count, so its low bits; absl's tables take a 7-bit tag from the low bits, so the key
// hash is mixed once more for them.
template <typename K>
struct GroupKeyHasher {
  size_t operator()(const K& k) const { return static_cast<size_t>(MixHash(KeyHash<K>{}(k))); }
};

template <StateKey K, Serializable S>
class HeapTable : public StateTable {
 public:
  // Node-based: pointers into the state stay valid across insertions of other keys (a rocksdb
  // load inserts; see Load).
  using Map = absl::node_hash_map<K, S, GroupKeyHasher<K>>;
  using Iterator = typename Map::iterator;

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
  bool spilled() const { return store_ != nullptr; }
  // Entries held in memory (all of them on the heap; the cache with rocksdb).
  size_t cached() const {
    size_t n = 0;
    for (const Map& m : groups_) n += m.size();
    return n;
  }

  bool AttachStore(KvStore* store, uint32_t table, size_t cache_entries) override {
    store_ = store;
    table_ = table;
    capacity_ = cache_entries < 1 ? 1 : cache_entries;
    return true;
  }

  bool InStore() const override { return store_ != nullptr; }
  void TrimCache() override {
    if (store_ == nullptr) return;
    size_t size = cached();
    if (size > capacity_) EvictDown(size, capacity_, groups_.size(), Iterator{});
  }
  void FlushCache() override {
    if (store_ == nullptr) return;
    for (uint32_t g = ctx_->range.first; g < ctx_->range.end; ++g) {
      for (const auto& [k, s] : Group(g)) WriteBack(g, k, s);
    }
    store_->Commit();
  }
  void FlushAndDropCache() override {
    if (store_ == nullptr) return;
    FlushCache();
    for (Map& m : groups_) m.clear();
  }

  // rocksdb: KeyGroupSize and SnapshotKeyGroup read the store; the backend calls FlushCache first.
  size_t KeyGroupSize(uint32_t key_group) const override {
    if (store_ == nullptr) return Group(key_group).size();
    std::string b = Prefix(key_group), e = Prefix(key_group + 1);
    return store_->Count(table_, b, e);
  }
  void SnapshotKeyGroup(uint32_t key_group, BinaryWriter* out) const override {
    if (store_ == nullptr) {
      const Map& m = Group(key_group);
      out->PutU64(m.size());
      for (const auto& [k, s] : m) {
        WriteValue(*out, k);
        WriteValue(*out, s);
      }
      return;
    }
    BinaryWriter entries;
    uint64_t n = 0;
    ScanGroup(key_group, [&](K& k, S& s) {
      WriteValue(entries, k);
      WriteValue(entries, s);
      ++n;
    });
    out->PutU64(n);
    // Entries are re-encoded (BinaryWriter has no raw append); the FLKS path is the portable
    // one, the incremental snapshot copies SST files instead.
    BinaryReader r(entries.data());
    for (uint64_t i = 0; i < n; ++i) {
      K k{};
      S s{};
      if (!ReadValue(r, &k).ok() || !ReadValue(r, &s).ok())
        StateStoreCorrupt(name_, Status::Internal("re-encode"));
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
      if (store_ != nullptr) {
        m.erase(k);
        WriteBack(key_group, k, s);
      } else {
        m.insert_or_assign(std::move(k), std::move(s));
      }
    }
    if (store_ != nullptr) store_->Commit();
    return Status::Ok();
  }
  void Clear() override {
    for (Map& m : groups_) m.clear();
    fresh_.clear();
    if (store_ != nullptr) {
      store_->DeleteRange(table_, Prefix(ctx_->range.first), Prefix(ctx_->range.end));
      store_->Commit();
    }
  }

 protected:
  // The cached entry of `key`, loaded from the store on a miss; end() when absent.
  Iterator Find(Map& m, const K& key, uint32_t key_group) {
    auto it = m.find(key);
    if (it != m.end() || store_ == nullptr) return it;
    return Load(m, key, key_group);
  }
  // The entry of `key`, default-constructed when absent (inserted = true). May evict others.
  std::pair<Iterator, bool> FindOrCreate(Map& m, const K& key, uint32_t key_group) {
    auto [it, inserted] = m.try_emplace(key);
    if (inserted && store_ != nullptr) {
      std::string bytes;
      if (store_->Get(table_, EncodeKey(key_group, key), &bytes)) {
        Decode(bytes, &it->second);
        inserted = false;
      } else {
        fresh_.insert(key);
      }
      MaybeEvict(key_group, it);
    }
    return {it, inserted};
  }
  // Replaces the entry of `key`. May evict others.
  Iterator Assign(Map& m, const K& key, uint32_t key_group, S value) {
    auto [it, inserted] = m.insert_or_assign(key, std::move(value));
    if (inserted && store_ != nullptr) MaybeEvict(key_group, it);
    return it;
  }
  void Erase(Map& m, Iterator it, uint32_t key_group) {
    if (store_ != nullptr && fresh_.erase(it->first) == 0)
      store_->Delete(table_, EncodeKey(key_group, it->first));
    m.erase(it);
  }
  // True when the key had an entry (cached or stored).
  bool EraseKey(Map& m, const K& key, uint32_t key_group) {
    if (store_ == nullptr) return m.erase(key) > 0;
    auto it = Find(m, key, key_group);
    if (it == m.end()) return false;
    Erase(m, it, key_group);
    return true;
  }

  enum class Rewrite { kKeep, kWrite, kErase };
  // rocksdb: fn(const K&, S&) -> Rewrite over every stored entry of the owned groups, after
  // writing the cache back and dropping it (the store is then the only copy).
  template <typename Fn>
  void RewriteStored(Fn&& fn) {
    FlushCache();
    for (Map& m : groups_) m.clear();
    for (uint32_t g = ctx_->range.first; g < ctx_->range.end; ++g) {
      std::vector<std::pair<K, Rewrite>> changes;
      std::vector<S> values;
      ScanGroup(g, [&](K& k, S& s) {
        Rewrite r = fn(static_cast<const K&>(k), s);
        if (r == Rewrite::kKeep) return;
        changes.emplace_back(std::move(k), r);
        values.push_back(std::move(s));
      });
      for (size_t i = 0; i < changes.size(); ++i) {
        if (changes[i].second == Rewrite::kErase) {
          store_->Delete(table_, EncodeKey(g, changes[i].first));
        } else {
          WriteBack(g, changes[i].first, values[i]);
        }
      }
      store_->Commit();
    }
  }

  // fn(K&, S&) for every stored entry of `key_group` (decoded copies).
  template <typename Fn>
  void ScanGroup(uint32_t key_group, Fn&& fn) const {
    std::string b = Prefix(key_group), e = Prefix(key_group + 1);
    store_->Scan(table_, b, e, [&](std::string_view key, std::string_view value) {
      K k{};
      S s{};
      BinaryReader kr(key.substr(2));
      Status st = ReadValue(kr, &k);
      if (st.ok() && !kr.AtEnd()) st = Status::Corruption("trailing key bytes");
      if (!st.ok()) StateStoreCorrupt(name_, st);
      Decode(value, &s);
      fn(k, s);
    });
  }

 private:
  static std::string Prefix(uint32_t key_group) {
    std::string p;
    AppendKeyGroupPrefix(&p, key_group);
    return p;
  }
  static std::string EncodeKey(uint32_t key_group, const K& key) {
    BinaryWriter w;
    WriteValue(w, key);
    std::string k = Prefix(key_group);
    k += w.data();
    return k;
  }
  void Decode(std::string_view bytes, S* out) const {
    BinaryReader r(bytes);
    Status st = ReadValue(r, out);
    if (st.ok() && !r.AtEnd()) st = Status::Corruption("trailing value bytes");
    if (!st.ok()) StateStoreCorrupt(name_, st);
  }
  void WriteBack(uint32_t key_group, const K& key, const S& value) {
    BinaryWriter w;
    WriteValue(w, value);
    store_->Put(table_, EncodeKey(key_group, key), w.data());
    if (!fresh_.empty()) fresh_.erase(key);
  }
  Iterator Load(Map& m, const K& key, uint32_t key_group) {
    std::string bytes;
    if (!store_->Get(table_, EncodeKey(key_group, key), &bytes)) return m.end();
    auto it = m.try_emplace(key).first;
    Decode(bytes, &it->second);
    ++loaded_since_evict_;
    return it;  // never evicts: earlier pointers from Get stay valid
  }
  // Writes back and drops about a quarter of the cache (never `keep`, an entry of group
  // `keep_group`) once it is over capacity.
  void MaybeEvict(uint32_t keep_group, Iterator keep) {
    // Counting the cache costs a pass over the groups, so it is checked every capacity/8 changes.
    if (++inserts_since_check_ + loaded_since_evict_ < capacity_ / 8 + 1) return;
    inserts_since_check_ = 0;
    loaded_since_evict_ = 0;
    size_t size = cached();
    if (size > capacity_)
      EvictDown(size, capacity_ - capacity_ / 4, keep_group - ctx_->range.first, keep);
  }
  // keep_index: index into groups_ of `keep`'s map, or groups_.size() for none.
  void EvictDown(size_t size, size_t target, size_t keep_index, Iterator keep) {
    const uint32_t n = static_cast<uint32_t>(groups_.size());
    for (uint32_t step = 0; step < n && size > target; ++step) {
      uint32_t gi = (evict_cursor_ + step) % n;
      Map& m = groups_[gi];
      for (auto it = m.begin(); it != m.end() && size > target;) {
        if (gi == keep_index && it == keep) {
          ++it;
          continue;
        }
        WriteBack(ctx_->range.first + gi, it->first, it->second);
        m.erase(it++);
        --size;
      }
      if (size > target) evict_cursor_ = (gi + 1) % n;
    }
    store_->Commit();
  }

  std::string name_;
  const StateContext* ctx_;
  std::vector<Map> groups_;
  KvStore* store_ = nullptr;
  uint32_t table_ = 0;
  size_t capacity_ = 0;
  // rocksdb: keys cached but never written to the store, so removing one needs no tombstone.
  // Every write to the store (WriteBack) takes its key out; Clear empties it.
  absl::flat_hash_set<K, KeyHasher<K>> fresh_;
  size_t inserts_since_check_ = 0;
  size_t loaded_since_evict_ = 0;
  uint32_t evict_cursor_ = 0;
};

}  // namespace flow::rt
