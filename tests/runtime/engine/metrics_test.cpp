// The job's HTTP endpoints (MetricsServer) and the Prometheus endpoint of a running job; the
// registry itself is tested in tests/runtime/common/metrics_test.cpp.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/metrics_server.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "test_util.h"

namespace flow::rt {
namespace {

// Sends `request` to 127.0.0.1:port and returns the whole response ("" on connection failure).
// HTTP/1.1 requests get "Connection: close", so the server does not keep the socket open for the
// next request until its keep-alive timeout.
std::string HttpRequest(int port, std::string request) {
  if (const size_t eol = request.find("\r\n"); request.find(" HTTP/1.1\r\n") != std::string::npos) {
    request.insert(eol + 2, "Connection: close\r\n");
  }
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "";
  }
  EXPECT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

TEST(MetricsServerTest, AnswersMetricsAndHealth) {
  MetricsRegistry r;
  r.Counter("flow_test_total", "t", {})->Add(3);
  MetricsServer server(&r);
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  ASSERT_GT(server.port(), 0);
  std::string ok = HttpRequest(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(
      ok.find(
          "\r\n\r\n# HELP flow_test_total t\n# TYPE flow_test_total counter\nflow_test_total 3\n"),
      std::string::npos)
      << ok;
  EXPECT_EQ(HttpRequest(server.port(), "GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(HttpRequest(server.port(), "GET /healthz HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200", 0),
            0u);
  // Without a job behind it there is no savepoint endpoint.
  EXPECT_EQ(HttpRequest(server.port(), "POST /savepoint HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                .rfind("HTTP/1.1 404", 0),
            0u);
  EXPECT_EQ(HttpRequest(server.port(), "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                .rfind("HTTP/1.1 405", 0),
            0u);
  server.Stop();
  EXPECT_EQ(server.port(), 0);
}

TEST(MetricsServerTest, ReadyzAnswersWhatTheJobSays) {
  MetricsRegistry r;
  std::atomic<bool> ready{false};
  MetricsServer::Handlers handlers;
  handlers.ready = [&ready] {
    return ready.load() ? Status::Ok() : Status::Unavailable("starting: 1 of 3 tasks opened");
  };
  MetricsServer server(&r, std::move(handlers));
  ASSERT_TRUE(server.Start("127.0.0.1", 0).ok());
  std::string starting = HttpRequest(server.port(), "GET /readyz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(starting.rfind("HTTP/1.1 503", 0), 0u) << starting;
  EXPECT_NE(starting.find("\r\n\r\nstarting: 1 of 3 tasks opened\n"), std::string::npos)
      << starting;
  ready.store(true);
  std::string ok = HttpRequest(server.port(), "GET /readyz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
  EXPECT_NE(ok.find("\r\n\r\nready\n"), std::string::npos) << ok;
}

TEST(MetricsServerTest, BadBindAddressIsAnError) {
  MetricsRegistry r;
  MetricsServer server(&r);
  Status s = server.Start("not-an-address", 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not-an-address"), std::string::npos);
}

TEST(JobMetricsTest, RunningJobServesItsMetrics) {
  std::atomic<int64_t> produced{0};
  JobOptions options;
  options.parallelism = 2;
  options.metrics_port = 0;
  options.chaining = false;
  options.log_level = LogLevel::kWarn;
  Job job(options);
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("gen", GeneratorSourceFactory<int64_t>([&produced](uint64_t i, int64_t* v) {
                        *v = static_cast<int64_t>(i);
                        return produced.fetch_add(1) <
                               1000000;  // ends eventually even if the test breaks
                      }))
      .Map<int64_t>("ident", [](const int64_t& v) { return v; })
      .Sink("collect", CollectingSinkFactory(out));
  std::string body;
  std::thread scraper([&] {
    while (job.metrics_port() == 0 && produced.load() < 1000000) std::this_thread::yield();
    int port = job.metrics_port();
    // Each task registers its series when it opens; on a loaded machine a task can open well
    // after the first records reach the sink, so wait for the job to say every task is open.
    while (!job.Readiness().ok() && produced.load() < 1000000) std::this_thread::yield();
    while (out->size() < 1000 && produced.load() < 1000000) std::this_thread::yield();
    if (port > 0) body = HttpRequest(port, "GET /metrics HTTP/1.0\r\n\r\n");
    job.RequestStop();
  });
  Status s = testing::ExecuteWithWatchdog(job);
  scraper.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_NE(body.find("HTTP/1.1 200 OK"), std::string::npos) << body;
  for (const char* series : {"flow_records_out_total{operator=\"gen\",subtask=\"1\"}",
                             "flow_records_in_total{operator=\"ident\",subtask=\"0\"}",
                             "flow_records_in_total{operator=\"collect\",subtask=\"1\"}",
                             "flow_input_queue_depth{operator=\"collect\",subtask=\"0\"}",
                             "flow_input_queue_capacity{operator=\"ident\",subtask=\"1\"} 8",
                             "flow_backpressure_ms_total{operator=\"ident\",subtask=\"0\"}"}) {
    EXPECT_NE(body.find(series), std::string::npos) << series << "\n" << body;
  }
  // After the run the counters agree with what the sink received: every record left "gen" and
  // "ident" once and entered "ident" and "collect" once.
  const int64_t n = static_cast<int64_t>(out->size());
  EXPECT_EQ(job.metrics().Sum("flow_records_out_total"), 2 * n);
  EXPECT_EQ(job.metrics().Sum("flow_records_in_total"), 2 * n);
}

}  // namespace
}  // namespace flow::rt
