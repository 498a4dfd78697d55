#include "flow/runtime/engine/subtask_checkpoints.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/engine/state_adoption.h"
#include "flow/runtime/engine/watermark.h"
#include "flow/runtime/log/log.h"
#include "flow/runtime/state/checkpoint_storage_sink.h"
#include "flow/runtime/state/snapshot_scope.h"

namespace flow::rt {

std::vector<std::string> SubtaskCheckpoints::OperatorNames() const {
  std::vector<std::string> names;
  for (Consumer* m : *members_) {
    if (const OperatorContext* ctx = m->operator_context()) names.push_back(ctx->name);
  }
  // A source task's own operator is not a member.
  if (std::find(names.begin(), names.end(), task_) == names.end()) names.push_back(task_);
  return names;
}

const OperatorSnapshot* SubtaskCheckpoints::RestoredSnapshot(const std::string& op,
                                                             uint32_t subtask) const {
  if (checkpointing_.restore == nullptr) return nullptr;
  for (const OperatorSnapshot& s : checkpointing_.restore->metadata.snapshots) {
    if (!s.finished && s.operator_name == op && s.subtask == subtask) return &s;
  }
  return nullptr;
}

uint32_t SubtaskCheckpoints::RestoredParallelism(const std::string& op) const {
  if (checkpointing_.restore == nullptr) return 0;
  for (const OperatorParallelism& o : checkpointing_.restore->metadata.operators) {
    if (o.name == op) return o.parallelism;
  }
  return 0;
}

std::vector<OldSourcePosition> SubtaskCheckpoints::RestoredSourcePositions(
    const std::string& op, uint32_t old_parallelism) const {
  std::vector<OldSourcePosition> old(old_parallelism);
  for (uint32_t i = 0; i < old_parallelism; ++i) {
    old[i].subtask = i;
    old[i].finished =
        true;  // a subtask without a live snapshot had finished (finished acks carry no subtask)
  }
  if (checkpointing_.restore == nullptr) return old;
  for (const OperatorSnapshot& s : checkpointing_.restore->metadata.snapshots) {
    if (s.finished || s.operator_name != op || s.subtask >= old_parallelism) continue;
    old[s.subtask].finished = false;
    old[s.subtask].position = s.source_position;
  }
  return old;
}

Result<TimestampMs> SubtaskCheckpoints::RestoredWatermarkFloor(const std::string& op,
                                                               uint32_t old_parallelism) const {
  if (checkpointing_.restore == nullptr) return kMinWatermark;
  TimestampMs floor = kMaxWatermark;
  bool any = false;
  for (const OperatorSnapshot& s : checkpointing_.restore->metadata.snapshots) {
    if (s.finished || s.operator_name != op || s.subtask >= old_parallelism) continue;
    if (s.source_watermark.empty()) return kMinWatermark;  // an older checkpoint: nothing known
    auto reached = WatermarkGenerator::ReachedInSnapshot(s.source_watermark);
    if (!reached.ok()) {
      return Status(reached.status().code(), fmt::format("source '{}' subtask {}: {}", op,
                                                         s.subtask, reached.status().message()));
    }
    floor = std::min(floor, *reached);
    any = true;
  }
  return any ? floor : kMinWatermark;
}

bool SubtaskCheckpoints::Adopting() const {
  return std::any_of(members_->begin(), members_->end(), [](Consumer* m) {
    const OperatorContext* ctx = m->operator_context();
    return ctx != nullptr && ctx->adoption != nullptr && !ctx->shuffle_reader.empty();
  });
}

// The operator's own file is files[0]; any further files are its keyed state's asynchronous
// snapshot (state/snapshot_scope.h), reached only through the reference in files[0].
Status SubtaskCheckpoints::RestoreOneSnapshot(Consumer* m, const OperatorSnapshot& snap,
                                              const RestorePoint& point,
                                              std::optional<KeyGroupSpan> only) {
  if (snap.files.empty()) return Status::Ok();  // no state
  auto bytes = ReadRestoreFile(point, snap.files[0]);
  if (!bytes.ok()) return bytes.status();
  RestorePointSource source(&point);
  std::vector<StoredFile> files;
  for (const SnapshotFile& f : snap.files) files.push_back(ToStoredFile(f));
  std::optional<SnapshotRestoreScope> scope;
  if (only) {
    scope.emplace(&source, std::move(files), *only);
  } else {
    scope.emplace(&source, std::move(files));
  }
  BinaryReader reader(*bytes);
  return m->RestoreOperator(&reader);
}

// For each partition its source was given with committed state, the key groups of that
// partition this subtask owns, from the snapshot that committed them (engine/state_adoption.h).
Status SubtaskCheckpoints::AdoptKeyedState(Consumer* m, const OperatorContext& ctx) {
  auto given = ctx.adoption->Wait(ctx.shuffle_reader, ctx.cancel);
  if (!given.ok()) return given.status();
  for (const auto& [partition, origin] : given->origins) {
    const KeyGroupRange part =
        KeyGroupsOfSubtask(static_cast<uint32_t>(partition),
                           static_cast<uint32_t>(given->partitions), ctx.max_parallelism);
    const KeyGroupSpan only{std::max(part.first, ctx.key_groups.first),
                            std::min(part.end, ctx.key_groups.end)};
    if (only.empty()) continue;
    auto point = ctx.adoption->Checkpoint(origin);
    if (!point.ok()) {
      return Status(point.status().code(),
                    fmt::format("'{}' subtask {} adopting the keys of repartition partition {}: {}",
                                ctx.name, ctx.subtask, partition, point.status().message()));
    }
    int restored = 0;
    for (const OperatorSnapshot* s : SnapshotsOf((*point)->metadata, ctx.name)) {
      if (s->finished || s->key_group_end <= only.first || s->key_group_first >= only.end) continue;
      FLOW_RETURN_IF_ERROR(RestoreOneSnapshot(m, *s, **point, only));
      ++restored;
    }
    Log(LogLevel::kInfo, "engine", "adopted the state of a repartition partition's keys",
        {{"operator", ctx.name},
         {"subtask", std::to_string(ctx.subtask)},
         {"partition", std::to_string(partition)},
         {"key_groups", only.ToString()},
         {"from", ctx.adoption->PathOf(origin)},
         {"snapshots", std::to_string(restored)}});
  }
  return Status::Ok();
}

Status SubtaskCheckpoints::RestoreMembers() {
  for (Consumer* m : *members_) {
    const OperatorContext* ctx = m->operator_context();
    if (ctx == nullptr) continue;
    if (ctx->adoption != nullptr && !ctx->shuffle_reader.empty()) {
      // Its own checkpoint may hold key groups another instance reads now: never restored.
      FLOW_RETURN_IF_ERROR(AdoptKeyedState(m, *ctx));
      continue;
    }
    if (checkpointing_.restore == nullptr) continue;
    const RestorePoint& point = *checkpointing_.restore;
    const uint32_t old_parallelism = RestoredParallelism(ctx->name);
    if (old_parallelism == 0 || old_parallelism == ctx->parallelism) {
      const OperatorSnapshot* snap = RestoredSnapshot(ctx->name, ctx->subtask);
      if (snap == nullptr) continue;  // no state, or the subtask had finished
      FLOW_RETURN_IF_ERROR(RestoreOneSnapshot(m, *snap, point));
      continue;
    }
    // An operator fed other than by key keeps state that is not split by key group (a count, a
    // buffer): handed out by key-group range it would be duplicated (scaling up) or merged into
    // a subtask whose input it no longer matches. Stateless ones (no file) rescale freely.
    if (!ctx->keyed_input) {
      for (const OperatorSnapshot* s : SnapshotsOf(point.metadata, ctx->name)) {
        if (s->finished || s->files.empty()) continue;
        return Status::InvalidArgument(
            fmt::format("cannot restore operator '{}' taken at parallelism {} into parallelism {}: "
                        "its input is not partitioned by key, so its state is not split by key "
                        "group (run with --parallelism {}, or --restore none)",
                        ctx->name, old_parallelism, ctx->parallelism, old_parallelism));
      }
      continue;
    }
    // Rescaled: restore every old snapshot that holds one of this subtask's key groups, once
    // each; RestoreState keeps the groups of ctx->key_groups only.
    auto plan = PlanKeyedRestore(point.metadata, ctx->name, ctx->parallelism);
    if (!plan.ok()) return plan.status();
    std::vector<uint32_t> read;
    for (const RestorePiece& piece : (*plan)[ctx->subtask]) {
      if (std::find(read.begin(), read.end(), piece.old_subtask) != read.end()) continue;
      read.push_back(piece.old_subtask);
      const OperatorSnapshot* snap = nullptr;
      for (const OperatorSnapshot* s : SnapshotsOf(point.metadata, ctx->name)) {
        if (!s->finished && s->subtask == piece.old_subtask) snap = s;
      }
      if (snap == nullptr) {
        return Status::Corruption(
            fmt::format("checkpoint {}: no snapshot of '{}' subtask {} for key group {}",
                        point.path, ctx->name, piece.old_subtask, piece.key_group));
      }
      FLOW_RETURN_IF_ERROR(RestoreOneSnapshot(m, *snap, point));
    }
  }
  return Status::Ok();
}

namespace {

std::mutex g_write_hook_mu;
std::function<void(int64_t, const std::string&)> g_write_hook;  // guarded by g_write_hook_mu

// Counts the bytes handed to the storage (shared files already stored are not written again).
class CountingSink final : public SnapshotFileSink {
 public:
  explicit CountingSink(SnapshotFileSink* inner) : inner_(inner) {}
  Result<StoredFile> WriteOwn(std::string_view name, std::string_view bytes) override {
    bytes_ += bytes.size();
    return inner_->WriteOwn(name, bytes);
  }
  Result<StoredFile> WriteShared(std::string_view name, std::string_view bytes) override {
    bytes_ += bytes.size();
    return inner_->WriteShared(name, bytes);
  }
  bool HasShared(std::string_view name) override { return inner_->HasShared(name); }
  uint64_t bytes() const { return bytes_; }

