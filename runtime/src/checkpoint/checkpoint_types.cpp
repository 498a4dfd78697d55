#include "flow/runtime/checkpoint/checkpoint_types.h"

namespace flow::rt {

const char* CheckpointFailureReasonName(CheckpointFailureReason reason) {
  switch (reason) {
    case CheckpointFailureReason::kTimeout:
      return "timeout";
    case CheckpointFailureReason::kTaskDeclined:
      return "task_declined";
    case CheckpointFailureReason::kTaskFailed:
      return "task_failed";
    case CheckpointFailureReason::kStorageIoError:
      return "storage_io_error";
    case CheckpointFailureReason::kTooManyConcurrent:
      return "too_many_concurrent";
    case CheckpointFailureReason::kMinPause:
      return "min_pause";
    case CheckpointFailureReason::kJobFinishing:
      return "job_finishing";
    case CheckpointFailureReason::kSubsumed:
      return "subsumed";
    case CheckpointFailureReason::kNotRunning:
      return "not_running";
  }
  return "unknown";
}

bool CountsAsFailure(CheckpointFailureReason reason) {
  switch (reason) {
    case CheckpointFailureReason::kTimeout:
    case CheckpointFailureReason::kTaskDeclined:
    case CheckpointFailureReason::kTaskFailed:
    case CheckpointFailureReason::kStorageIoError:
      return true;
    default:
      return false;
  }
}

namespace {
// Quotes a value that contains spaces, quotes or '=' so the line stays key=value parsable.
std::string Quote(const std::string& v) {
  if (v.find_first_of(" \"=") == std::string::npos && !v.empty()) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}
}  // namespace

std::string FormatCheckpointReport(const CheckpointReport& r) {
  std::string s = "checkpoint id=" + std::to_string(r.checkpoint_id);
  s.append(" result=").append(r.completed ? "completed" : "aborted");
  s.append(" duration_ms=").append(std::to_string(r.duration_ms));
  s.append(" bytes=").append(std::to_string(r.bytes));
  s.append(" max_alignment_ms=").append(std::to_string(r.max_alignment_ms));
  s.append(" acked=")
      .append(std::to_string(r.acked_tasks))
      .append("/")
      .append(std::to_string(r.total_tasks));
  if (!r.completed) {
    s.append(" reason=").append(CheckpointFailureReasonName(r.reason));
    if (!r.message.empty()) s.append(" message=").append(Quote(r.message));
  }
  return s;
}

}  // namespace flow::rt
