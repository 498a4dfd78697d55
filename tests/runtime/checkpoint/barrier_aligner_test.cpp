// Barrier alignment as tables: each row feeds one element from one channel and states the actions
// expected, which channels are blocked afterwards ('X' = blocked, '.' = readable, 'E' = ended)
// and the phase. A second group runs scripted per-channel sequences through a simulated gate
// that reads only unblocked channels, and checks what is processed in which order.

#include <deque>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "flow/runtime/checkpoint/barrier_aligner.h"

namespace flow::rt {
namespace {

constexpr AlignEvent D = AlignEvent::kData;
constexpr AlignEvent B = AlignEvent::kBarrier;
constexpr AlignEvent C = AlignEvent::kCancel;
constexpr AlignEvent E = AlignEvent::kEnd;
// Not an element: the row calls OnAlignmentTimeout (channel and id are unused).
constexpr AlignEvent kTimeout = static_cast<AlignEvent>(99);
constexpr AlignmentPhase kUnaligned = AlignmentPhase::kUnaligned;
constexpr AlignmentPhase kIdle = AlignmentPhase::kIdle;
constexpr AlignmentPhase kAligning = AlignmentPhase::kAligning;

struct Row {
  size_t ch;
  AlignEvent ev;
  int64_t id;
  std::string actions;  // e.g. "process(0) block(1) trigger(3) unblock abort(2,newer) ignore(0)"
  std::string channels;
  AlignmentPhase phase;
};

// Appends pieces one by one: GCC 12 warns falsely (-Wrestrict) on `"literal" + std::string`.
std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s.append(p);
  return s;
}

std::string Render(const std::vector<AlignAction>& actions) {
  std::string s;
  for (const AlignAction& a : actions) {
    if (!s.empty()) s.append(" ");
    std::string ch = std::to_string(a.channel);
    std::string id = std::to_string(a.checkpoint);
    switch (a.kind) {
      case AlignActionKind::kProcess:
        s.append(Cat({"process(", ch, ")"}));
        break;
      case AlignActionKind::kBlock:
        s.append(Cat({"block(", ch, ")"}));
        break;
      case AlignActionKind::kUnblockAll:
        s.append("unblock");
        break;
      case AlignActionKind::kTrigger:
        s.append(Cat({"trigger(", id, a.unaligned ? ",unaligned)" : ")"}));
        break;
      case AlignActionKind::kProcessAndRecord:
        s.append(Cat({"record(", ch, ")"}));
        break;
      case AlignActionKind::kCompleteUnaligned:
        s.append(Cat({"complete(", id, ")"}));
        break;
      case AlignActionKind::kAbort:
        s.append(Cat({"abort(", id, ",",
                      a.cause == AlignAbortCause::kNewerBarrier ? "newer" : "cancel", ")"}));
        break;
      case AlignActionKind::kIgnore:
        s.append(Cat({"ignore(", ch, ")"}));
        break;
    }
  }
  return s;
}

std::string Channels(const BarrierAligner& a) {
  std::string s;
  for (size_t i = 0; i < a.channels(); ++i)
    s += a.ended(i) ? 'E' : a.blocked(i) ? 'X' : a.recording(i) ? 'R' : '.';
  return s;
}

void RunTable(size_t channels, const std::vector<Row>& rows, int64_t last_checkpoint = 0) {
  BarrierAligner aligner(channels, last_checkpoint);
  std::vector<AlignAction> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    SCOPED_TRACE(
        Cat({"row ", std::to_string(i), ": channel ", std::to_string(r.ch), " ",
             r.ev == kTimeout ? "timeout" : AlignEventName(r.ev), " ", std::to_string(r.id)}));
    if (r.ev == kTimeout) {
      aligner.OnAlignmentTimeout(&out);
    } else {
      ASSERT_TRUE(aligner.OnElement(r.ch, r.ev, r.id, &out).ok());
    }
    EXPECT_EQ(Render(out), r.actions);
    EXPECT_EQ(Channels(aligner), r.channels);
    EXPECT_EQ(aligner.phase(), r.phase);
  }
}

