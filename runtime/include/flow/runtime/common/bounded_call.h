#pragma once
// RunBounded: runs a call that should end soon but, through no fault of ours, might not (a
// library's teardown that waits for a thread it leaked), and stops waiting for it after a bound.
//
// Why: librdkafka since 2.0.0 can keep a partition reference after a broker outage, and
// rd_kafka_destroy of that consumer then waits for ever for a broker thread (its issues 4486 and
// 4674). The job's thread that closes a source between two runs was held by it: no restart, and
// no stop on SIGTERM. A call past its bound goes on, on its own detached thread, so what it uses
// must outlive it (a closed client: nothing calls back into the job any more).
// Threading: thread-safe; `call` runs on a new thread.

#include <cstdint>
#include <functional>

namespace flow::rt {

// Runs `call` on its own thread and waits up to `bound_ms` for it. True when it returned in
// time; false when it is left running.
[[nodiscard]] bool RunBounded(std::function<void()> call, int64_t bound_ms);

}  // namespace flow::rt
