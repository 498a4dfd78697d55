// Exactly-once sinks wired into a running job: start-up, restore choice, per-subtask calls,
// commit on checkpoint completion, final checkpoint (docs/exactly-once.md, "Engine wiring").

#include "txn_sinks.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "flow/runtime/log/log.h"

namespace flow::rt {

namespace engine_detail {

void EncodedBatch::Clear() {
  encoded_.clear();
  ends_.clear();
  metas_.clear();
  headers_.clear();
}

void EncodedBatch::Add() {
  encoded_.append(key_);
  const size_t key_end = encoded_.size();
  encoded_.append(payload_);
  ends_.emplace_back(key_end, encoded_.size());
  const size_t headers_begin = headers_.size();
  for (OutHeader& h : meta_.headers) headers_.push_back(std::move(h));
  metas_.push_back(Meta{meta_.timestamp, headers_begin, headers_.size()});
}

std::span<const TxnRecord> EncodedBatch::Records(const std::vector<TimestampMs>& timestamps) {
  // Views are taken only now: appending may have moved the buffers.
  const size_t n = ends_.size();
  records_.resize(n);
  size_t start = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto [key_end, end] = ends_[i];
    const Meta& m = metas_[i];
    records_[i] = TxnRecord{std::string_view(encoded_).substr(start, key_end - start),
                            std::string_view(encoded_).substr(key_end, end - key_end),
                            m.timestamp != kNoTimestamp ? m.timestamp : timestamps[i],
                            std::span<const OutHeader>(headers_).subspan(
                                m.headers_begin, m.headers_end - m.headers_begin)};
    start = end;
  }
  return records_;
}

namespace {
// How long a write keeps retrying while the sink refuses it (buffer full behind a commit,
// brokers unreachable) before the task fails.
constexpr int64_t kWriteRetryMs = 120000;
constexpr int64_t kMaxBackoffMs = 100;

// A failed job stops retrying refused writes at once instead of after kWriteRetryMs.
bool IsCancelled(const OperatorContext& ctx) {
  return ctx.cancel != nullptr && ctx.cancel->load();
}
}  // namespace

Status TxnSinkSubtask::Start(CommitGroup* group, uint32_t participant, int64_t restored_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (spec_->group && group != nullptr) {
    sink_ = spec_->group->participant(group, participant);
  } else if (!spec_->group && spec_->factory) {
    sink_ = spec_->factory(ctx_.subtask, ctx_.parallelism);
  }
  if (!sink_)
    return Status::InvalidArgument(
        fmt::format("exactly-once sink '{}': no sink to write to", ctx_.name));
  if (!spec_->group && !sink_->CommitIsResumable()) {
    return Status::InvalidArgument(
        fmt::format("exactly-once sink '{}': a sink outside a commit group must be resumable (only "
                    "a group's commit goes first)",
                    ctx_.name));
  }
  FLOW_RETURN_IF_ERROR(sink_->Open(ctx_.subtask, ctx_.parallelism));
  FLOW_RETURN_IF_ERROR(sink_->Recover(restored_id));
  FLOW_RETURN_IF_ERROR(sink_->BeginTransaction());
  last_precommit_ = restored_id;
  return Status::Ok();
}

Status TxnSinkSubtask::Write(std::string_view key, std::string_view payload, TimestampMs ts) {
  int64_t deadline = 0;
  int64_t backoff = 1;
  while (true) {
    Status s;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!sink_) return Status::Internal("exactly-once sink: write before start-up");
      s = sink_->Write(key, payload, ts);
    }
    if (s.code() != StatusCode::kUnavailable) return s;
    if (IsCancelled(ctx_)) return Status::Cancelled("job cancelled: " + s.message());
    int64_t now = SteadyNowMs();
    if (deadline == 0) deadline = now + kWriteRetryMs;
    if (now >= deadline) {
      return Status::Unavailable(
          fmt::format("still refused after {} s: {}", kWriteRetryMs / 1000, s.message()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
    backoff = std::min(backoff * 2, kMaxBackoffMs);
  }
}

Status TxnSinkSubtask::WriteBatch(std::span<const TxnRecord> records) {
  int64_t deadline = 0;
  int64_t backoff = 1;
  while (!records.empty()) {
    Status s;
    size_t written = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!sink_) return Status::Internal("exactly-once sink: write before start-up");
      s = sink_->WriteBatch(records, &written);
    }
    if (s.ok()) return s;
    if (s.code() != StatusCode::kUnavailable) return s;
    records = records.subspan(std::min(written, records.size()));
    if (IsCancelled(ctx_)) return Status::Cancelled("job cancelled: " + s.message());
    int64_t now = SteadyNowMs();
    if (written > 0) deadline = 0;  // some records were taken: the bound starts again
    if (deadline == 0) deadline = now + kWriteRetryMs;
    if (now >= deadline) {
      return Status::Unavailable(
          fmt::format("still refused after {} s: {}", kWriteRetryMs / 1000, s.message()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
    backoff = std::min(backoff * 2, kMaxBackoffMs);
  }
  return Status::Ok();
}

Status TxnSinkSubtask::EventTime(TimestampMs watermark, bool idle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sink_) return Status::Internal("exactly-once sink: event time before start-up");
  if (finished_) return Status::Ok();  // its last epoch is sealed
  return sink_->OnEventTime(watermark, idle, ctx_.split_times);
}

Status TxnSinkSubtask::Barrier(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sink_) return Status::Internal("exactly-once sink: barrier before start-up");
  FLOW_RETURN_IF_ERROR(sink_->PreCommit(id));
  last_precommit_ = id;
  return sink_->BeginTransaction();
}

Status TxnSinkSubtask::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return Status::Ok();
  finished_ = true;
  if (!sink_) return Status::Internal("exactly-once sink: end of input before start-up");
  const int64_t id = last_precommit_ + 1;
  FLOW_RETURN_IF_ERROR(sink_->PreCommit(id));
  last_precommit_ = id;
  return sink_->BeginTransaction();
}

