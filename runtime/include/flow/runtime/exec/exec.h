#pragma once
// Everything a generated job includes: the engine, the operator adapters, sources/sinks, the
// expression helpers and the stdlib. One header so the build cache can precompile it.

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/main.h"
#include "flow/runtime/engine/shuffle_join.h"
#include "flow/runtime/engine/shuffle_key_by.h"
#include "flow/runtime/engine/txn_sink.h"
#include "flow/runtime/exec/cast.h"
#include "flow/runtime/exec/chain.h"
#include "flow/runtime/exec/datagen_fill.h"
#include "flow/runtime/exec/decoding_source.h"
#include "flow/runtime/exec/encoding_sink.h"
#include "flow/runtime/exec/io.h"
#include "flow/runtime/exec/join_adapter.h"
#include "flow/runtime/exec/ops.h"
#include "flow/runtime/exec/record_decoders.h"
#include "flow/runtime/exec/running_aggregate_adapter.h"
#include "flow/runtime/exec/serde_bridge.h"
#include "flow/runtime/exec/session_window_adapter.h"
#include "flow/runtime/exec/tagged.h"
#include "flow/runtime/exec/window_aggregate_adapter.h"
#include "flow/runtime/generators/generator_args.h"
#include "flow/runtime/generators/generator_sources.h"
#include "flow/runtime/operators/running_extreme_filter.h"
#include "flow/stdlib/aggregates.h"
#include "flow/stdlib/scalar.h"
