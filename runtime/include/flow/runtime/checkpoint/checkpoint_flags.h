#pragma once
// Command-line flags of a job binary that configure checkpoints, recovery and restarts, so the
// engine's argument parser only forwards `--name value` pairs here:
//
//   --state-dir DIR                      where checkpoints live; default: none (checkpoints off)
//   --restore PATH|none                  default: the newest valid checkpoint in --state-dir
//   --checkpoint-interval D              default: 1s with an exactly-once sink, else off (0)
//   --checkpoint-timeout D               default: 10m
//   --checkpoint-min-pause D             default: 0
//   --max-concurrent-checkpoints N       default: 1
//   --tolerable-checkpoint-failures N    default: 0
//   --retained-checkpoints N             default: 3
//   --restart-attempts N                 default: 10 (0 = fail at the first error)
//   --restart-delay D                    default: 1s
//   --restart-max-delay D                default: 60s
//   --restart-backoff-multiplier X       default: 2
//
// Durations: "250ms", "10s", "5m", "2h" or plain milliseconds. Errors are InvalidArgument naming
// the flag (exit code 2).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/checkpoint/restart_policy.h"
#include "flow/runtime/common/status.h"

namespace flow::rt {

struct CheckpointFlags {
  std::string state_dir;
  std::string restore;                    // "" = automatic selection
  std::optional<DurationMs> interval_ms;  // unset = the job's default (ForJob)
  CheckpointOptions options;
  bool timeout_given = false;  // --checkpoint-timeout was on the command line
  uint32_t retained = 3;
  RestartPolicyOptions restart;
};

// If `name` (with the leading "--") is one of the flags above, parses `value` into *flags and
// returns true; returns false for other flags. InvalidArgument for a bad value.
Result<bool> ParseCheckpointFlag(std::string_view name, std::string_view value,
                                 CheckpointFlags* flags);

// Applies the job-dependent defaults (interval 1 s with an exactly-once sink unless given) and
// validates the combination: options and restart policy valid, a --state-dir when checkpoints
// are on. --restore PATH works without --state-dir (restore, then run without checkpoints).
[[nodiscard]] Status ResolveCheckpointFlags(CheckpointFlags* flags, bool has_exactly_once_sink);

// The flag list for --help.
std::string CheckpointFlagsUsage();

}  // namespace flow::rt
