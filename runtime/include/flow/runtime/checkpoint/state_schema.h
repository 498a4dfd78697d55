#pragma once
// The state schema of a stateful operator: what its snapshot's bytes depend on, as "label: value"
// parts the compiler derives from the script (compiler/plan/state_schema.h), e.g.
//
//   state: window aggregate        key: string        window: tumbling 60000ms
//   aggregate clicks: count() -> int64                aggregate total: sum(int64) -> int64
//
// A checkpoint records each operator's schema; a restore into a changed script maps state by
// operator name and compares schemas (docs/operations.md, "Upgrading a job"). Header-only: the
// job binary checks at restore and `flowc compare-state` checks before deploying, with one rule.
//
// The rule: every part must be equal, except `aggregate NAME` parts, which may be added (the new
// aggregate starts empty: each accumulator's aggregates are stored by name, exec/tagged.h) or
// removed (its state is dropped with it).

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace flow::rt {

inline constexpr std::string_view kStateAggregatePart = "aggregate ";

struct StateSchemaDiff {
  std::vector<std::string> migrated;  // "aggregate `total` added: starts empty"
  std::vector<std::string> changed;   // "key changed from `string` to `int64`": not carried over
  bool compatible() const { return changed.empty(); }
};

namespace state_schema_detail {
inline std::string_view Label(std::string_view part) {
  const size_t colon = part.find(": ");
  return colon == std::string_view::npos ? part : part.substr(0, colon);
}
inline std::string_view Value(std::string_view part) {
  const size_t colon = part.find(": ");
  return colon == std::string_view::npos ? std::string_view() : part.substr(colon + 2);
}
inline const std::string* Find(const std::vector<std::string>& parts, std::string_view label) {
  for (const std::string& p : parts) {
    if (Label(p) == label) return &p;
  }
  return nullptr;
}
inline bool IsAggregate(std::string_view label) {
  return label.substr(0, kStateAggregatePart.size()) == kStateAggregatePart;
}
inline std::string AggregateName(std::string_view label) {
  return std::string(label.substr(kStateAggregatePart.size()));
}
}  // namespace state_schema_detail

inline StateSchemaDiff DiffStateSchema(const std::vector<std::string>& old_parts,
                                       const std::vector<std::string>& new_parts) {
  namespace d = state_schema_detail;
  StateSchemaDiff diff;
  for (const std::string& was : old_parts) {
    const std::string_view label = d::Label(was);
    const std::string* now = d::Find(new_parts, label);
    if (now == nullptr) {
      if (d::IsAggregate(label)) {
        diff.migrated.push_back("aggregate `" + d::AggregateName(label) +
                                "` removed: its state is dropped");
      } else {
        diff.changed.push_back(std::string(label) + " `" + std::string(d::Value(was)) +
                               "` removed");
      }
    } else if (*now != was) {
      diff.changed.push_back(std::string(label) + " changed from `" + std::string(d::Value(was)) +
                             "` to `" + std::string(d::Value(*now)) + "`");
    }
  }
  for (const std::string& now : new_parts) {
    const std::string_view label = d::Label(now);
    if (d::Find(old_parts, label) != nullptr) continue;
    if (d::IsAggregate(label)) {
      diff.migrated.push_back("aggregate `" + d::AggregateName(label) + "` added: starts empty");
    } else {
      diff.changed.push_back(std::string(label) + " `" + std::string(d::Value(now)) + "` added");
    }
  }
  return diff;
}

}  // namespace flow::rt
