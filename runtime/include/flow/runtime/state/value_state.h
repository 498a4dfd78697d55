#pragma once
// ValueState<K, V>: one value per key. Created by KeyedStateBackend::CreateValueState, which owns
// it.
//
// Contract: keys must belong to the backend's key-group range (the engine routes them so; a foreign
// key is a bug and asserts). Pointers/references returned stay valid until the next insertion or
// removal in the same state (with the rocksdb backend: Get may load an entry into the cache but
// never evicts, so the same holds). Expired entries (TTL) read as absent and are removed when seen.
// Threading: one subtask thread.

#include "flow/runtime/state/state_table.h"

namespace flow::rt {

template <StateKey K, Serializable V>
class ValueState : public HeapTable<K, TtlEntry<V>> {
 public:
  using Base = HeapTable<K, TtlEntry<V>>;

  ValueState(std::string name, const StateContext* ctx, StateTtl ttl)
      : Base(std::move(name), ctx), ttl_(ctx, ttl) {}

  // The value for `key`, or nullptr when absent or expired.
  V* Get(const K& key) { return Get(key, this->KeyGroup(key)); }
  V* Get(const K& key, uint32_t key_group) {
    auto& m = this->Group(key_group);
    auto it = this->Find(m, key, key_group);
    if (it == m.end()) return nullptr;
    if (ttl_.Expired(it->second.expires_at)) {
      this->Erase(m, it, key_group);
      return nullptr;
    }
    if (ttl_.enabled() && ttl_.RefreshOnRead()) it->second.expires_at = ttl_.ExpiryFromNow();
    return &it->second.value;
  }

  void Put(const K& key, V value) { Put(key, this->KeyGroup(key), std::move(value)); }
  void Put(const K& key, uint32_t key_group, V value) {
    this->Assign(this->Group(key_group), key, key_group,
                 TtlEntry<V>{std::move(value), ttl_.ExpiryFromNow()});
  }

  // The value for `key`, default-constructed first when absent or expired. Counts as a write.
  V& GetOrInsert(const K& key) { return GetOrInsert(key, this->KeyGroup(key)); }
  V& GetOrInsert(const K& key, uint32_t key_group) {
    auto [it, inserted] = this->FindOrCreate(this->Group(key_group), key, key_group);
    if (!inserted && ttl_.Expired(it->second.expires_at)) it->second.value = V{};
    it->second.expires_at = ttl_.ExpiryFromNow();
    return it->second.value;
  }

  // True when a (live or expired) entry was removed.
  bool Remove(const K& key) { return Remove(key, this->KeyGroup(key)); }
  bool Remove(const K& key, uint32_t key_group) {
    return this->EraseKey(this->Group(key_group), key, key_group);
  }

  // Calls fn(const K&, V&) for every live entry. fn must not insert or remove entries.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    if (this->spilled()) {
      using R = typename Base::Rewrite;
      this->RewriteStored([&](const K& k, TtlEntry<V>& e) {
        if (ttl_.Expired(e.expires_at)) return R::kKeep;
        fn(k, e.value);
        return R::kWrite;
      });
      return;
    }
    for (auto& m : this->groups()) {
      for (auto& [k, e] : m) {
        if (!ttl_.Expired(e.expires_at)) fn(k, e.value);
      }
    }
  }

  void CleanupExpired() override {
    if (!ttl_.enabled()) return;
    if (this->spilled()) {
      using R = typename Base::Rewrite;
      this->RewriteStored([&](const K&, TtlEntry<V>& e) {
        return ttl_.Expired(e.expires_at) ? R::kErase : R::kKeep;
      });
      return;
    }
    for (auto& m : this->groups())
      absl::erase_if(m, [&](const auto& kv) { return ttl_.Expired(kv.second.expires_at); });
  }

 private:
  TtlPolicy ttl_;
};

}  // namespace flow::rt
