#include "flow/runtime/engine/task.h"

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/barrier_aligner.h"
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

uint32_t Task::RestoredParallelism(const std::string& op) const {
  if (checkpointing_.restore == nullptr) return 0;
  for (const OperatorParallelism& o : checkpointing_.restore->metadata.operators) {
    if (o.name == op) return o.parallelism;
  }
  return 0;
}

std::vector<OldSourcePosition> Task::RestoredSourcePositions(const std::string& op, uint32_t old_parallelism) const {
  std::vector<OldSourcePosition> old(old_parallelism);
  for (uint32_t i = 0; i < old_parallelism; ++i) {
    old[i].subtask = i;
    old[i].finished = true;  // a subtask without a live snapshot had finished (finished acks carry no subtask)
  }
  if (checkpointing_.restore == nullptr) return old;
  for (const OperatorSnapshot& s : checkpointing_.restore->metadata.snapshots) {
    if (s.finished || s.operator_name != op || s.subtask >= old_parallelism) continue;
    old[s.subtask].finished = false;
    old[s.subtask].position = s.source_position;
  }
  return old;
}

Status Task::RestoreMembers() {
  const RestorePoint& point = *checkpointing_.restore;
  for (Consumer* m : members_) {
    const OperatorContext* ctx = m->operator_context();
    if (ctx == nullptr) continue;
    const uint32_t old_parallelism = RestoredParallelism(ctx->name);
    if (old_parallelism == 0 || old_parallelism == ctx->parallelism) {
      const OperatorSnapshot* snap = RestoredSnapshot(ctx->name, ctx->subtask);
      if (snap == nullptr) continue;  // no state, or the subtask had finished
      for (const SnapshotFile& file : snap->files) {
        auto bytes = ReadRestoreFile(point, file);
        if (!bytes.ok()) return bytes.status();
        BinaryReader reader(*bytes);
        FLOW_RETURN_IF_ERROR(m->RestoreOperator(&reader));
      }
      continue;
    }
    // Rescaled: read every old snapshot file that holds one of this subtask's key groups, once
    // each; RestoreState keeps the groups of ctx->key_groups only.
    auto plan = PlanKeyedRestore(point.metadata, ctx->name, ctx->parallelism);
    if (!plan.ok()) return plan.status();
    std::vector<std::string> read;
    for (const RestorePiece& piece : (*plan)[ctx->subtask]) {
      std::string id = (piece.file.shared ? "shared/" : "") + piece.file.name;
      if (std::find(read.begin(), read.end(), id) != read.end()) continue;
      read.push_back(id);
      auto bytes = ReadRestoreFile(point, piece.file);
      if (!bytes.ok()) return bytes.status();
      BinaryReader reader(*bytes);
      FLOW_RETURN_IF_ERROR(m->RestoreOperator(&reader));
    }
  }
  return Status::Ok();
}

Status Task::Checkpoint(int64_t id, const std::string* source_position, const std::function<Status()>& forward,
                        DurationMs alignment_ms) {
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
  ack.stats.alignment_ms = alignment_ms;
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
    // The range is recorded even without state: a rescaled restore checks that the snapshots of
    // an operator cover every key group.
    snap.key_group_first = t.ctx->key_groups.first;
    snap.key_group_end = t.ctx->key_groups.end;
    if (!t.bytes.empty()) {
      auto file = checkpointing_.storage->WriteSnapshotFile(id, SnapshotFileName(t.ctx->name, t.ctx->subtask), t.bytes);
      if (!file.ok()) {
        failed = file.status();
        break;
      }
      ack.stats.bytes += file->size;
      snap.files.push_back(*file);
    }
    // A source's own snapshot already carries its name (chained operators have other names).
    if (source_position != nullptr && snap.operator_name == name_ && snap.subtask == subtask_) continue;
    ack.snapshots.push_back(std::move(snap));
  }
  ack.stats.async_ms = SteadyNowMs() - sync_done;
  if (!failed.ok()) {
    DeclineCheckpoint(id, failed.ToString());
    return Status::Ok();
  }
  Status acked = coordinator->Acknowledge(std::move(ack));
  if (!acked.ok()) {
    Log(LogLevel::kWarn, "checkpoint", "acknowledgement refused",
        {{"id", std::to_string(id)}, {"task", name_}, {"error", acked.ToString()}});
  }
  return Status::Ok();
}

void Task::DeclineCheckpoint(int64_t id, const std::string& why) {
  CheckpointCoordinator* coordinator = checkpointing_.coordinator;
  if (coordinator == nullptr) return;
  Log(LogLevel::kWarn, "checkpoint", "task declines checkpoint",
      {{"id", std::to_string(id)}, {"task", name_}, {"subtask", std::to_string(subtask_)}, {"error", why}});
  coordinator->Decline(id, checkpointing_.index, why);
}

