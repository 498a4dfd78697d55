#pragma once
// ListState<K, V>: an append-mostly list of values per key. Created by
// KeyedStateBackend::CreateListState, which owns it. TTL applies to a key's list as a whole:
// every Add restarts its lifetime. Contract and threading as ValueState.

#include <vector>

#include "flow/runtime/state/value_state.h"

namespace flow::rt {

template <StateKey K, Serializable V>
class ListState : public ValueState<K, std::vector<V>> {
 public:
  using ValueState<K, std::vector<V>>::ValueState;

  void Add(const K& key, V value) { this->GetOrInsert(key).push_back(std::move(value)); }
  void Add(const K& key, uint32_t key_group, V value) {
    this->GetOrInsert(key, key_group).push_back(std::move(value));
  }
  // Get(key) returns the list or nullptr; Put replaces it; Remove drops it (inherited).
};

}  // namespace flow::rt
