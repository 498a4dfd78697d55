#include "flow/runtime/engine/task.h"

#include <algorithm>
#include <exception>

#include "flow/runtime/checkpoint/fault_injection.h"

namespace flow::rt {

Status Task::Run() {
  Status status;
  try {
    // members_ lists downstream consumers first: a chain is ready before anything flows into it.
    for (size_t i = 0; i < members_.size() && status.ok(); ++i) status = members_[i]->Open();
    if (status.ok() && restoring()) status = RestoreMembers();
    if (status.ok()) status = Loop();
  } catch (const std::exception& e) {
    status = Status::Internal(std::string("exception: ") + e.what());
  } catch (...) {
    status = Status::Internal("unknown exception");
  }
  if (CheckpointCoordinator* c = checkpointing_.coordinator; c != nullptr) {
    if (!status.ok()) {
      c->TaskFailed(checkpointing_.index, status.ToString());
    } else if (input_finished_) {
      c->TaskFinished(checkpointing_.index, OperatorNames());
    }
  }
  CloseSource();
  for (auto it = members_.rbegin(); it != members_.rend(); ++it) (*it)->Close();
  return status;
}

std::vector<std::string> Task::OperatorNames() const {
  std::vector<std::string> names;
  for (Consumer* m : members_) {
    if (const OperatorContext* ctx = m->operator_context()) names.push_back(ctx->name);
  }
  // A source task's own operator is not a member.
  if (std::find(names.begin(), names.end(), name_) == names.end()) names.push_back(name_);
  return names;
}

const OperatorSnapshot* Task::RestoredSnapshot(const std::string& op, uint32_t subtask) const {
  if (checkpointing_.restore == nullptr) return nullptr;
  for (const OperatorSnapshot& s : checkpointing_.restore->metadata.snapshots) {
    if (!s.finished && s.operator_name == op && s.subtask == subtask) return &s;
  }
  return nullptr;
}

Status Task::RestoreMembers() {
  for (Consumer* m : members_) {
    const OperatorContext* ctx = m->operator_context();
    if (ctx == nullptr) continue;
    const OperatorSnapshot* snap = RestoredSnapshot(ctx->name, ctx->subtask);
    if (snap == nullptr) continue;  // no state, or the subtask had finished
    for (const SnapshotFile& file : snap->files) {
      auto bytes = ReadRestoreFile(*checkpointing_.restore, file);
      if (!bytes.ok()) return bytes.status();
      BinaryReader reader(*bytes);
      FLOW_RETURN_IF_ERROR(m->RestoreOperator(&reader));
    }
  }
  return Status::Ok();
}

Status Task::Checkpoint(int64_t id, const std::string* source_position, const std::function<Status()>& forward) {
  CheckpointCoordinator* coordinator = checkpointing_.coordinator;
  if (coordinator == nullptr) return forward();
  const int64_t start = SteadyNowMs();
  // Synchronous part: operator state as of this point of the stream, before the barrier leaves.
  struct Taken {
    const OperatorContext* ctx;
    std::string bytes;
  };
  std::vector<Taken> taken;
  Status failed;
  for (Consumer* m : members_) {
    const OperatorContext* ctx = m->operator_context();
    if (ctx == nullptr) continue;
    BinaryWriter w;
    Status s = m->SnapshotOperator(&w);
    if (!s.ok() && failed.ok()) failed = s;
    taken.push_back(Taken{ctx, w.Release()});
  }
  const int64_t sync_done = SteadyNowMs();
  FLOW_RETURN_IF_ERROR(forward());
  FaultPoint("after-barrier", id, name_);
  TaskAck ack;
  ack.checkpoint_id = id;
  ack.task = checkpointing_.index;
  ack.stats.sync_ms = sync_done - start;
  if (source_position != nullptr) {
    OperatorSnapshot src;
    src.operator_name = name_;
    src.subtask = subtask_;
    src.source_position = *source_position;
    ack.snapshots.push_back(std::move(src));
  }
  for (Taken& t : taken) {
    if (!failed.ok()) break;
    OperatorSnapshot snap;
    snap.operator_name = t.ctx->name;
    snap.subtask = t.ctx->subtask;
    if (!t.bytes.empty()) {
      auto file = checkpointing_.storage->WriteSnapshotFile(id, SnapshotFileName(t.ctx->name, t.ctx->subtask), t.bytes);
      if (!file.ok()) {
        failed = file.status();
        break;
      }
      ack.stats.bytes += file->size;
      snap.key_group_first = t.ctx->key_groups.first;
      snap.key_group_end = t.ctx->key_groups.end;
      snap.files.push_back(*file);
    }
    // A source's own snapshot already carries its name (chained operators have other names).
    if (source_position != nullptr && snap.operator_name == name_ && snap.subtask == subtask_) continue;
    ack.snapshots.push_back(std::move(snap));
  }
  ack.stats.async_ms = SteadyNowMs() - sync_done;
  if (!failed.ok()) {
    Log(LogLevel::kWarn, "checkpoint", "task declines checkpoint",
        {{"id", std::to_string(id)}, {"task", name_}, {"subtask", std::to_string(subtask_)}, {"error", failed.ToString()}});
    coordinator->Decline(id, checkpointing_.index, failed.ToString());
    return Status::Ok();
  }
  Status acked = coordinator->Acknowledge(std::move(ack));
  if (!acked.ok()) {
    Log(LogLevel::kWarn, "checkpoint", "acknowledgement refused",
        {{"id", std::to_string(id)}, {"task", name_}, {"error", acked.ToString()}});
  }
  return Status::Ok();
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
            FLOW_RETURN_IF_ERROR(head_->OnEnd(!stopped));
            if (!stopped) MarkInputFinished();
            return Status::Ok();
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
  Status s = Checkpoint(id, nullptr, [&] { return head_->OnBarrier(id); });
  for (size_t i = 0; i < barrier_seen_.size(); ++i) gate_->Unblock(i);
  return s;
}

}  // namespace flow::rt
