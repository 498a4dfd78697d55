#include "flow/runtime/engine/task.h"

#include <algorithm>
#include <exception>
#include <mutex>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/barrier_aligner.h"

namespace flow::rt {

Task::Task(std::string name, uint32_t subtask)
    : name_(std::move(name)), subtask_(subtask), checkpoints_(name_, subtask_, &members_) {}

Task::~Task() = default;

Status Task::Run() {
  Status status;
  try {
    const int64_t opened_at = SteadyNowMs();
    // members_ lists downstream consumers first: a chain is ready before anything flows into it.
    for (size_t i = 0; i < members_.size() && status.ok(); ++i) status = members_[i]->Open();
    if (status.ok() && checkpoints_.HasStateToRestore()) {
      status = checkpoints_.RestoreMembers();
      if (status.ok() && restore_ms_ != nullptr) restore_ms_->Set(SteadyNowMs() - opened_at);
    }
    if (status.ok()) status = Loop();
  } catch (const std::exception& e) {
    status = Status::Internal(std::string("exception: ") + e.what());
  } catch (...) {
    status = Status::Internal("unknown exception");
  }
  // The job hears of the failure first: its cancel flag is then set while the operators close
  // (a Kafka source of an instance stays in its group), and the job's error is this one, not the
  // checkpoint failure the coordinator reports for it.
  if (!status.ok() && on_failure_) on_failure_(status);
  checkpoints_.End(status, input_finished_);
  CloseSource();
  for (auto it = members_.rbegin(); it != members_.rend(); ++it) (*it)->Close();
  return status;
}

namespace {
// Registers gate->Wake() with the timers' clock for the life of an input task's loop.
class ClockWakerGuard {
 public:
  ClockWakerGuard(TaskTimers* timers, InputGate* gate)
      : clock_(timers ? timers->clock() : nullptr) {
    if (clock_ != nullptr) id_ = clock_->AddWaker([gate] { gate->Wake(); });
  }
  ~ClockWakerGuard() {
    if (clock_ != nullptr) clock_->RemoveWaker(id_);
  }
  ClockWakerGuard(const ClockWakerGuard&) = delete;
  ClockWakerGuard& operator=(const ClockWakerGuard&) = delete;

 private:
  Clock* clock_;
  uint64_t id_ = 0;
};
}  // namespace

Status InputTask::Loop() {
  const size_t n = gate_->size();
  if (n == 0) return Status::Internal("input task without input channels");
  MarkStarted();  // Run opened and restored the members before the loop
  WatermarkCombiner combiner(n);
  // Barriers older than the restored checkpoint can no longer arrive; ids only grow.
  BarrierAligner aligner(n, checkpoints().restored_checkpoint_id());
  std::vector<AlignAction> actions;
  actions.reserve(8);
  std::vector<bool> ended(n, false);
  size_t ended_count = 0;
  bool stopped = false;  // some channel ended because the job was stopped, not drained
  bool all_idle = false;
  int64_t align_start = -1;  // steady ms of the first kBlock of the current alignment
  // A clock that jumps (tests' ManualClock) wakes the gate so due timers fire without input.
  TaskTimers* timers = this->timers();
  ClockWakerGuard waker(timers, gate_.get());
  bool quiet_pending = false;  // elements or timer output since the chain last heard "quiet"
  // The quiet period counts from the moment the input ran dry: while elements are ready the
  // clock is not read at all (it was, several times per element); the first time none is ready,
  // the clock read that computes the wait also dates the last element.
  int64_t last_element = SteadyNowMs();
  bool elements_since_dated = false;
  while (true) {
    if (timers != nullptr && !timers->empty() && timers->WaitMs() == 0) {
      quiet_pending = true;
      FLOW_RETURN_IF_ERROR(FireDueTimers());
    }
    if (gate_->cancelled()) return Status::Cancelled("input gate cancelled");
    std::optional<size_t> next = gate_->PollReady();
    if (!next) {
      const int64_t now = SteadyNowMs();
      if (elements_since_dated) {
        last_element = now;
        elements_since_dated = false;
      }
      // Wait for input, but no longer than the earliest timer or the end of a quiet period.
      int64_t wait_ms = timers != nullptr ? timers->WaitMs() : -1;  // -1: no timer
      if (quiet_pending) {
        const int64_t quiet_left = std::max<int64_t>(0, last_element + kInputQuietMs - now);
        wait_ms = wait_ms < 0 ? quiet_left : std::min(wait_ms, quiet_left);
      }
      if (wait_ms >= 0) {
        auto ready = gate_->WaitReadyFor(wait_ms);
        if (!ready.ok()) return ready.status();
        next = *ready;
      } else {
        auto ready = gate_->WaitReady();
        if (!ready.ok()) return ready.status();
        next = *ready;
      }
    }
    if (!next) {  // a timer may be due, or the input has been quiet long enough
      if (quiet_pending && SteadyNowMs() - last_element >= kInputQuietMs) {
        quiet_pending = false;
        FLOW_RETURN_IF_ERROR(NotifyInputQuiet());
      }
      continue;
    }
    quiet_pending = true;
    elements_since_dated = true;
    const size_t ch = *next;
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
          FLOW_RETURN_IF_ERROR(checkpoints().Checkpoint(
              a.checkpoint, nullptr, [&] { return head_->OnBarrier(a.checkpoint); }, aligned_ms));
          break;
        }
        case AlignActionKind::kAbort:
          align_start = -1;
          checkpoints().DeclineCheckpoint(a.checkpoint,
                                          a.cause == AlignAbortCause::kNewerBarrier
                                              ? "alignment overtaken by a newer barrier"
                                              : "cancelled upstream");
          FLOW_RETURN_IF_ERROR(head_->OnCancelCheckpoint(a.checkpoint));
          break;
        case AlignActionKind::kIgnore:
          break;
        case AlignActionKind::kProcessAndRecord:
        case AlignActionKind::kCompleteUnaligned:
          // The engine never calls OnAlignmentTimeout, so the aligner cannot ask for these.
          return Status::Internal(
              fmt::format("input task '{}' subtask {}: unexpected alignment action {}", name(),
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
