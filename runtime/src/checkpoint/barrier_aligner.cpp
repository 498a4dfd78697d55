#include "flow/runtime/checkpoint/barrier_aligner.h"

#include <cassert>
#include <string>

namespace flow::rt {

const char* AlignEventName(AlignEvent e) {
  switch (e) {
    case AlignEvent::kData:
      return "data";
    case AlignEvent::kBarrier:
      return "barrier";
    case AlignEvent::kCancel:
      return "cancel";
    case AlignEvent::kEnd:
      return "end";
  }
  return "?";
}

const char* AlignActionKindName(AlignActionKind k) {
  switch (k) {
    case AlignActionKind::kProcess:
      return "process";
    case AlignActionKind::kBlock:
      return "block";
    case AlignActionKind::kUnblockAll:
      return "unblock_all";
    case AlignActionKind::kTrigger:
      return "trigger";
    case AlignActionKind::kAbort:
      return "abort";
    case AlignActionKind::kIgnore:
      return "ignore";
    case AlignActionKind::kProcessAndRecord:
      return "process_and_record";
    case AlignActionKind::kCompleteUnaligned:
      return "complete_unaligned";
  }
  return "?";
}

const char* AlignmentPhaseName(AlignmentPhase p) {
  switch (p) {
    case AlignmentPhase::kIdle:
      return "idle";
    case AlignmentPhase::kAligning:
      return "aligning";
    case AlignmentPhase::kUnaligned:
      return "unaligned";
  }
  return "?";
}

namespace {
AlignAction Act(AlignActionKind kind, size_t ch, int64_t id = 0,
                AlignAbortCause cause = AlignAbortCause::kNone) {
  AlignAction a;
  a.kind = kind;
  a.channel = ch;
  a.checkpoint = id;
  a.cause = cause;
  return a;
}
}  // namespace

// No alignment in progress: every channel is readable.
class IdleState final : public AlignmentState {
 public:
  AlignmentPhase OnData(BarrierAligner&, size_t ch, std::vector<AlignAction>* out) const override {
    out->push_back(Act(AlignActionKind::kProcess, ch));
    return AlignmentPhase::kIdle;
  }
  AlignmentPhase OnBarrier(BarrierAligner& a, size_t ch, int64_t id,
                           std::vector<AlignAction>* out) const override {
    if (id <= a.current_) {  // stale or a duplicate of the checkpoint already triggered
      out->push_back(Act(AlignActionKind::kIgnore, ch, id));
      return AlignmentPhase::kIdle;
    }
    a.StartAlignment(ch, id, out);
    return a.phase_;
  }
  AlignmentPhase OnCancel(BarrierAligner& a, size_t ch, int64_t id,
                          std::vector<AlignAction>* out) const override {
    if (id <= a.current_) {
      out->push_back(Act(AlignActionKind::kIgnore, ch, id));
      return AlignmentPhase::kIdle;
    }
    // Cancelled before its first barrier reached us: decline it and tell downstream.
    a.Abort(id, AlignAbortCause::kCancelMarker, out);
    return AlignmentPhase::kIdle;
  }
  AlignmentPhase OnEnd(BarrierAligner&, size_t ch, std::vector<AlignAction>* out) const override {
    out->push_back(Act(AlignActionKind::kProcess, ch));
    return AlignmentPhase::kIdle;
  }
};

// Barrier current_ arrived on the blocked channels; waiting for it on the other live ones.
class AligningState final : public AlignmentState {
 public:
  AlignmentPhase OnData(BarrierAligner&, size_t ch, std::vector<AlignAction>* out) const override {
    out->push_back(Act(AlignActionKind::kProcess, ch));
    return AlignmentPhase::kAligning;
  }
  AlignmentPhase OnBarrier(BarrierAligner& a, size_t ch, int64_t id,
                           std::vector<AlignAction>* out) const override {
    if (id < a.current_) {
      out->push_back(Act(AlignActionKind::kIgnore, ch, id));
      return AlignmentPhase::kAligning;
    }
    if (id == a.current_) {
      a.Block(ch, out);
      if (a.AllLiveBlocked()) a.Trigger(out);
      return a.phase_;
    }
    // A newer barrier overtook this alignment: the older checkpoint cannot complete here.
    a.Abort(a.current_, AlignAbortCause::kNewerBarrier, out);
    a.StartAlignment(ch, id, out);
    return a.phase_;
  }
  AlignmentPhase OnCancel(BarrierAligner& a, size_t ch, int64_t id,
                          std::vector<AlignAction>* out) const override {
    if (id < a.current_) {
      out->push_back(Act(AlignActionKind::kIgnore, ch, id));
      return AlignmentPhase::kAligning;
    }
    a.Abort(a.current_, AlignAbortCause::kCancelMarker, out);
    if (id > a.current_) a.Abort(id, AlignAbortCause::kCancelMarker, out);
    return AlignmentPhase::kIdle;
  }
  AlignmentPhase OnEnd(BarrierAligner& a, size_t ch, std::vector<AlignAction>* out) const override {
    out->push_back(Act(AlignActionKind::kProcess, ch));
    // The ended channel no longer has to deliver the barrier; it may have been the last one.
    if (a.AllLiveBlocked()) a.Trigger(out);
    return a.phase_;
  }
};

// Checkpoint current_ was triggered before every barrier arrived; data of the channels that still
// owe the barrier is processed and recorded until the barrier shows up.
class UnalignedState final : public AlignmentState {
 public:
  AlignmentPhase OnData(BarrierAligner& a, size_t ch,
                        std::vector<AlignAction>* out) const override {
    out->push_back(
        Act(a.recording_[ch] ? AlignActionKind::kProcessAndRecord : AlignActionKind::kProcess, ch));
    return AlignmentPhase::kUnaligned;
  }
  AlignmentPhase OnBarrier(BarrierAligner& a, size_t ch, int64_t id,
                           std::vector<AlignAction>* out) const override {
    if (id < a.current_ || (id == a.current_ && !a.recording_[ch])) {  // stale or duplicate
      out->push_back(Act(AlignActionKind::kIgnore, ch, id));
      return AlignmentPhase::kUnaligned;
    }
    if (id == a.current_) {
      a.StopRecording(ch, out);
      return a.phase_;
    }
    a.Abort(a.current_, AlignAbortCause::kNewerBarrier, out);
    a.StartAlignment(ch, id, out);
    return a.phase_;
  }
  AlignmentPhase OnCancel(BarrierAligner& a, size_t ch, int64_t id,
                          std::vector<AlignAction>* out) const override {
    if (id < a.current_) {
      out->push_back(Act(AlignActionKind::kIgnore, ch, id));
      return AlignmentPhase::kUnaligned;
    }
    a.Abort(a.current_, AlignAbortCause::kCancelMarker, out);
    if (id > a.current_) a.Abort(id, AlignAbortCause::kCancelMarker, out);
    return AlignmentPhase::kIdle;
  }
  AlignmentPhase OnEnd(BarrierAligner& a, size_t ch, std::vector<AlignAction>* out) const override {
    out->push_back(Act(AlignActionKind::kProcess, ch));
    // Everything the channel will ever send has been recorded.
    if (a.recording_[ch]) a.StopRecording(ch, out);
    return a.phase_;
  }
};

namespace {
const IdleState kIdleState;
const AligningState kAligningState;
const UnalignedState kUnalignedState;
}  // namespace

BarrierAligner::BarrierAligner(size_t channels, int64_t last_checkpoint)
    : blocked_(channels, false),
      ended_(channels, false),
      recording_(channels, false),
      current_(last_checkpoint) {
  assert(channels >= 1 && "BarrierAligner needs at least one channel");
}

Status BarrierAligner::OnElement(size_t channel, AlignEvent event, int64_t value,
                                 std::vector<AlignAction>* out) {
  out->clear();
  if (channel >= blocked_.size()) {
    return Status::Internal("barrier alignment: element on unknown channel " +
                            std::to_string(channel) + " of " + std::to_string(blocked_.size()));
  }
  if (blocked_[channel]) {
    return Status::Internal(std::string("barrier alignment: ") + AlignEventName(event) +
                            " read from channel " + std::to_string(channel) +
                            ", which is blocked while aligning checkpoint " +
                            std::to_string(current_));
  }
  if (ended_[channel]) {
    return Status::Internal(std::string("barrier alignment: ") + AlignEventName(event) +
                            " read from channel " + std::to_string(channel) +
                            " after its end of input");
  }
  const AlignmentState& state =
      phase_ == AlignmentPhase::kIdle       ? static_cast<const AlignmentState&>(kIdleState)
      : phase_ == AlignmentPhase::kAligning ? static_cast<const AlignmentState&>(kAligningState)
                                            : kUnalignedState;
  switch (event) {
    case AlignEvent::kData:
      phase_ = state.OnData(*this, channel, out);
      break;
    case AlignEvent::kBarrier:
      phase_ = state.OnBarrier(*this, channel, value, out);
      break;
    case AlignEvent::kCancel:
      phase_ = state.OnCancel(*this, channel, value, out);
      break;
    case AlignEvent::kEnd:
      ended_[channel] = true;
      ++ended_count_;
      phase_ = state.OnEnd(*this, channel, out);
      break;
  }
  return Status::Ok();
}

void BarrierAligner::OnAlignmentTimeout(std::vector<AlignAction>* out) {
  out->clear();
  if (phase_ != AlignmentPhase::kAligning) return;
  for (size_t c = 0; c < blocked_.size(); ++c) {
    if (!blocked_[c] && !ended_[c]) {
      recording_[c] = true;
      ++recording_count_;
    }
  }
  AlignAction t = Act(AlignActionKind::kTrigger, 0, current_);
  t.unaligned = true;
  out->push_back(t);
  UnblockAll(out);
  phase_ = AlignmentPhase::kUnaligned;
}

void BarrierAligner::StopRecording(size_t ch, std::vector<AlignAction>* out) {
  recording_[ch] = false;
  if (--recording_count_ > 0) return;
  out->push_back(Act(AlignActionKind::kCompleteUnaligned, 0, current_));
  phase_ = AlignmentPhase::kIdle;
}

void BarrierAligner::StartAlignment(size_t ch, int64_t id, std::vector<AlignAction>* out) {
  current_ = id;
  phase_ = AlignmentPhase::kAligning;
  // A task with a single live channel never blocks: the barrier is complete on arrival.
  if (live_channels() > 1) Block(ch, out);
  if (live_channels() == 1 || AllLiveBlocked()) Trigger(out);
}

void BarrierAligner::Block(size_t ch, std::vector<AlignAction>* out) {
  blocked_[ch] = true;
  ++blocked_count_;
  out->push_back(Act(AlignActionKind::kBlock, ch));
}

void BarrierAligner::UnblockAll(std::vector<AlignAction>* out) {
  if (blocked_count_ == 0) return;
  blocked_.assign(blocked_.size(), false);
  blocked_count_ = 0;
  out->push_back(Act(AlignActionKind::kUnblockAll, 0));
}

void BarrierAligner::Trigger(std::vector<AlignAction>* out) {
  out->push_back(Act(AlignActionKind::kTrigger, 0, current_));
  UnblockAll(out);
  phase_ = AlignmentPhase::kIdle;
}

void BarrierAligner::Abort(int64_t id, AlignAbortCause cause, std::vector<AlignAction>* out) {
  out->push_back(Act(AlignActionKind::kAbort, 0, id, cause));
  UnblockAll(out);
  if (recording_count_ > 0) {  // an unaligned checkpoint's recording ends with it
    recording_.assign(recording_.size(), false);
    recording_count_ = 0;
  }
  if (id > current_) current_ = id;
  phase_ = AlignmentPhase::kIdle;
}

}  // namespace flow::rt