int64_t Task::restored_checkpoint_id() const {
  return checkpointing_.restore == nullptr ? 0 : checkpointing_.restore->metadata.checkpoint_id;
}

Status InputTask::Loop() {
  const size_t n = gate_->size();
  if (n == 0) return Status::Internal("input task without input channels");
  WatermarkCombiner combiner(n);
  // Barriers older than the restored checkpoint can no longer arrive; ids only grow.
  BarrierAligner aligner(n, restored_checkpoint_id());
  std::vector<AlignAction> actions;
  actions.reserve(8);
  std::vector<bool> ended(n, false);
  size_t ended_count = 0;
  bool stopped = false;  // some channel ended because the job was stopped, not drained
  bool all_idle = false;
  int64_t align_start = -1;  // steady ms of the first kBlock of the current alignment
  while (true) {
    auto ready = gate_->WaitReady();
    if (!ready.ok()) return ready.status();
    const size_t ch = *ready;
    ElementKind kind;
    int64_t value;
    // Batches are handed to the chain inside ReadOne: a readable channel is never blocked, so the
    // aligner's answer for data is always "process" (checked below all the same).
    FLOW_RETURN_IF_ERROR(bindings_[ch]->ReadOne(&kind, &value));
    AlignEvent event = AlignEvent::kData;
    if (kind == ElementKind::kBarrier) event = AlignEvent::kBarrier;
    if (kind == ElementKind::kCancelCheckpoint) event = AlignEvent::kCancel;
    if (kind == ElementKind::kEnd) event = AlignEvent::kEnd;
    FLOW_RETURN_IF_ERROR(aligner.OnElement(ch, event, value, &actions));
    bool finish = false;  // every channel ended: finish after the aligner's actions ran
    for (const AlignAction& a : actions) {
      switch (a.kind) {
        case AlignActionKind::kProcess: {
          bool advanced = false;
          if (kind == ElementKind::kWatermark) {
            advanced = combiner.OnWatermark(ch, value);
          } else if (kind == ElementKind::kIdle || kind == ElementKind::kActive) {
            advanced = combiner.OnIdle(ch, kind == ElementKind::kIdle);
          } else if (kind == ElementKind::kEnd && !ended[ch]) {
            ended[ch] = true;
            ++ended_count;
            stopped = stopped || value == 0;
            if (ended_count == n) {
              finish = true;
            } else {
              advanced = combiner.OnEnd(ch);
            }
          }
          if (advanced) {
            watermark_->Set(combiner.current());
            FLOW_RETURN_IF_ERROR(head_->OnWatermark(combiner.current()));
          }
          if (!finish) {
            bool now_idle = combiner.AllIdle();
            if (now_idle != all_idle) {
              all_idle = now_idle;
              FLOW_RETURN_IF_ERROR(head_->OnIdle(now_idle));
            }
          }
          break;
        }
        case AlignActionKind::kBlock:
          if (align_start < 0) align_start = SteadyNowMs();
          gate_->Block(a.channel);
          break;
        case AlignActionKind::kUnblockAll:
          for (size_t i = 0; i < n; ++i) gate_->Unblock(i);
          break;
        case AlignActionKind::kTrigger: {
          const DurationMs aligned_ms = align_start < 0 ? 0 : SteadyNowMs() - align_start;
          align_start = -1;
          if (alignment_ms_ != nullptr) alignment_ms_->Set(aligned_ms);
          FLOW_RETURN_IF_ERROR(Checkpoint(a.checkpoint, nullptr, [&] { return head_->OnBarrier(a.checkpoint); },
                                          aligned_ms));
          break;
        }
        case AlignActionKind::kAbort:
          align_start = -1;
          DeclineCheckpoint(a.checkpoint, a.cause == AlignAbortCause::kNewerBarrier
                                              ? "alignment overtaken by a newer barrier"
                                              : "cancelled upstream");
          FLOW_RETURN_IF_ERROR(head_->OnCancelCheckpoint(a.checkpoint));
          break;
        case AlignActionKind::kIgnore:
          break;
        case AlignActionKind::kProcessAndRecord:
        case AlignActionKind::kCompleteUnaligned:
          // The engine never calls OnAlignmentTimeout, so the aligner cannot ask for these.
          return Status::Internal(fmt::format("input task '{}' subtask {}: unexpected alignment action {}", name(),
                                              subtask(), AlignActionKindName(a.kind)));
      }
    }
    if (finish) {
      if (!stopped && combiner.current() != kMaxWatermark) {
        combiner.OnEnd(ch);
        watermark_->Set(kMaxWatermark);
        FLOW_RETURN_IF_ERROR(head_->OnWatermark(kMaxWatermark));
      }
      FLOW_RETURN_IF_ERROR(head_->OnEnd(!stopped));
      if (!stopped) MarkInputFinished();
      return Status::Ok();
    }
  }
}

}  // namespace flow::rt
