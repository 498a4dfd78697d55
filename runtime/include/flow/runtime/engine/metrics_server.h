#pragma once
// A tiny HTTP server for Prometheus scrapes: GET /metrics answers with the registry in the text
// format; anything else gets 404 (405 for other methods). One background thread, one request per
// connection. Binds 127.0.0.1 by default.
//
// Threading: Start/Stop from one thread; serving happens on the server's own thread.

#include <atomic>
#include <string>
#include <thread>

#include "flow/runtime/common/status.h"
#include "flow/runtime/engine/metrics.h"

namespace flow::rt {

class MetricsServer {
 public:
  explicit MetricsServer(const MetricsRegistry* registry) : registry_(registry) {}
  ~MetricsServer() { Stop(); }
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and starts serving; port 0 picks a free port (see port()). kIoError names the address
  // when binding fails; kInvalidArgument for an unparsable address.
  [[nodiscard]] Status Start(const std::string& bind_address, int port);
  // The bound port, 0 when not running.
  int port() const { return port_; }
  // Stops the thread and closes the socket (waits at most ~100 ms). Idempotent.
  void Stop();

 private:
  void Serve();
  void HandleConnection(int fd);

  const MetricsRegistry* registry_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace flow::rt
