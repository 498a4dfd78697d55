#pragma once
// The main() of a built job binary:
//
//   int main(int argc, char** argv) {
//     return flow::rt::RunMain(argc, argv, {{"threshold", ParamType::kInt, "10", "min count"}},
//                              [](flow::rt::Job& job) -> flow::rt::Status { ...build...; return
//                              Status::Ok(); });
//   }
//
// Parses the flags (options.h), prints usage for --help (exit 0), reports flag and parameter
// errors on stderr (exit 2), installs SIGINT/SIGTERM handlers for a graceful stop, builds the
// graph and runs it: exit 0 finished or stopped, 1 failed, 3 fenced (another instance of the job
// took over, or holds its state dir). A build function that returns
// kInvalidArgument (e.g. a parameter value out of range) also exits 2.

#include <functional>
#include <string_view>
#include <vector>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/options.h"

namespace flow::rt {

// `job_id`: the job's default identity (--job-id overrides it); flowc passes one made from the
// script's file name. Empty: the program's file name.
int RunMain(int argc, const char* const* argv, const std::vector<ParamSpec>& params,
            const std::function<Status(Job&)>& build, std::string_view job_id = {});

// SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT print the signal and the failing thread's stack to
// stderr, then end the process by the signal as before (crash.cpp). RunMain installs them.
void InstallCrashHandlers();

}  // namespace flow::rt
