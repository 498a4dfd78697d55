#include "flow/runtime/engine/task.h"

#include <exception>

namespace flow::rt {

Status Task::Run() {
  Status status;
  try {
    // members_ lists downstream consumers first: a chain is ready before anything flows into it.
    for (size_t i = 0; i < members_.size() && status.ok(); ++i) status = members_[i]->Open();
    if (status.ok()) status = Loop();
  } catch (const std::exception& e) {
    status = Status::Internal(std::string("exception: ") + e.what());
  } catch (...) {
    status = Status::Internal("unknown exception");
  }
  CloseSource();
  for (auto it = members_.rbegin(); it != members_.rend(); ++it) (*it)->Close();
  return status;
}

Status InputTask::Loop() {
  const size_t n = gate_->size();
  WatermarkCombiner combiner(n);
  barrier_seen_.assign(n, false);
  ended_.assign(n, false);
  size_t ended = 0;
  bool stopped = false;  // some channel ended because the job was stopped, not drained
  bool all_idle = false;
  if (n == 0) return Status::Internal("input task without input channels");
  while (true) {
    auto ready = gate_->WaitReady();
    if (!ready.ok()) return ready.status();
    size_t ch = *ready;
    ElementKind kind;
    int64_t value;
    FLOW_RETURN_IF_ERROR(bindings_[ch]->ReadOne(&kind, &value));
    bool advanced = false;
    switch (kind) {
      case ElementKind::kBatch:
        continue;
      case ElementKind::kWatermark:
        advanced = combiner.OnWatermark(ch, value);
        break;
      case ElementKind::kIdle:
      case ElementKind::kActive:
        advanced = combiner.OnIdle(ch, kind == ElementKind::kIdle);
        break;
      case ElementKind::kBarrier:
        if (pending_barrier_ >= 0 && value != pending_barrier_) {
          // A newer barrier overtook an unfinished alignment: the older checkpoint is abandoned.
          barrier_seen_.assign(n, false);
          for (size_t i = 0; i < n; ++i) gate_->Unblock(i);
        }
        pending_barrier_ = value;
        barrier_seen_[ch] = true;
        gate_->Block(ch);
        FLOW_RETURN_IF_ERROR(TryCompleteAlignment());
        continue;
      case ElementKind::kCancelCheckpoint:
        if (value == pending_barrier_) {
          pending_barrier_ = -1;
          barrier_seen_.assign(n, false);
          for (size_t i = 0; i < n; ++i) gate_->Unblock(i);
        }
        continue;
      case ElementKind::kEnd:
        if (!ended_[ch]) {
          ended_[ch] = true;
          ++ended;
          stopped = stopped || value == 0;
          if (ended == n) {
            if (!stopped && combiner.current() != kMaxWatermark) {
              combiner.OnEnd(ch);
              watermark_->Set(kMaxWatermark);
              FLOW_RETURN_IF_ERROR(head_->OnWatermark(kMaxWatermark));
            }
            return head_->OnEnd(!stopped);
          }
          advanced = combiner.OnEnd(ch);
          if (pending_barrier_ >= 0) FLOW_RETURN_IF_ERROR(TryCompleteAlignment());
        }
        break;
    }
    if (advanced) {
      watermark_->Set(combiner.current());
      FLOW_RETURN_IF_ERROR(head_->OnWatermark(combiner.current()));
    }
    bool now_idle = combiner.AllIdle();
    if (now_idle != all_idle) {
      all_idle = now_idle;
      FLOW_RETURN_IF_ERROR(head_->OnIdle(now_idle));
    }
  }
}

Status InputTask::TryCompleteAlignment() {
  for (size_t i = 0; i < barrier_seen_.size(); ++i) {
    if (!barrier_seen_[i] && !ended_[i]) return Status::Ok();
  }
  int64_t id = pending_barrier_;
  pending_barrier_ = -1;
  barrier_seen_.assign(barrier_seen_.size(), false);
  Status s = head_->OnBarrier(id);
  for (size_t i = 0; i < barrier_seen_.size(); ++i) gate_->Unblock(i);
  return s;
}

}  // namespace flow::rt
