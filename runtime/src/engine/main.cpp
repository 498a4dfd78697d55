#include "flow/runtime/engine/main.h"

#include <cstdio>
#include <exception>
#include <string>

#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/log/log.h"
#include "flow/runtime/txn/forget_instance.h"

namespace flow::rt {

int RunMain(int argc, const char* const* argv, const std::vector<ParamSpec>& params,
            const std::function<Status(Job&)>& build, std::string_view job_id) {
  const char* program = argc > 0 ? argv[0] : "job";
  auto parsed = ParseJobArgs(argc, argv, params, job_id);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", program, parsed.status().message().c_str());
    return 2;
  }
  if (parsed->help) {
    std::string usage = JobUsage(program, params);
    std::fwrite(usage.data(), 1, usage.size(), stdout);
    return 0;
  }
  SetLogLevel(parsed->options.log_level);
  SetLogFormat(parsed->options.log_format);
  if (Status faults = ConfigureFaultsFromEnv(); !faults.ok()) {
    std::fprintf(stderr, "%s: error: FLOW_FAULT: %s\n", program, faults.message().c_str());
    return 2;
  }
  if (FaultsArmed())
    Log(LogLevel::kWarn, "engine", "fault injection armed", {{"faults", DescribeFaults()}});
  if (!parsed->forget_instance.empty()) {
    const JobOptions& o = parsed->options;
    Status forgot = ForgetInstance(ForgetInstanceOptions{.brokers = o.shuffle_brokers,
                                                         .kafka_properties = o.kafka_properties,
                                                         .job_id = o.job_id,
                                                         .instance = parsed->forget_instance,
                                                         .state_root = o.state_root,
                                                         .dry_run = parsed->dry_run,
                                                         .wait_ms = parsed->forget_wait_ms});
    if (forgot.ok()) return 0;
    Log(LogLevel::kError, "engine", "cannot forget the instance", {{"error", forgot.ToString()}});
    return forgot.code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  InstallStopSignalHandlers();
  InstallCrashHandlers();
  Job job(std::move(parsed->options));
  Status built;
  try {
    built = build(job);
  } catch (const std::exception& e) {
    built = Status::Internal(std::string("exception: ") + e.what());
  } catch (...) {
    built = Status::Internal("unknown exception");
  }
  if (!built.ok()) {
    Log(LogLevel::kError, "engine", "cannot build the job", {{"error", built.ToString()}});
    // Configuration the job was given: a flag, a parameter, credentials a service refused.
    return built.code() == StatusCode::kInvalidArgument ||
                   built.code() == StatusCode::kPermissionDenied
               ? 2
               : 1;
  }
  if (Status plan = job.CheckInstancePlan(); !plan.ok()) {
    Log(LogLevel::kError, "engine", "cannot run the job as an instance",
        {{"error", plan.ToString()}});
    return 2;
  }
  return job.Run();
}

}  // namespace flow::rt