TEST(BarrierAligner, ThreeChannelsAlignThenTrigger) {
  RunTable(3, {
                  {0, D, 0, "process(0)", "...", kIdle},
                  {1, B, 1, "block(1)", ".X.", kAligning},
                  {0, D, 0, "process(0)", ".X.", kAligning},
                  {2, D, 0, "process(2)", ".X.", kAligning},
                  {0, B, 1, "block(0)", "XX.", kAligning},
                  {2, D, 0, "process(2)", "XX.", kAligning},
                  {2, B, 1, "block(2) trigger(1) unblock", "...", kIdle},
                  {1, D, 0, "process(1)", "...", kIdle},
              });
}

TEST(BarrierAligner, SingleChannelTriggersImmediatelyWithoutBlocking) {
  RunTable(1, {
                  {0, D, 0, "process(0)", ".", kIdle},
                  {0, B, 1, "trigger(1)", ".", kIdle},
                  {0, D, 0, "process(0)", ".", kIdle},
                  {0, B, 2, "trigger(2)", ".", kIdle},
                  {0, B, 2, "ignore(0)", ".", kIdle},  // duplicate
              });
}

TEST(BarrierAligner, EndedChannelCountsAsAligned) {
  RunTable(3, {
                  {2, E, 0, "process(2)", "..E", kIdle},
                  {0, B, 1, "block(0)", "X.E", kAligning},
                  {1, B, 1, "block(1) trigger(1) unblock", "..E", kIdle},
              });
}

TEST(BarrierAligner, ChannelEndingWhileAligningCompletesTheAlignment) {
  RunTable(3, {
                  {0, B, 4, "block(0)", "X..", kAligning},
                  {1, B, 4, "block(1)", "XX.", kAligning},
                  {2, D, 0, "process(2)", "XX.", kAligning},
                  {2, E, 0, "process(2) trigger(4) unblock", "..E", kIdle},
              });
}

TEST(BarrierAligner, OnlyOneLiveChannelLeftTriggersWithoutBlocking) {
  RunTable(2, {
                  {1, E, 0, "process(1)", ".E", kIdle},
                  {0, B, 1, "trigger(1)", ".E", kIdle},
              });
}

TEST(BarrierAligner, NewerBarrierAbortsCurrentAlignmentAndStartsNext) {
  RunTable(3, {
                  {0, B, 1, "block(0)", "X..", kAligning},
                  {1, B, 2, "abort(1,newer) unblock block(1)", ".X.", kAligning},
                  {0, D, 0, "process(0)", ".X.", kAligning},
                  {0, B, 2, "block(0)", "XX.", kAligning},
                  {2, B, 1, "ignore(2)", "XX.", kAligning},  // stale: 1 was already abandoned
                  {2, B, 2, "block(2) trigger(2) unblock", "...", kIdle},
                  {0, B, 1, "ignore(0)", "...", kIdle},  // stale
              });
}

TEST(BarrierAligner, StaleBarriersAfterRestoreAreIgnored) {
  RunTable(2,
           {
               {0, B, 5, "ignore(0)", "..", kIdle},
               {1, B, 6, "block(1)", ".X", kAligning},
               {0, B, 6, "block(0) trigger(6) unblock", "..", kIdle},
           },
           /*last_checkpoint=*/5);
}

TEST(BarrierAligner, CancelMarkerAbortsAlignment) {
  RunTable(
      3, {
             {0, B, 3, "block(0)", "X..", kAligning},
             {1, C, 3, "abort(3,cancel) unblock", "...", kIdle},
             {1, B, 3, "ignore(1)", "...", kIdle},  // the late barrier of the cancelled checkpoint
             {2, C, 3, "ignore(2)", "...", kIdle},  // duplicate cancel marker
             {2, B, 4, "block(2)", "..X", kAligning},
         });
}

TEST(BarrierAligner, CancelForNewerCheckpointAbortsBoth) {
  RunTable(2, {
                  {0, B, 3, "block(0)", "X.", kAligning},
                  {1, C, 5, "abort(3,cancel) unblock abort(5,cancel)", "..", kIdle},
                  {0, B, 4, "ignore(0)", "..", kIdle},
              });
}