Status TxnSinkSubtask::PreCommitIfFinished(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!finished_ || id <= last_precommit_ || !sink_) return Status::Ok();
  FLOW_RETURN_IF_ERROR(sink_->PreCommit(id));
  last_precommit_ = id;
  return sink_->BeginTransaction();
}

Status TxnSinkSubtask::Commit(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sink_) return Status::Ok();
  return sink_->Commit(id);
}

void TxnSinkSubtask::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sink_) return;
  Status s = sink_->Close();
  if (!s.ok())
    Log(LogLevel::kWarn, "txn", "sink close failed",
        {{"sink", ctx_.name}, {"error", s.ToString()}});
  sink_.reset();
}

}  // namespace engine_detail

std::unique_ptr<TxnSinks> TxnSinks::Find(
    const std::vector<std::unique_ptr<engine_detail::NodeBase>>& nodes) {
  std::unique_ptr<TxnSinks> t;
  for (const auto& n : nodes) {
    auto* txn = dynamic_cast<engine_detail::TxnSinkNodeBase*>(n.get());
    if (txn == nullptr) continue;
    if (!t) t.reset(new TxnSinks());
    // Taken, not copied: an in-process restart builds new drivers, which register afresh.
    for (engine_detail::TxnSinkSubtask* s : txn->subtasks) t->subtasks_.push_back(s);
    txn->subtasks.clear();
  }
  return t;
}

TxnSinks::~TxnSinks() {
  for (engine_detail::TxnSinkSubtask* s : subtasks_) s->Close();
}

Status TxnSinks::ApplyDefaults(CheckpointFlags* flags) const {
  if (flags->state_dir.empty()) {
    return Status::InvalidArgument(
        "the job has exactly-once sinks, which commit at checkpoints: give --state-dir DIR (where "
        "checkpoints are "
        "kept)");
  }
  if (!flags->interval_ms) {
    flags->options.interval_ms = CheckpointOptions::ForJob(true).interval_ms;
    flags->interval_ms = flags->options.interval_ms;
  }
  if (flags->options.interval_ms <= 0) {
    return Status::InvalidArgument(
        "--checkpoint-interval: the job has exactly-once sinks, whose output becomes visible only "
        "when a checkpoint "
        "commits; checkpoints cannot be off");
  }
  if (flags->retained < 2) {
    return Status::InvalidArgument(
        "--retained-checkpoints: keep at least 2 with exactly-once sinks (the one last committed "
        "and the one being "
        "committed)");
  }
  return Status::Ok();
}

