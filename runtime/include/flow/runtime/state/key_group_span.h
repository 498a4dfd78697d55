#pragma once
// KeyGroupSpan: the contiguous key groups [first, end) a subtask owns. Consistent with
// SubtaskForKeyGroup in common/key_group.h: ForSubtask(s) holds exactly the groups g for which
// SubtaskForKeyGroup(g) == s. Same members as the engine's KeyGroupRange (engine/operator.h),
// convert with {r.first, r.end}; a distinct name so both headers can meet in one generated file.

#include <cstdint>
#include <string>

#include "flow/runtime/common/key_group.h"

namespace flow::rt {

struct KeyGroupSpan {
  uint32_t first = 0;
  uint32_t end = 0;  // exclusive

  bool Contains(uint32_t key_group) const { return key_group >= first && key_group < end; }
  uint32_t size() const { return end - first; }
  bool empty() const { return end <= first; }
  std::string ToString() const {
    std::string s = "[";  // appended, not `"[" + ...`: GCC 12 warns falsely (-Wrestrict) on that
    s.append(std::to_string(first)).append(", ").append(std::to_string(end)).append(")");
    return s;
  }

  static KeyGroupSpan All(uint32_t max_parallelism = kDefaultMaxParallelism) {
    return {0, max_parallelism};
  }
  // Requires 0 < parallelism <= max_parallelism and subtask < parallelism.
  static KeyGroupSpan ForSubtask(uint32_t subtask, uint32_t parallelism,
                                 uint32_t max_parallelism = kDefaultMaxParallelism) {
    auto ceil_div = [](uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); };
    return {ceil_div(uint64_t{subtask} * max_parallelism, parallelism),
            ceil_div(uint64_t{subtask + 1} * max_parallelism, parallelism)};
  }
};

}  // namespace flow::rt
