#pragma once
// What the aggregating operators need of an accumulator. The stdlib aggregates (count, sum, ...)
// and the composite accumulators that code generation builds for `aggregate count() as c, ...`
// all have this shape:
//   Add(const In&)                   fold one input record in
//   Merge(const Acc&)                fold another partial accumulator in (panes, sessions)
//   Result() const                   the current result (any copyable type)
//   Serialize(BinaryWriter&) const / Status Deserialize(BinaryReader&)   for snapshots
// A default-constructed accumulator is the empty aggregate. Retract(const In&) is optional.

#include <concepts>
#include <type_traits>
#include <utility>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"

namespace flow::rt {

template <typename A, typename In>
concept Accumulator = std::default_initializable<A> && std::copyable<A> &&
    requires(A a, const A& ca, const In& in, BinaryWriter& w, BinaryReader& r) {
  a.Add(in);
  a.Merge(ca);
  ca.Result();
  ca.Serialize(w);
  { a.Deserialize(r) } -> std::same_as<Status>;
};

template <typename A, typename In>
concept RetractableAccumulator = Accumulator<A, In> && requires(A a, const In& in) {
  a.Retract(in);
};

template <typename A>
using AccumulatorResult = std::decay_t<decltype(std::declval<const A&>().Result())>;

}  // namespace flow::rt