 private:
  SnapshotFileSink* inner_;
  uint64_t bytes_ = 0;
};

}  // namespace

void SetSnapshotWriteHookForTest(
    std::function<void(int64_t checkpoint_id, const std::string& task)> hook) {
  std::lock_guard lock(g_write_hook_mu);
  g_write_hook = std::move(hook);
}

// One thread per task writing its snapshots in checkpoint order (started on first use).
class SnapshotWriterThread {
 public:
  SnapshotWriterThread() : thread_([this] { Loop(); }) {}
  // Finishes the queued writes first.
  ~SnapshotWriterThread() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Submit(std::function<void()> work) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(work));
    }
    cv_.notify_all();
  }

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      std::function<void()> work = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      work();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

// What the synchronous part of a checkpoint leaves for the writer thread.
struct SubtaskCheckpoints::TakenSnapshot {
  struct Member {
    std::string name;
    uint32_t subtask = 0;
    KeyGroupRange key_groups;
    std::string bytes;                                    // the operator's own file
    std::vector<std::unique_ptr<PendingSnapshot>> state;  // its keyed state, written after it
  };
  int64_t id = 0;
  int64_t sync_done_ms = 0;
  std::vector<Member> members;
  TaskAck ack;  // source position and timings filled in; files added by the write
};

