#pragma once
// The job's HTTP endpoints, served by cpp-httplib on a small thread pool (docs/runtime.md,
// "HTTP endpoints"):
//   GET  /metrics    the registry in the Prometheus text format
//   GET  /healthz    200 "ok" while the server runs (the process is alive and serving)
//   GET  /readyz     200 "ready" while the job serves its input (Job::Readiness), else 503
//                    with the reason
//   GET  /           the job page (job_page.h): graph, rates, checkpoints; polls GET /api/job
//   POST /savepoint  ?name=N&stop=true: Job::TakeSavepoint; answers when it is done with
//                    {"checkpoint":7,"path":"..."}, or an error status with {"error":"..."}
// Other paths get 404, other methods on these paths 405. Binds 127.0.0.1 by default.
//
// Threading: Start/Stop from one thread; requests are served on the server's threads.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "flow/runtime/common/metrics.h"
#include "flow/runtime/common/status.h"

namespace httplib {
class Server;
}

namespace flow::rt {

struct SavepointRequest;
struct SavepointResult;

class MetricsServer {
 public:
  // What a job adds to the registry's /metrics; each may be empty.
  struct Handlers {
    // POST /savepoint; empty: 404.
    std::function<Result<SavepointResult>(const SavepointRequest&)> savepoint;
    // GET /readyz; empty: always ready.
    std::function<Status()> ready;
    // GET /api/job (JSON) for the job page at GET /; empty: both 404.
    std::function<std::string()> status;
  };
  explicit MetricsServer(const MetricsRegistry* registry, Handlers handlers = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and starts serving; port 0 picks a free port (see port()). kIoError names the address
  // when binding fails; kInvalidArgument for an unparsable IPv4 address.
  [[nodiscard]] Status Start(const std::string& bind_address, int port);
  // The bound port, 0 when not running.
  int port() const { return port_; }
  // Stops serving; requests in progress finish first. Idempotent.
  void Stop();

 private:
  void Route();

  const MetricsRegistry* registry_;
  Handlers handlers_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace flow::rt
