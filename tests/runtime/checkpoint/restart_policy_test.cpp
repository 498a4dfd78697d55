#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "flow/runtime/checkpoint/restart_policy.h"

namespace flow::rt {
namespace {

std::vector<DurationMs> Drain(RestartBackoff& b) {
  std::vector<DurationMs> out;
  while (auto d = b.NextDelay()) out.push_back(*d);
  return out;
}

TEST(RestartBackoff, GrowsByMultiplierUpToMaxThenGivesUp) {
  RestartPolicyOptions o;
  o.initial_delay_ms = 100;
  o.max_delay_ms = 1000;
  o.multiplier = 2;
  o.max_attempts = 6;
  RestartBackoff b(o);
  EXPECT_EQ(Drain(b), (std::vector<DurationMs>{100, 200, 400, 800, 1000, 1000}));
  EXPECT_EQ(b.attempts(), 6u);
  EXPECT_FALSE(b.NextDelay());
  b.Reset();
  EXPECT_EQ(b.NextDelay().value_or(-1), 100);
}

TEST(RestartBackoff, ConstantDelayAndNoRestarts) {
  RestartPolicyOptions o;
  o.initial_delay_ms = 50;
  o.max_delay_ms = 50;
  o.multiplier = 1;
  o.max_attempts = 3;
  RestartBackoff b(o);
  EXPECT_EQ(Drain(b), (std::vector<DurationMs>{50, 50, 50}));
  o.max_attempts = 0;
  RestartBackoff never(o);
  EXPECT_FALSE(never.NextDelay());
}

TEST(RestartBackoff, ManyAttemptsStayAtMaxWithoutOverflow) {
  RestartPolicyOptions o;
  o.initial_delay_ms = 1000;
  o.max_delay_ms = 60000;
  o.multiplier = 10;
  o.max_attempts = 5000;
  RestartBackoff b(o);
  auto delays = Drain(b);
  ASSERT_EQ(delays.size(), 5000u);
  EXPECT_EQ(delays[0], 1000);
  EXPECT_EQ(delays[1], 10000);
  for (size_t i = 2; i < delays.size(); ++i) ASSERT_EQ(delays[i], 60000) << i;
}

TEST(RestartPolicyOptions, Validation) {
  RestartPolicyOptions d;
  EXPECT_EQ(d.initial_delay_ms, 1000);
  EXPECT_EQ(d.max_delay_ms, 60000);
  EXPECT_EQ(d.multiplier, 2.0);
  EXPECT_EQ(d.max_attempts, 10u);
  EXPECT_TRUE(d.Validate().ok());
  RestartPolicyOptions o;
  o.initial_delay_ms = -1;
  EXPECT_NE(o.Validate().message().find("initial delay"), std::string::npos);
  o = {};
  o.max_delay_ms = 10;
  EXPECT_NE(o.Validate().message().find("max delay (10 ms) must be >= the initial delay (1000 ms)"),
            std::string::npos);
  o = {};
  o.multiplier = 0.5;
  EXPECT_NE(o.Validate().message().find("multiplier"), std::string::npos);
  o.multiplier = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace flow::rt