SubtaskCheckpoints::SubtaskCheckpoints(std::string task, uint32_t subtask,
                                       const std::vector<Consumer*>* members)
    : task_(std::move(task)), subtask_(subtask), members_(members) {}

SubtaskCheckpoints::~SubtaskCheckpoints() {
  writer_.reset();
}

void SubtaskCheckpoints::End(const Status& status, bool input_finished) {
  writer_.reset();  // the queued writes end first (ack or decline)
  CheckpointCoordinator* c = checkpointing_.coordinator;
  if (c == nullptr) return;
  if (!status.ok()) {
    c->TaskFailed(checkpointing_.index, status.ToString());
  } else if (input_finished) {
    c->TaskFinished(checkpointing_.index, OperatorNames());
  }
}

Status SubtaskCheckpoints::Checkpoint(int64_t id, const SourceState* source,
                                      const std::function<Status()>& forward,
                                      DurationMs alignment_ms) {
  CheckpointCoordinator* coordinator = checkpointing_.coordinator;
  if (coordinator == nullptr) return forward();
  const int64_t start = SteadyNowMs();
  // Synchronous part: operator state as of this point of the stream, before the barrier leaves.
  // Keyed rocksdb state only takes a hard-link checkpoint here (AsyncSnapshotScope).
  auto taken = std::make_shared<TakenSnapshot>();
  taken->id = id;
  Status failed;
  for (Consumer* m : *members_) {
    const OperatorContext* ctx = m->operator_context();
    if (ctx == nullptr) continue;
    AsyncSnapshotScope scope(id, SnapshotFileName(ctx->name, ctx->subtask));
    BinaryWriter w;
    Status s = m->SnapshotOperator(&w);
    if (s.ok()) s = scope.status();
    if (!s.ok() && failed.ok()) failed = s;
    taken->members.push_back(TakenSnapshot::Member{ctx->name, ctx->subtask, ctx->key_groups,
                                                   w.Release(), scope.TakePending()});
  }
  taken->sync_done_ms = SteadyNowMs();
  FLOW_RETURN_IF_ERROR(forward());
  FaultPoint("after-barrier", id, task_);
  if (!failed.ok()) {
    DeclineCheckpoint(id, failed.ToString());
    return Status::Ok();  // the pending parts are dropped with `taken`
  }
  TaskAck& ack = taken->ack;
  ack.checkpoint_id = id;
  ack.task = checkpointing_.index;
  ack.stats.sync_ms = taken->sync_done_ms - start;
  ack.stats.alignment_ms = alignment_ms;
  if (source != nullptr) {
    OperatorSnapshot src;
    src.operator_name = task_;
    src.subtask = subtask_;
    src.source_position = source->position;
    src.source_watermark = source->watermark;
    ack.snapshots.push_back(std::move(src));
  }
  // Asynchronous part: the barrier is gone, records keep flowing; the ack follows the writes.
  if (!writer_) writer_ = std::make_unique<SnapshotWriterThread>();
  writer_->Submit([this, taken] {
    try {
      WriteSnapshot(taken.get());
    } catch (const std::exception& e) {
      DeclineCheckpoint(taken->id,
                        std::string("asynchronous snapshot write failed: exception: ") + e.what());
    } catch (...) {
      DeclineCheckpoint(taken->id, "asynchronous snapshot write failed: unknown exception");
    }
  });
  return Status::Ok();
}

