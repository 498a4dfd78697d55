#include "flow/runtime/engine/metrics_server.h"

#include <arpa/inet.h>

#include <httplib.h>

#include <fmt/format.h>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/formats/json_encoder.h"
#include "flow/runtime/log/log.h"
#include "job_page.h"

namespace flow::rt {
namespace {

int HttpStatusOf(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kTimedOut:
      return 504;
    case StatusCode::kAborted:
    case StatusCode::kCancelled:
      return 409;
    default:
      return 500;
  }
}

void Json(httplib::Response& res, int status, JsonEncoder& body) {
  res.status = status;
  res.set_content(std::string(body.view()) + "\n", "application/json");
}

void JsonError(httplib::Response& res, int status, std::string_view message) {
  JsonEncoder e;
  e.BeginObject();
  e.Key("error");
  e.String(message);
  e.EndObject();
  Json(res, status, e);
}

}  // namespace

MetricsServer::MetricsServer(const MetricsRegistry* registry, Handlers handlers)
    : registry_(registry), handlers_(std::move(handlers)) {}

MetricsServer::~MetricsServer() {
  Stop();
}

void MetricsServer::Route() {
  httplib::Server& s = *server_;
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(registry_->RenderPrometheus(), "text/plain; version=0.0.4");
  });
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    Status ready = handlers_.ready ? handlers_.ready() : Status::Ok();
    res.status = ready.ok() ? 200 : 503;
    res.set_content(ready.ok() ? "ready\n" : ready.message() + "\n", "text/plain");
  });
  auto not_allowed = [](const httplib::Request&, httplib::Response& res) {
    res.status = 405;
    res.set_content("method not allowed\n", "text/plain");
  };
  s.Post("/metrics", not_allowed);
  s.Post("/healthz", not_allowed);
  s.Post("/readyz", not_allowed);
  if (handlers_.status) {
    s.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(JobPageHtml()), "text/html; charset=utf-8");
    });
    s.Get("/api/job", [this](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-store");
      res.set_content(handlers_.status(), "application/json");
    });
  }
  if (!handlers_.savepoint) return;
  s.Get("/savepoint", not_allowed);
  s.Post("/savepoint", [this](const httplib::Request& req, httplib::Response& res) {
    SavepointRequest request;
    request.name = req.get_param_value("name");
    const std::string stop = req.get_param_value("stop");
    if (stop != "" && stop != "true" && stop != "false") {
      return JsonError(res, 400, fmt::format("stop={}: expected true or false", stop));
    }
    request.stop = stop == "true";
    Result<SavepointResult> r = handlers_.savepoint(request);
    if (!r.ok()) return JsonError(res, HttpStatusOf(r.status()), r.status().message());
    JsonEncoder e;
    e.BeginObject();
    e.Key("checkpoint");
    e.Int(r->checkpoint_id);
    e.Key("path");
    e.String(r->path);
    e.Key("stopping");
    e.Bool(request.stop);
    e.EndObject();
    Json(res, 200, e);
  });
}

Status MetricsServer::Start(const std::string& bind_address, int port) {
  in_addr parsed{};
  if (::inet_pton(AF_INET, bind_address.c_str(), &parsed) != 1) {
    return Status::InvalidArgument(
        fmt::format("metrics: cannot parse bind address '{}'", bind_address));
  }
  if (server_) return Status::Internal("metrics: started twice");
  server_ = std::make_unique<httplib::Server>();
  Route();
  const int bound = port == 0 ? server_->bind_to_any_port(bind_address)
                              : (server_->bind_to_port(bind_address, port) ? port : -1);
  if (bound <= 0) {
    server_.reset();
    return Status::IoError(fmt::format("metrics: cannot listen on {}:{}", bind_address, port));
  }
  port_ = bound;
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return Status::Ok();
}

void MetricsServer::Stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
  port_ = 0;
}

}  // namespace flow::rt
