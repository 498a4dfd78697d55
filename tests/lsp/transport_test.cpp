#include "lsp/transport.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

namespace flow::lsp {
namespace {

// Feeds `input` through a pipe (from a thread, so large inputs cannot block) and reads it back.
class Pipe {
 public:
  explicit Pipe(std::string input) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    read_fd_ = fds[0];
    writer_ = std::thread([fd = fds[1], input = std::move(input)] {
      size_t done = 0;
      while (done < input.size()) {
        ssize_t n = write(fd, input.data() + done, input.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      close(fd);
    });
  }
  ~Pipe() {
    writer_.join();
    close(read_fd_);
  }
  int fd() const { return read_fd_; }

 private:
  int read_fd_ = -1;
  std::thread writer_;
};

TEST(LspTransport, ReadsConsecutiveMessages) {
  Pipe p(Frame("{\"a\":1}") +
         "content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[]" +
         "Content-Length:3\n\n\"x\"");
  Transport t(p.fd(), -1);
  ReadResult r = t.Read();
  ASSERT_EQ(r.status, ReadStatus::kOk);
  EXPECT_EQ(r.body, "{\"a\":1}");
  r = t.Read();
  ASSERT_EQ(r.status, ReadStatus::kOk);
  EXPECT_EQ(r.body, "[]");
  r = t.Read();
  ASSERT_EQ(r.status, ReadStatus::kOk);
  EXPECT_EQ(r.body, "\"x\"");
  EXPECT_EQ(t.Read().status, ReadStatus::kEof);
}

TEST(LspTransport, BadHeadersAreReportedAndReadingGoesOn) {
  Pipe p("Content-Type: x\r\n\r\n" + std::string("Content-Length: -5\r\n\r\n") + "garbage\r\n\r\n" +
         Frame("{}"));
  Transport t(p.fd(), -1);
  ReadResult r = t.Read();
  EXPECT_EQ(r.status, ReadStatus::kBadHeader);
  EXPECT_NE(r.reason.find("without Content-Length"), std::string::npos) << r.reason;
  r = t.Read();
  EXPECT_EQ(r.status, ReadStatus::kBadHeader);
  EXPECT_NE(r.reason.find("invalid Content-Length"), std::string::npos) << r.reason;
  r = t.Read();
  EXPECT_EQ(r.status, ReadStatus::kBadHeader);
  EXPECT_NE(r.reason.find("without `:`"), std::string::npos) << r.reason;
  r = t.Read();
  ASSERT_EQ(r.status, ReadStatus::kOk);
  EXPECT_EQ(r.body, "{}");
}

TEST(LspTransport, OversizedBodyIsSkippedWhole) {
  std::string big(5000, 'x');
  Pipe p(Frame(big) + Frame("{}"));
  Transport t(p.fd(), -1, /*max_message=*/1000);
  ReadResult r = t.Read();
  EXPECT_EQ(r.status, ReadStatus::kTooLarge);
  EXPECT_NE(r.reason.find("5000 bytes"), std::string::npos) << r.reason;
  r = t.Read();
  ASSERT_EQ(r.status, ReadStatus::kOk);
  EXPECT_EQ(r.body, "{}");
}

TEST(LspTransport, OverlongHeaderLineIsBounded) {
  Pipe p("X-Junk: " + std::string(3 * kMaxHeaderLine, 'j') + "\r\n\r\n" + Frame("1"));
  Transport t(p.fd(), -1);
  ReadResult r = t.Read();
  EXPECT_EQ(r.status, ReadStatus::kBadHeader);
  EXPECT_NE(r.reason.find("longer than"), std::string::npos) << r.reason;
  r = t.Read();
  ASSERT_EQ(r.status, ReadStatus::kOk);
  EXPECT_EQ(r.body, "1");
}

TEST(LspTransport, TruncatedBodyIsEof) {
  Pipe p("Content-Length: 10\r\n\r\nabc");
  Transport t(p.fd(), -1);
  EXPECT_EQ(t.Read().status, ReadStatus::kEof);
}

TEST(LspTransport, WriteFramesWithByteLength) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  Transport t(-1, fds[1]);
  ASSERT_TRUE(t.Write("{\"s\":\"\xC3\xA9\"}"));  // 9 characters, 10 bytes
  close(fds[1]);
  char buf[128];
  ssize_t n = read(fds[0], buf, sizeof buf);
  close(fds[0]);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)),
            "Content-Length: 10\r\n\r\n{\"s\":\"\xC3\xA9\"}");
}

}  // namespace
}  // namespace flow::lsp