TEST(BarrierAligner, CancelBeforeAnyBarrierIsForwardedOnce) {
  RunTable(2, {
                  {0, C, 2, "abort(2,cancel)", "..", kIdle},
                  {1, C, 2, "ignore(1)", "..", kIdle},
                  {0, B, 2, "ignore(0)", "..", kIdle},
                  {1, B, 2, "ignore(1)", "..", kIdle},
              });
}

TEST(BarrierAligner, StaleCancelWhileAligningIsIgnored) {
  RunTable(2, {
                  {0, B, 4, "block(0)", "X.", kAligning},
                  {1, C, 3, "ignore(1)", "X.", kAligning},
                  {1, B, 4, "block(1) trigger(4) unblock", "..", kIdle},
              });
}

// Unaligned after an alignment timeout: the snapshot is taken at once; data that precedes the
// barrier on the late channels is processed and recorded until their barrier arrives.
TEST(BarrierAligner, AlignmentTimeoutSwitchesToUnaligned) {
  RunTable(3, {
                  {0, B, 1, "block(0)", "X..", kAligning},
                  {1, D, 0, "process(1)", "X..", kAligning},
                  {0, kTimeout, 0, "trigger(1,unaligned) unblock", ".RR", kUnaligned},
                  {0, D, 0, "process(0)", ".RR", kUnaligned},  // after its barrier: not in-flight
                  {1, D, 0, "record(1)", ".RR", kUnaligned},
                  {2, D, 0, "record(2)", ".RR", kUnaligned},
                  {1, B, 1, "", "..R", kUnaligned},
                  {1, D, 0, "process(1)", "..R", kUnaligned},
                  {0, B, 1, "ignore(0)", "..R", kUnaligned},  // duplicate
                  {2, B, 1, "complete(1)", "...", kIdle},
                  {2, D, 0, "process(2)", "...", kIdle},
                  {2, B, 1, "ignore(2)", "...", kIdle},
              });
}

TEST(BarrierAligner, UnalignedEndsByEndOfInputOrIsAbortedByNewerBarrier) {
  RunTable(3, {
                  {0, B, 1, "block(0)", "X..", kAligning},
                  {0, kTimeout, 0, "trigger(1,unaligned) unblock", ".RR", kUnaligned},
                  {1, E, 0, "process(1)", ".ER", kUnaligned},
                  {2, B, 2, "abort(1,newer) block(2)", ".EX", kAligning},
                  {0, B, 1, "ignore(0)", ".EX", kAligning},
                  {0, B, 2, "block(0) trigger(2) unblock", ".E.", kIdle},
              });
  RunTable(2, {
                  {0, B, 3, "block(0)", "X.", kAligning},
                  {0, kTimeout, 0, "trigger(3,unaligned) unblock", ".R", kUnaligned},
                  {1, E, 0, "process(1) complete(3)", ".E", kIdle},
              });
  RunTable(2, {
                  {0, B, 3, "block(0)", "X.", kAligning},
                  {0, kTimeout, 0, "trigger(3,unaligned) unblock", ".R", kUnaligned},
                  {0, C, 3, "abort(3,cancel)", "..", kIdle},
                  {1, D, 0, "process(1)", "..", kIdle},
              });
}

TEST(BarrierAligner, TimeoutOutsideAlignmentDoesNothing) {
  RunTable(2, {
                  {0, kTimeout, 0, "", "..", kIdle},
                  {0, D, 0, "process(0)", "..", kIdle},
              });
}

TEST(BarrierAligner, ReadingBlockedOrEndedChannelIsAnError) {
  BarrierAligner a(2);
  std::vector<AlignAction> out;
  ASSERT_TRUE(a.OnElement(0, B, 1, &out).ok());
  Status s = a.OnElement(0, D, 0, &out);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("channel 0, which is blocked while aligning checkpoint 1"),
            std::string::npos)
      << s.message();
  ASSERT_TRUE(a.OnElement(1, E, 0, &out).ok());
  s = a.OnElement(1, D, 0, &out);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("after its end of input"), std::string::npos) << s.message();
  s = a.OnElement(7, D, 0, &out);
  EXPECT_NE(s.message().find("unknown channel 7"), std::string::npos) << s.message();
}

