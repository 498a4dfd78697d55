#include "flow/runtime/common/status.h"

#include <gtest/gtest.h>

namespace flow::rt {
namespace {

Status FailsWith(StatusCode code) {
  return Status(code, "boom");
}

Status Chain(bool fail) {
  FLOW_RETURN_IF_ERROR(fail ? FailsWith(StatusCode::kIoError) : Status::Ok());
  return Status::Aborted("reached the end");
}

TEST(StatusTest, OkStatusPrintsOk) {
  EXPECT_EQ(Status::Ok().ToString(), "OK");
}

TEST(StatusTest, ErrorNamesCodeAndMessage) {
  EXPECT_EQ(Status::Corruption("bad checksum in 'x'").ToString(),
            "Corruption: bad checksum in 'x'");
}

TEST(StatusTest, ReturnIfErrorStopsAtFirstError) {
  EXPECT_EQ(Chain(true).code(), StatusCode::kIoError);
  EXPECT_EQ(Chain(false).code(), StatusCode::kAborted);
}

TEST(ResultTest, HoldsValueOrError) {
  Result<int> good = 42;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 42);
  Result<int> bad = Status::NotFound("no such topic");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace flow::rt
