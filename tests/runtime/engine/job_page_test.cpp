// The job page (GET /, runtime/src/engine/job_page.cpp) in a real browser: Debian's Chromium,
// headless, loads it from a running job, runs its script against GET /api/job, and dumps the DOM
// it built. The graph must show every operator and edge, rates and totals must move between two
// loads, the checkpoint history must fill, and an operator name full of markup must stay text.

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <thread>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "test_util.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChromium = "/usr/bin/chromium";
constexpr const char* kOddName = "double <b>&\"x\"</b>";

// The DOM of `url` after its scripts ran for a few (virtual) seconds.
std::string DumpDom(const std::string& url, const fs::path& profile) {
  const std::string cmd =
      std::string(kChromium) +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --user-data-dir=" +
      profile.string() + " --virtual-time-budget=3000 --dump-dom '" + url + "' 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  ::pclose(pipe);
  return out;
}

// data-op -> (data-records-in, data-rate) of every drawn operator box.
struct Box {
  std::string records_in;
  std::string rate;
};
std::map<std::string, Box> Operators(const std::string& dom) {
  std::map<std::string, Box> ops;
  static const std::regex box(
      R"re(<g class="op"[^>]*data-op="([^"]*)"[^>]*data-records-in="([^"]*)"[^>]*data-rate="([^"]*)")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), box); it != std::sregex_iterator();
       ++it) {
    ops[(*it)[1]] = Box{(*it)[2], (*it)[3]};
  }
  return ops;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(JobPageTest, ChromiumDrawsTheGraphAndNumbersMove) {
  ASSERT_EQ(::access(kChromium, X_OK), 0)
      << kChromium << " is missing: run scripts/setup (package chromium)";
  const fs::path dir = fs::temp_directory_path() / ("flow-job-page-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  JobOptions o;
  o.parallelism = 2;
  o.chaining = false;
  o.metrics_port = 0;
  o.log_level = LogLevel::kWarn;
  o.job_id = "page-test";
  o.checkpoint.state_dir = (dir / "state").string();
  o.checkpoint.interval_ms = 100;
  o.checkpoint.options.interval_ms = 100;
  Job job(o);
  std::atomic<bool> stop{false};
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("numbers", GeneratorSourceFactory<int64_t>(
                                     [&stop](uint64_t i, int64_t* v, TimestampMs* ts) {
                                       if (stop.load() || i > 50000000) return false;
                                       if ((i / 2) % 10 == 0)
                                         std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                       *v = static_cast<int64_t>(i);
                                       *ts = WallNowMs() - 2000;
                                       return true;
                                     }))
      .Map<int64_t>(kOddName, [](const int64_t& v) { return 2 * v; })
      .Sink("collect", CollectingSinkFactory(out));
  std::string first, second;
  std::thread browser([&] {
    for (int i = 0; i < 3000 && (job.metrics_port() == 0 ||
                                 testing::NewestCompleteCheckpoint(dir / "state") < 2);
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(1500));  // the job samples rates each second
    const std::string url = "http://127.0.0.1:" + std::to_string(job.metrics_port()) + "/";
    first = DumpDom(url, dir / "profile1");
    second = DumpDom(url, dir / "profile2");
    stop.store(true);
  });
  Status s = testing::ExecuteWithWatchdog(job);
  browser.join();
  fs::remove_all(dir);
  ASSERT_TRUE(s.ok()) << s.ToString();

  // FLOW_JOB_PAGE_DUMP=1 prints both DOMs, to see what the browser built when a check fails.
  if (std::getenv("FLOW_JOB_PAGE_DUMP"))
    std::fprintf(stderr, "%s\n-----\n%s\n", first.c_str(), second.c_str());
  std::map<std::string, Box> a = Operators(first), b = Operators(second);
  const std::string odd = "double &lt;b&gt;&amp;\"x\"&lt;/b&gt;";
  ASSERT_EQ(a.size(), 3u) << first;
  ASSERT_TRUE(a.count("numbers") && a.count("collect")) << first;
  // The name is text: escaped in the attribute, and no <b> element was made of it.
  ASSERT_TRUE(a.count(odd) || a.count("double &lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;")) << first;
  EXPECT_EQ(first.find("<b>"), std::string::npos) << first;
  EXPECT_EQ(Count(first, "class=\"edge\""), 2u) << first;
  EXPECT_NE(first.find(">ready<"), std::string::npos) << first;
  EXPECT_NE(first.find(">page-test<"), std::string::npos) << first;
  EXPECT_GE(Count(first, "<tr class=\"cp\""), 2u) << "checkpoint history";
  EXPECT_NE(first.find("watermark lag 2."), std::string::npos)
      << "event time is 2 s behind: " << first;
  // The job's rates are shown: records per second into the sink.
  ASSERT_FALSE(a["collect"].rate.empty()) << first;
  EXPECT_GT(std::stod(a["collect"].rate), 0) << first;
  EXPECT_EQ(first.find("in –/s"), std::string::npos) << first;
  ASSERT_FALSE(a["collect"].records_in.empty());
  ASSERT_FALSE(b["collect"].records_in.empty()) << second;
  EXPECT_GT(std::stoll(b["collect"].records_in), std::stoll(a["collect"].records_in))
      << "the numbers move while the job runs";
}

}  // namespace
}  // namespace flow::rt