void SubtaskCheckpoints::WriteSnapshot(TakenSnapshot* taken) {
  const int64_t id = taken->id;
  {
    std::function<void(int64_t, const std::string&)> hook;
    {
      std::lock_guard lock(g_write_hook_mu);
      hook = g_write_hook;
    }
    if (hook) hook(id, task_);
  }
  TaskAck& ack = taken->ack;
  const bool has_source = !ack.snapshots.empty();
  CheckpointStorageSink storage_sink(checkpointing_.storage, id);
  CountingSink sink(&storage_sink);
  Status failed;
  for (TakenSnapshot::Member& t : taken->members) {
    OperatorSnapshot snap;
    snap.operator_name = t.name;
    snap.subtask = t.subtask;
    // The range is recorded even without state: a rescaled restore checks that the snapshots of
    // an operator cover every key group.
    snap.key_group_first = t.key_groups.first;
    snap.key_group_end = t.key_groups.end;
    if (!t.bytes.empty()) {
      auto file = sink.WriteOwn(SnapshotFileName(t.name, t.subtask), t.bytes);
      if (!file.ok()) {
        failed = file.status();
        break;
      }
      snap.files.push_back(ToSnapshotFile(*file));
    }
    for (std::unique_ptr<PendingSnapshot>& pending : t.state) {
      auto files = pending->Write(&sink);
      pending.reset();  // drops the local hard links
      if (!files.ok()) {
        failed = Status(files.status().code(),
                        fmt::format("operator '{}' subtask {}: writing keyed state: {}", t.name,
                                    t.subtask, files.status().message()));
        break;
      }
      for (const StoredFile& f : *files) snap.files.push_back(ToSnapshotFile(f));
    }
    if (!failed.ok()) break;
    // A source's own snapshot already carries its name (chained operators have other names).
    if (has_source && snap.operator_name == task_ && snap.subtask == subtask_) continue;
    ack.snapshots.push_back(std::move(snap));
  }
  taken->members.clear();
  ack.stats.bytes = sink.bytes();
  ack.stats.async_ms = SteadyNowMs() - taken->sync_done_ms;
  if (!failed.ok()) {
    DeclineCheckpoint(id, "asynchronous snapshot write failed: " + failed.ToString());
    return;
  }
  Status acked = checkpointing_.coordinator->Acknowledge(std::move(ack));
  if (!acked.ok()) {
    Log(LogLevel::kWarn, "checkpoint", "acknowledgement refused",
        {{"id", std::to_string(id)}, {"task", task_}, {"error", acked.ToString()}});
  }
}

void SubtaskCheckpoints::DeclineCheckpoint(int64_t id, const std::string& why) {
  CheckpointCoordinator* coordinator = checkpointing_.coordinator;
  if (coordinator == nullptr) return;
  Log(LogLevel::kWarn, "checkpoint", "task declines checkpoint",
      {{"id", std::to_string(id)},
       {"task", task_},
       {"subtask", std::to_string(subtask_)},
       {"error", why}});
  coordinator->Decline(id, checkpointing_.index, why);
}

int64_t SubtaskCheckpoints::restored_checkpoint_id() const {
  return checkpointing_.restore == nullptr ? 0 : checkpointing_.restore->metadata.checkpoint_id;
}

}  // namespace flow::rt
