#include "flow/runtime/checkpoint/checkpoint_flags.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "flow/runtime/checkpoint/checkpoint_store.h"
#include "flow/runtime/common/time.h"

namespace flow::rt {

namespace {

Status Bad(std::string_view name, std::string_view value, std::string_view expected) {
  std::string m(name);
  m.append(": invalid value '").append(value).append("', expected ").append(expected);
  return Status::InvalidArgument(std::move(m));
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

Result<DurationMs> Duration(std::string_view name, std::string_view value) {
  DurationMs d = 0;
  if (!ParseDurationOrMillis(value, &d))
    return Bad(name, value, "a duration such as 500ms, 10s, 5m, 1h");
  return d;
}

Result<uint32_t> Count(std::string_view name, std::string_view value) {
  uint64_t n = 0;
  if (!ParseU64(value, &n) || n > UINT32_MAX) return Bad(name, value, "a non-negative integer");
  return static_cast<uint32_t>(n);
}

}  // namespace

Result<bool> ParseCheckpointFlag(std::string_view name, std::string_view value,
                                 CheckpointFlags* f) {
  auto dur = [&](DurationMs* out) -> Result<bool> {
    auto d = Duration(name, value);
    if (!d.ok()) return d.status();
    *out = *d;
    return true;
  };
  auto count = [&](uint32_t* out) -> Result<bool> {
    auto n = Count(name, value);
    if (!n.ok()) return n.status();
    *out = *n;
    return true;
  };
  if (name == "--state-dir") {
    if (value.empty()) return Bad(name, value, "a directory");
    f->state_dir = std::string(value);
    return true;
  }
  if (name == "--restore") {
    if (value.empty()) return Bad(name, value, "a checkpoint directory or 'none'");
    f->restore = std::string(value);
    return true;
  }
  if (name == "--checkpoint-interval") {
    DurationMs d = 0;
    auto r = dur(&d);
    if (r.ok()) f->interval_ms = d;
    return r;
  }
  if (name == "--checkpoint-timeout") {
    f->timeout_given = true;
    return dur(&f->options.timeout_ms);
  }
  if (name == "--checkpoint-min-pause") return dur(&f->options.min_pause_ms);
  if (name == "--max-concurrent-checkpoints") return count(&f->options.max_concurrent);
  if (name == "--tolerable-checkpoint-failures") return count(&f->options.tolerable_failures);
  if (name == "--retained-checkpoints") return count(&f->retained);
  if (name == "--restart-attempts") return count(&f->restart.max_attempts);
  if (name == "--restart-delay") return dur(&f->restart.initial_delay_ms);
  if (name == "--restart-max-delay") return dur(&f->restart.max_delay_ms);
  if (name == "--restart-backoff-multiplier") {
    std::string text(value);
    char* end = nullptr;
    double x = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x)) {
      return Bad(name, value, "a number >= 1");
    }
    f->restart.multiplier = x;
    return true;
  }
  return false;
}

Status ResolveCheckpointFlags(CheckpointFlags* f, bool has_exactly_once_sink) {
  f->options.interval_ms = f->interval_ms
                               ? *f->interval_ms
                               : CheckpointOptions::ForJob(has_exactly_once_sink).interval_ms;
  Status s = f->options.Validate();
  if (!s.ok()) return Status::InvalidArgument("checkpoint flags: " + s.message());
  s = f->restart.Validate();
  if (!s.ok()) return Status::InvalidArgument("restart flags: " + s.message());
  if (f->retained == 0) return Status::InvalidArgument("--retained-checkpoints must be >= 1");
  if (Status where = CheckCheckpointLocation(f->state_dir); !where.ok())
    return Status::InvalidArgument("--state-dir: " + where.message());
  if (Status where = CheckCheckpointLocation(f->restore); !where.ok())
    return Status::InvalidArgument("--restore: " + where.message());
  if (f->options.interval_ms > 0 && f->state_dir.empty()) {
    return Status::InvalidArgument(
        has_exactly_once_sink && !f->interval_ms
            ? "--state-dir is required: the job has an exactly-once sink, which commits at "
              "checkpoints"
            : "--state-dir is required when --checkpoint-interval is set");
  }
  return Status::Ok();
}

std::string CheckpointFlagsUsage() {
  return "  --state-dir DIR                    checkpoint directory (default: none, checkpoints "
         "off)\n"
         "  --restore PATH|none                checkpoint/savepoint to restore (default: newest "
         "valid)\n"
         "  --checkpoint-interval D            default: 1s with an exactly-once sink, else off\n"
         "  --checkpoint-timeout D             default: 10m\n"
         "  --checkpoint-min-pause D           default: 0\n"
         "  --max-concurrent-checkpoints N     default: 1\n"
         "  --tolerable-checkpoint-failures N  default: 0\n"
         "  --retained-checkpoints N           default: 3\n"
         "  --restart-attempts N               default: 10 (0 = no restarts)\n"
         "  --restart-delay D                  default: 1s\n"
         "  --restart-max-delay D              default: 60s\n"
         "  --restart-backoff-multiplier X     default: 2\n";
}

}  // namespace flow::rt
