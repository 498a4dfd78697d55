#pragma once
// Wraps SessionWindowOperator (operators/session_window_operator.h) into the engine's
// OneInputOperator: `key by k | window session G [lateness L] [processing time] | aggregate ...`.
// config.size is the gap. Like WindowAggregateAdapter (window_aggregate_adapter.h): the upstream
// edge must be KeyBy with KeyHashOf<Key>(key_of), the accumulator sees Stamped<In>, and
// processing time fires due sessions after every batch and watermark, and all at end of input.
//
// Errors: Open fails with kInvalidArgument for an invalid gap or lateness (naming the operator).
// Threading: one subtask thread.

#include "flow/runtime/exec/window_aggregate_adapter.h"
#include "flow/runtime/operators/session_window_operator.h"

namespace flow::exec {

inline rt::Result<rt::SessionWindows> SessionWindowsOf(const WindowConfig& config) {
  return rt::SessionWindows::WithGap(config.size);
}

template <typename Key, typename In, typename Acc, typename Out, typename Emitted = Out>
using SessionWindowAdapter =
    KeyedWindowAdapter<rt::SessionWindowOperator<Key, Stamped<In>, Acc, Out>, Key, In, Out,
                       &SessionWindowsOf, Emitted>;

}  // namespace flow::exec