Status TxnSinks::Start(const JobOptions& options, CheckpointStorage* storage,
                       StateDirectory* state_dir) {
  storage_ = storage;
  state_dir_ = state_dir;
  const int64_t recorded = state_dir_ != nullptr ? state_dir_->committed() : 0;
  if (storage_ != nullptr) storage_->KeepCommitted(recorded);
  const CommitGroupSpec* spec = nullptr;
  uint32_t participants = 0;
  for (engine_detail::TxnSinkSubtask* s : subtasks_) {
    if (!s->in_group() && !options.instance.empty()) {
      return Status::InvalidArgument(fmt::format(
          "exactly-once sink '{}': --instance {}: an instance commits its input offsets in its "
          "Kafka transaction, and this sink commits on its own (e.g. files), so the two could "
          "disagree after a crash; use a Kafka sink, or an at-least-once sink",
          s->ctx().name, options.instance));
    }
    if (!s->in_group()) continue;
    const CommitGroupSpec& g = *s->spec().group;
    if (spec == nullptr) {
      spec = &g;
    } else if (g.key != spec->key) {
      return Status::InvalidArgument(
          fmt::format("exactly-once sink '{}': it commits with {}, another sink with {}; a job's "
                      "grouped exactly-once "
                      "sinks share one transaction, so they must write to one cluster",
                      s->ctx().name, g.key, spec->key));
    }
    ++participants;
  }
  if (spec == nullptr) return Status::Ok();
  CommitGroupContext ctx;
  ctx.job_id = options.job_id;
  ctx.instance = options.instance;
  ctx.checkpoints = options.checkpoint.options;
  ctx.cancel = subtasks_.front()->ctx().cancel;
  ctx.kafka_properties = &options.kafka_properties;
  Log(LogLevel::kInfo, "txn", "starting the commit group",
      {{"job_id", ctx.job_id},
       {"group", spec->key},
       {"participants", std::to_string(participants)}});
  auto group = spec->start(ctx, participants);
  if (!group.ok()) return group.status();
  group_ = std::move(group).value();
  const int64_t c = group_->last_committed();
  Log(LogLevel::kInfo, "txn", "commit group ready",
      {{"group", group_->Describe()}, {"last_committed", std::to_string(c)}});
  if (recorded > c) {
    // The group lost the job's progress (a topic deleted or expired, another cluster): restoring
    // anything would duplicate or lose output, and discarding the checkpoints would be final.
    return Status::InvalidArgument(fmt::format(
        "job `{}`: {} says checkpoint {} was committed last, but state directory '{}' recorded "
        "that checkpoint {} was; its record of progress was lost (a Kafka progress topic deleted "
        "or expired) or this is another cluster. Nothing was changed. Point the job at the "
        "cluster it wrote to, or start a new job with its own --job-id and --state-dir",
        options.job_id, group_->Describe(), c, state_dir_->path(), recorded));
  }
  if (c == 0 && state_dir_ != nullptr && state_dir_->claimed_unrecorded_checkpoints()) {
    // Checkpoints from a version that did not record job ids, and no progress under this id: the
    // job most likely ran under another id (the binary's name). Discarding them and starting
    // fresh would write its whole input into the output again.
    return Status::InvalidArgument(fmt::format(
        "state directory '{}' holds checkpoints written without a job id record, and {} has no "
        "committed progress for job `{}`: the job most likely ran under another id (earlier "
        "versions took the binary's file name). Nothing was changed. Run with --job-id <that "
        "id>; to start over, give the job a new --state-dir",
        state_dir_->path(), group_->Describe(), options.job_id));
  }
  if (storage_ == nullptr) return Status::Ok();
  // Checkpoints after C completed but were never committed: their output was aborted, and keeping
  // them would let retention delete chk-C in favour of checkpoints that can never be restored.
  Log(LogLevel::kInfo, "txn", "discarding checkpoints the group never committed",
      {{"state_dir", storage_->state_dir()}, {"newer_than", std::to_string(c)}});
  FLOW_RETURN_IF_ERROR(storage_->DiscardNewerThan(c));
  storage_->KeepCommitted(c);
  return Status::Ok();
}

Result<RestoreSelection> TxnSinks::SelectRestore(const CheckpointFlags& flags,
                                                 const JobCheckpointInfo& info) const {
  if (!group_) {
    auto sel = ResolveRestore(flags.state_dir, flags.restore, info);
    if (!sel.ok()) return sel;
    const int64_t c = state_dir_ != nullptr ? state_dir_->committed() : 0;
    const int64_t r = sel->point ? sel->point->metadata.checkpoint_id : 0;
    if (r >= c) return sel;
    // The files of epochs up to C are visible: restoring before C would write them again.
    std::string what = fmt::format("restoring checkpoint {}", r);
    if (r == 0) {
      what = flags.restore == "none" ? "--restore none: starting from nothing"
                                     : "no usable checkpoint: starting from nothing";
    }
    return Status::InvalidArgument(fmt::format(
        "{} would write again the output of checkpoints up to {}, which the exactly-once sinks "
        "already committed (state directory '{}'). Restore chk-{} or a newer checkpoint (see the "
        "warnings above if it was skipped), or start a new job with its own --state-dir and output",
        what, c, flags.state_dir, c));
  }
  const int64_t c = group_->last_committed();
  const std::string why = fmt::format(
      "the last checkpoint {} committed is {}; restoring any other would duplicate or lose output",
      group_->Describe(), c);
  RestoreSelection sel;
  if (flags.restore == "none") {
    if (c != 0) {
      return Status::InvalidArgument(
          fmt::format("--restore none: {} (to start over from scratch, use a new --job-id)", why));
    }
    return sel;
  }
  std::string path = flags.restore;
  if (path.empty()) {
    if (c == 0) return sel;
    path = (std::filesystem::path(flags.state_dir) / CheckpointDirName(c)).string();
  }
  auto point = VerifyCheckpoint(path);
  if (!point.ok()) {
    return Status(point.status().code(),
                  fmt::format("cannot restore {}: {}; {}", path, point.status().message(), why));
  }
  if (point->metadata.checkpoint_id != c) {
    return Status::InvalidArgument(fmt::format("--restore {}: it is checkpoint {}; {}", path,
                                               point->metadata.checkpoint_id, why));
  }
  FLOW_RETURN_IF_ERROR(CheckCompatible(point->metadata, info, path));
  sel.point = std::move(point).value();
  return sel;
}