// --- scripted per-channel sequences through a simulated gate ------------------------------

struct Item {
  AlignEvent ev;
  int64_t id;       // checkpoint for barriers/cancels
  std::string tag;  // name of a data element
};

// Reads round-robin from unblocked channels that have items, like InputGate::WaitReady, and logs
// processed data tags and triggered/aborted checkpoints.
std::vector<std::string> Simulate(std::vector<std::deque<Item>> channels,
                                  std::vector<std::string>* blocked_log) {
  BarrierAligner aligner(channels.size());
  std::vector<AlignAction> out;
  std::vector<std::string> log;
  size_t next = 0;
  while (true) {
    size_t ch = channels.size();
    for (size_t k = 0; k < channels.size(); ++k) {
      size_t c = (next + k) % channels.size();
      if (!aligner.blocked(c) && !channels[c].empty()) {
        ch = c;
        break;
      }
    }
    if (ch == channels.size()) break;
    next = ch + 1;
    Item item = channels[ch].front();
    channels[ch].pop_front();
    EXPECT_TRUE(aligner.OnElement(ch, item.ev, item.id, &out).ok());
    for (const AlignAction& a : out) {
      if (a.kind == AlignActionKind::kProcess && item.ev == D) log.push_back(item.tag);
      if (a.kind == AlignActionKind::kTrigger)
        log.push_back(Cat({"T", std::to_string(a.checkpoint)}));
      if (a.kind == AlignActionKind::kAbort)
        log.push_back(Cat({"A", std::to_string(a.checkpoint)}));
    }
    blocked_log->push_back(Channels(aligner));
  }
  return log;
}

TEST(BarrierAlignerScript, DataAfterBarrierWaitsUntilAlignmentCompletes) {
  std::vector<std::string> blocked;
  auto log = Simulate({{{D, 0, "a1"}, {B, 1, ""}, {D, 0, "a2"}, {D, 0, "a3"}},
                       {{D, 0, "b1"}, {D, 0, "b2"}, {D, 0, "b3"}, {B, 1, ""}, {D, 0, "b4"}}},
                      &blocked);
  // a2/a3 arrive after barrier 1 on channel 0 and must not be processed before the snapshot.
  EXPECT_EQ(log, (std::vector<std::string>{"a1", "b1", "b2", "b3", "T1", "a2", "b4", "a3"}));
  EXPECT_EQ(blocked,
            (std::vector<std::string>{"..", "..", "X.", "X.", "X.", "..", "..", "..", ".."}));
}

TEST(BarrierAlignerScript, TwoCheckpointsInSequenceOverThreeChannels) {
  std::vector<std::string> blocked;
  auto log = Simulate({{{B, 1, ""}, {D, 0, "a1"}, {B, 2, ""}},
                       {{D, 0, "b1"}, {B, 1, ""}, {B, 2, ""}, {D, 0, "b2"}},
                       {{D, 0, "c1"}, {D, 0, "c2"}, {B, 1, ""}, {D, 0, "c3"}, {B, 2, ""}}},
                      &blocked);
  EXPECT_EQ(log, (std::vector<std::string>{"b1", "c1", "c2", "T1", "a1", "c3", "T2", "b2"}));
}

TEST(BarrierAlignerScript, ChannelEndingMidAlignment) {
  std::vector<std::string> blocked;
  auto log =
      Simulate({{{B, 1, ""}, {D, 0, "a1"}}, {{D, 0, "b1"}, {D, 0, "b2"}, {E, 0, ""}}}, &blocked);
  EXPECT_EQ(log, (std::vector<std::string>{"b1", "b2", "T1", "a1"}));
  EXPECT_EQ(blocked.back(), ".E");
}

}  // namespace
}  // namespace flow::rt
