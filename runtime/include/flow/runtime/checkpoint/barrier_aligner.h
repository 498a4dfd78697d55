#pragma once
// BarrierAligner: the task-side barrier alignment of an input task, as an explicit state machine
// (docs/checkpoints.md has the full state table).
//
// The input task feeds it every element it reads, per channel: data (record batch, watermark,
// idle/active marker), barrier N, cancel marker N, end of input. The aligner answers with
// actions the task executes in order:
//   kProcess        handle the element as usual (data, end of input)
//   kBlock          stop reading `channel` until kUnblockAll (InputGate::Block)
//   kUnblockAll     read every channel again (InputGate::Unblock on all)
//   kTrigger        snapshot every operator of the chain for `checkpoint` now, then forward
//                   barrier `checkpoint` downstream, then acknowledge it to the coordinator
//   kAbort          checkpoint `checkpoint` is abandoned by this task: decline it to the
//                   coordinator and forward a cancel marker for it downstream
//   kIgnore         drop the element (stale or duplicate barrier/cancel marker)
//   kProcessAndRecord  (unaligned) handle the element AND record it as in-flight data of the
//                   checkpoint being completed: it precedes the barrier on its channel but
//                   arrived after the snapshot, so a restore must replay it
//   kCompleteUnaligned (unaligned) every channel delivered barrier `checkpoint`: the recorded
//                   in-flight data is complete; write it and acknowledge
//
// States:
//   kIdle      no alignment in progress (all channels readable)
//   kAligning  barrier N arrived on some channels; those are blocked until it arrived on every
//              channel that has not ended
//   kUnaligned after OnAlignmentTimeout: N was triggered without waiting (kTrigger with
//              unaligned = true), all channels are readable, and data of channels that have not
//              delivered barrier N yet is recorded until they do
// A channel that ended counts as aligned (it will send nothing more, so all its data is before
// the barrier). A single live channel triggers at once (no blocking). Barrier M > N while
// aligning N aborts N and starts M. Barriers and cancel markers <= the last checkpoint this task
// triggered or aborted are stale and ignored.
//
// Threading: one input task thread. Never allocates after construction on the data path.
// Errors: an element from a blocked or ended channel, or an unknown channel, means the caller broke
// the contract; OnElement returns Internal naming the channel and state.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "flow/runtime/common/status.h"

namespace flow::rt {

enum class AlignEvent { kData, kBarrier, kCancel, kEnd };
enum class AlignActionKind {
  kProcess,
  kBlock,
  kUnblockAll,
  kTrigger,
  kAbort,
  kIgnore,
  kProcessAndRecord,
  kCompleteUnaligned,
};
enum class AlignmentPhase { kIdle, kAligning, kUnaligned };
// Why an alignment was abandoned (kAbort), for the decline message.
enum class AlignAbortCause { kNone, kNewerBarrier, kCancelMarker };

const char* AlignEventName(AlignEvent e);
const char* AlignActionKindName(AlignActionKind k);
const char* AlignmentPhaseName(AlignmentPhase p);

struct AlignAction {
  AlignActionKind kind = AlignActionKind::kProcess;
  size_t channel = 0;      // kBlock: the channel to block; kProcess/kIgnore: the input channel
  int64_t checkpoint = 0;  // kTrigger, kAbort
  AlignAbortCause cause = AlignAbortCause::kNone;  // kAbort
  bool unaligned = false;  // kTrigger: snapshot now, in-flight data follows (kProcessAndRecord)
  bool operator==(const AlignAction&) const = default;
};

class BarrierAligner;

// One state of the machine: handles each event and returns the next phase. Stateless; the data
// they work on (blocked/ended channels, current checkpoint) lives in the aligner.
class AlignmentState {
 public:
  virtual ~AlignmentState() = default;
  virtual AlignmentPhase OnData(BarrierAligner& a, size_t ch,
                                std::vector<AlignAction>* out) const = 0;
  virtual AlignmentPhase OnBarrier(BarrierAligner& a, size_t ch, int64_t id,
                                   std::vector<AlignAction>* out) const = 0;
  virtual AlignmentPhase OnCancel(BarrierAligner& a, size_t ch, int64_t id,
                                  std::vector<AlignAction>* out) const = 0;
  virtual AlignmentPhase OnEnd(BarrierAligner& a, size_t ch,
                               std::vector<AlignAction>* out) const = 0;
};

class BarrierAligner {
 public:
  // `channels` >= 1. `last_checkpoint`: barriers <= it are stale (after a restore: restored id).
  explicit BarrierAligner(size_t channels, int64_t last_checkpoint = 0);

  // Clears *out and appends the actions for one element read from `channel`. `value` is the
  // checkpoint id for kBarrier/kCancel, ignored otherwise.
  [[nodiscard]] Status OnElement(size_t channel, AlignEvent event, int64_t value,
                                 std::vector<AlignAction>* out);
  // The engine measured that the current alignment took longer than its alignment timeout:
  // switches to an unaligned checkpoint (kTrigger unaligned, kUnblockAll, then
  // kProcessAndRecord for the channels still owing the barrier). No actions unless aligning.
  void OnAlignmentTimeout(std::vector<AlignAction>* out);

  AlignmentPhase phase() const { return phase_; }
  // The checkpoint being aligned (kAligning) or the last one triggered/aborted (kIdle).
  int64_t current_checkpoint() const { return current_; }
  bool blocked(size_t channel) const { return blocked_[channel]; }
  // Unaligned: the channel has not delivered the barrier yet; its data is being recorded.
  bool recording(size_t channel) const { return recording_[channel]; }
  bool ended(size_t channel) const { return ended_[channel]; }
  size_t channels() const { return blocked_.size(); }
  size_t live_channels() const { return blocked_.size() - ended_count_; }

 private:
  friend class IdleState;
  friend class AligningState;
  friend class UnalignedState;

  // Shared steps the states compose.
  void StartAlignment(size_t ch, int64_t id, std::vector<AlignAction>* out);  // -> phase_ set
  void Block(size_t ch, std::vector<AlignAction>* out);
  void UnblockAll(std::vector<AlignAction>* out);
  bool AllLiveBlocked() const { return blocked_count_ == live_channels(); }
  void Trigger(std::vector<AlignAction>* out);  // trigger current_, unblock all, phase_ = kIdle
  void Abort(int64_t id, AlignAbortCause cause, std::vector<AlignAction>* out);

  // Clears the recording flag of `ch`; completes the unaligned checkpoint when none is left.
  void StopRecording(size_t ch, std::vector<AlignAction>* out);

  std::vector<bool> blocked_;
  std::vector<bool> ended_;
  std::vector<bool> recording_;
  size_t blocked_count_ = 0;
  size_t recording_count_ = 0;
  size_t ended_count_ = 0;
  int64_t current_;
  AlignmentPhase phase_ = AlignmentPhase::kIdle;
};

}  // namespace flow::rt