Status TxnSinks::Recover(int64_t restored_id, CheckpointCoordinator* coordinator,
                         std::function<void(const Status&)> fail) {
  fail_ = std::move(fail);
  committed_ = restored_id;
  uint32_t participant = 0;
  for (engine_detail::TxnSinkSubtask* s : subtasks_) {
    uint32_t p = s->in_group() ? participant++ : 0;
    FLOW_RETURN_IF_ERROR(s->Start(group_.get(), p, restored_id));
  }
  if (coordinator != nullptr) coordinator->AddListener(this);
  return Status::Ok();
}

int64_t TxnSinks::committed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return committed_;
}

void TxnSinks::FailWith(const Status& s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    failed_ = true;
  }
  Log(LogLevel::kError, "txn",
      s.code() == StatusCode::kFenced ? "another instance of the job took over" : "commit failed",
      {{"error", s.ToString()}});
  if (fail_) fail_(s);
}

void TxnSinks::OnCheckpointComplete(int64_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_ || id <= committed_) return;
  }
  const int64_t start = SteadyNowMs();
  // Finished subtasks did not see barrier `id`; their data was sealed when they finished.
  for (engine_detail::TxnSinkSubtask* s : subtasks_) {
    if (Status st = s->PreCommitIfFinished(id); !st.ok()) return FailWith(st);
  }
  // The non-resumable participant first: a crash after it is repaired by the files' Recover.
  if (group_) {
    if (Status st = group_->Commit(id); !st.ok()) {
      return FailWith(
          Status(st.code(), fmt::format("committing checkpoint {}: {}", id, st.message())));
    }
  }
  for (engine_detail::TxnSinkSubtask* s : subtasks_) {
    if (s->in_group()) continue;
    if (Status st = s->Commit(id); !st.ok()) {
      return FailWith(Status(st.code(), fmt::format("committing checkpoint {} of sink '{}': {}", id,
                                                    s->ctx().name, st.message())));
    }
  }
  // Recorded after the commit: the record must never claim more than the group (Start compares).
  if (state_dir_ != nullptr) {
    if (Status st = state_dir_->RecordCommitted(id); !st.ok()) {
      return FailWith(Status(
          st.code(), fmt::format("recording committed checkpoint {}: {}", id, st.message())));
    }
  }
  if (storage_ != nullptr) storage_->KeepCommitted(id);
  Log(LogLevel::kDebug, "txn", "committed",
      {{"id", std::to_string(id)}, {"ms", std::to_string(SteadyNowMs() - start)}});
  std::lock_guard<std::mutex> lock(mu_);
  committed_ = id;
}

void TxnSinks::Finish(CheckpointCoordinator* coordinator, bool bounded_end) {
  if (bounded_end && coordinator != nullptr) {
    // Every task finished, so the coordinator completes this checkpoint at once (all acks are
    // "finished") and delivers it here, on this thread.
    Result<int64_t> id = Status::Internal("unset");
    for (int attempt = 0; attempt < 600; ++attempt) {
      id = coordinator->Trigger();
      if (id.ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    bool done = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done = failed_ || (id.ok() && committed_ >= *id);
    }
    if (!id.ok()) {
      FailWith(Status(id.status().code(), "final checkpoint: " + id.status().message()));
    } else if (!done) {
      FailWith(Status::Internal(fmt::format("final checkpoint {} did not complete", *id)));
    } else {
      Log(LogLevel::kInfo, "txn", "final checkpoint committed", {{"id", std::to_string(*id)}});
    }
  }
  for (engine_detail::TxnSinkSubtask* s : subtasks_) s->Close();
  // Aborts the open (empty, or stopped job's uncommitted) transaction at once.
  group_.reset();
}

}  // namespace flow::rt
