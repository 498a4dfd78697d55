#include "flow/runtime/engine/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "flow/runtime/engine/log.h"

namespace flow::rt {
namespace {
void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;  // the client went away; nothing to do
    }
    sent += static_cast<size_t>(n);
  }
}

std::string Response(const char* status, const char* content_type, const std::string& body) {
  return fmt::format("HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                     status, content_type, body.size(), body);
}
}  // namespace

Status MetricsServer::Start(const std::string& bind_address, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, bind_address.c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument(fmt::format("metrics: cannot parse bind address '{}'", bind_address));
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(fmt::format("metrics: socket: {}", std::strerror(errno)));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    std::string err = std::strerror(errno);
    ::close(fd);
    return Status::IoError(fmt::format("metrics: cannot listen on {}:{}: {}", bind_address, port, err));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  listen_fd_ = fd;
  port_ = ntohs(addr.sin_port);
  stop_ = false;
  thread_ = std::thread([this] { Serve(); });
  return Status::Ok();
}

void MetricsServer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
  port_ = 0;
}

void MetricsServer::Serve() {
  while (!stop_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    int r = ::poll(&p, 1, 100);
    if (r <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    HandleConnection(fd);
    ::close(fd);
  }
}

void MetricsServer::HandleConnection(int fd) {
  // Read until the end of the request head; a slow or silent client gets at most ~1 s.
  std::string request;
  char buf[1024];
  for (int waited = 0; request.find("\r\n\r\n") == std::string::npos && request.size() < 8192;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) {
      if (++waited >= 10 || stop_.load()) return;
      continue;
    }
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  size_t line_end = request.find("\r\n");
  std::string line = request.substr(0, line_end);
  if (line.rfind("GET ", 0) != 0) {
    SendAll(fd, Response("405 Method Not Allowed", "text/plain", "only GET /metrics\n"));
    return;
  }
  std::string path = line.substr(4, line.find(' ', 4) - 4);
  if (path != "/metrics" && path.rfind("/metrics?", 0) != 0) {
    SendAll(fd, Response("404 Not Found", "text/plain", "only GET /metrics\n"));
    return;
  }
  SendAll(fd, Response("200 OK", "text/plain; version=0.0.4", registry_->RenderPrometheus()));
}

}  // namespace flow::rt
