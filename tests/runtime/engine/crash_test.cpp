// A crash of a job binary says where (engine/crash.cpp): the signal's name and a stack on
// stderr, and the process still ends by that signal.

#include <signal.h>

#include <gtest/gtest.h>

#include "flow/runtime/engine/main.h"

namespace flow::rt {
namespace {

TEST(CrashHandlers, AFatalSignalPrintsItsNameAndAStackThenEndsTheProcessByIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        InstallCrashHandlers();
        raise(SIGSEGV);
      },
      testing::KilledBySignal(SIGSEGV),
      "flow: fatal signal SEGV .*stack of the failing thread:\n.*\\[0x[0-9a-f]+\\]");
  EXPECT_EXIT(
      {
        InstallCrashHandlers();
        abort();
      },
      testing::KilledBySignal(SIGABRT), "flow: fatal signal ABRT");
}

}  // namespace
}  // namespace flow::rt
