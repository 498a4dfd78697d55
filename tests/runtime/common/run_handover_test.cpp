// RunHandover: what a run keeps for the next, taken once, dropped once when no run takes it.

#include "flow/runtime/common/run_handover.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace flow::rt {
namespace {

struct Drops {
  std::vector<std::string> seen;  // "<name>:<stopping>"
};

class Probe final : public RunHandover::Kept {
 public:
  Probe(std::string name, Drops* drops) : name_(std::move(name)), drops_(drops) {}
  void Drop(bool stopping) override {
    drops_->seen.push_back(name_ + (stopping ? ":stop" : ":fail"));
  }

 private:
  std::string name_;
  Drops* drops_;
};

TEST(RunHandover, TakeReturnsWhatWasKeptOnceAndNothingIsDropped) {
  Drops drops;
  RunHandover handover;
  auto kept = std::make_shared<Probe>("a", &drops);
  handover.Keep("member a", kept);
  EXPECT_EQ(handover.size(), 1u);
  EXPECT_EQ(handover.Take("member b"), nullptr);
  EXPECT_EQ(handover.Take("member a"), kept);
  EXPECT_EQ(handover.Take("member a"), nullptr) << "taken once";
  handover.DropAll(/*stopping=*/true);
  EXPECT_TRUE(drops.seen.empty()) << "a taken object is the taker's";
}

TEST(RunHandover, WhatNoRunTookIsDroppedOnceWithTheReason) {
  Drops drops;
  {
    RunHandover handover;
    handover.Keep("b", std::make_shared<Probe>("b", &drops));
    handover.Keep("a", std::make_shared<Probe>("a", &drops));
    handover.DropAll(/*stopping=*/true);
    EXPECT_EQ(handover.size(), 0u);
    handover.DropAll(/*stopping=*/false);  // nothing left: nothing dropped twice
    handover.Keep("c", std::make_shared<Probe>("c", &drops));
  }  // the destructor drops what is left, as after a failure
  EXPECT_EQ(drops.seen, (std::vector<std::string>{"a:stop", "b:stop", "c:fail"}));
}

TEST(RunHandover, KeepingUnderATakenNameDropsTheOlderOne) {
  Drops drops;
  RunHandover handover;
  handover.Keep("a", std::make_shared<Probe>("old", &drops));
  handover.Keep("a", std::make_shared<Probe>("new", &drops));
  EXPECT_EQ(drops.seen, (std::vector<std::string>{"old:fail"}));
  EXPECT_EQ(handover.size(), 1u);
}

}  // namespace
}  // namespace flow::rt
