#pragma once
// MapState<K, UK, V>: a map from user key UK to V per key K. Created by
// KeyedStateBackend::CreateMapState, which owns it. TTL applies per (K, UK) entry. A key whose map
// becomes empty is removed, so an empty MapState holds no memory per key.
// Contract and threading as ValueState. With the rocksdb backend a key's whole map is one cached
// entry (and one RocksDB value), so all user keys of a key load together.

#include <absl/container/flat_hash_map.h>

#include "flow/runtime/state/state_table.h"

namespace flow::rt {

// Stored like std::unordered_map (count, then key and value pairs), so snapshots and RocksDB
// values written before the inner maps were flat still restore.
template <Serializable K, Serializable V, typename H, typename E, typename A>
struct Serializer<absl::flat_hash_map<K, V, H, E, A>>
    : MapSerializer<absl::flat_hash_map<K, V, H, E, A>> {};

// The user keys of one key: a flat map, one allocation for all of them (windows keep a few panes
// per key, a join a few timestamps). Pointers into it follow the state contract (valid until the
// next insertion or removal).
template <StateKey UK, Serializable V>
using MapStateInner = absl::flat_hash_map<UK, TtlEntry<V>, KeyHasher<UK>>;

template <StateKey K, StateKey UK, Serializable V>
class MapState : public HeapTable<K, MapStateInner<UK, V>> {
 public:
  using Inner = MapStateInner<UK, V>;
  using Base = HeapTable<K, Inner>;

  MapState(std::string name, const StateContext* ctx, StateTtl ttl)
      : Base(std::move(name), ctx), ttl_(ctx, ttl) {}

  V* Get(const K& key, const UK& user_key) { return Get(key, this->KeyGroup(key), user_key); }
  V* Get(const K& key, uint32_t key_group, const UK& user_key) {
    auto& m = this->Group(key_group);
    auto it = this->Find(m, key, key_group);
    if (it == m.end()) return nullptr;
    auto uit = it->second.find(user_key);
    if (uit == it->second.end()) return nullptr;
    if (ttl_.Expired(uit->second.expires_at)) {
      it->second.erase(uit);
      if (it->second.empty()) this->Erase(m, it, key_group);
      return nullptr;
    }
    if (ttl_.enabled() && ttl_.RefreshOnRead()) uit->second.expires_at = ttl_.ExpiryFromNow();
    return &uit->second.value;
  }

  void Put(const K& key, const UK& user_key, V value) {
    Put(key, this->KeyGroup(key), user_key, std::move(value));
  }
  void Put(const K& key, uint32_t key_group, const UK& user_key, V value) {
    this->FindOrCreate(this->Group(key_group), key, key_group)
        .first->second.insert_or_assign(user_key,
                                        TtlEntry<V>{std::move(value), ttl_.ExpiryFromNow()});
  }

  // The entry, default-constructed first when absent or expired (then *created is set, when
  // given). Counts as a write. One lookup where Get, then GetOrInsert on a miss, take two.
  V& GetOrInsert(const K& key, uint32_t key_group, const UK& user_key, bool* created = nullptr) {
    auto& inner = this->FindOrCreate(this->Group(key_group), key, key_group).first->second;
    auto [it, inserted] = inner.try_emplace(user_key);
    if (!inserted && ttl_.Expired(it->second.expires_at)) {
      it->second.value = V{};
      inserted = true;
    }
    it->second.expires_at = ttl_.ExpiryFromNow();
    if (created != nullptr) *created = inserted;
    return it->second.value;
  }
  V& GetOrInsert(const K& key, const UK& user_key) {
    return GetOrInsert(key, this->KeyGroup(key), user_key);
  }

  bool Remove(const K& key, const UK& user_key) {
    return Remove(key, this->KeyGroup(key), user_key);
  }
  bool Remove(const K& key, uint32_t key_group, const UK& user_key) {
    auto& m = this->Group(key_group);
    auto it = this->Find(m, key, key_group);
    if (it == m.end() || it->second.erase(user_key) == 0) return false;
    if (it->second.empty()) this->Erase(m, it, key_group);
    return true;
  }

  // Removes every entry of `key`.
  bool RemoveKey(const K& key) {
    uint32_t kg = this->KeyGroup(key);
    return this->EraseKey(this->Group(kg), key, kg);
  }

  // Calls fn(const UK&, V&) for every live entry of `key`; fn must not insert or remove.
  template <typename Fn>
  void ForEach(const K& key, Fn&& fn) {
    uint32_t kg = this->KeyGroup(key);
    auto& m = this->Group(kg);
    auto it = this->Find(m, key, kg);
    if (it == m.end()) return;
    for (auto& [uk, e] : it->second) {
      if (!ttl_.Expired(e.expires_at)) fn(uk, e.value);
    }
  }

  size_t KeyGroupSize(uint32_t key_group) const override {
    size_t n = 0;
    if (this->spilled()) {
      this->ScanGroup(key_group, [&n](const K&, Inner& inner) { n += inner.size(); });
      return n;
    }
    for (const auto& [k, inner] : this->Group(key_group)) n += inner.size();
    return n;
  }

  void CleanupExpired() override {
    if (!ttl_.enabled()) return;
    if (this->spilled()) {
      using R = typename Base::Rewrite;
      this->RewriteStored([&](const K&, Inner& inner) {
        size_t before = inner.size();
        absl::erase_if(inner, [&](const auto& kv) { return ttl_.Expired(kv.second.expires_at); });
        if (inner.empty()) return R::kErase;
        return inner.size() == before ? R::kKeep : R::kWrite;
      });
      return;
    }
    for (auto& m : this->groups()) {
      for (auto it = m.begin(); it != m.end();) {
        absl::erase_if(it->second,
                       [&](const auto& kv) { return ttl_.Expired(kv.second.expires_at); });
        if (it->second.empty()) {
          m.erase(it++);
        } else {
          ++it;
        }
      }
    }
  }

 private:
  TtlPolicy ttl_;
};

}  // namespace flow::rt
