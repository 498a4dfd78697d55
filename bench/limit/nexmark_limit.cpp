// nexmark_limit: the hand-written Nexmark queries (limit_queries.h) as one program.
//
//   nexmark_limit --query q5 --events 1000000 [--rate 10000] [--threads 2]
//       prints one JSON line: system, query, events, rows, checksum, cpu_s, wall_s
//   --print-rows 1 also prints each result row's canonical text before the JSON line
//   nexmark_limit --dump 1000
//       prints the first N events, one line each with every field ('|'-separated), to compare
//       against the Flink peer's Java port of the generator
// Exit codes: 0 ok, 2 bad usage.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "limit_queries.h"

namespace {

using flow::bench::LimitResult;
namespace rt = flow::rt;

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

int Usage(const char* message) {
  std::fprintf(stderr,
               "nexmark_limit: %s\nusage: nexmark_limit --query q0|q1|q2|q3|q5|q7|q8|q11 "
               "--events N [--rate R] [--threads P]\n       nexmark_limit --dump N [--rate R]\n",
               message);
  return 2;
}

void Dump(const rt::NexmarkConfig& config, int64_t n) {
  auto gen = rt::NexmarkGenerator::Create(config);
  rt::NexmarkEvent e;
  for (int64_t i = 0; i < n; ++i) {
    gen->Generate(i, &e);
    switch (e.kind) {
      case rt::NexmarkKind::kPerson: {
        const auto& p = e.person;
        std::printf("%lld|person|%lld|%s|%s|%s|%s|%s|%lld|%s\n", static_cast<long long>(i),
                    static_cast<long long>(p.id), p.name.c_str(), p.emailAddress.c_str(),
                    p.creditCard.c_str(), p.city.c_str(), p.state.c_str(),
                    static_cast<long long>(p.dateTime), p.extra.c_str());
        break;
      }
      case rt::NexmarkKind::kAuction: {
        const auto& a = e.auction;
        std::printf("%lld|auction|%lld|%s|%s|%lld|%lld|%lld|%lld|%lld|%lld|%s\n",
                    static_cast<long long>(i), static_cast<long long>(a.id), a.itemName.c_str(),
                    a.description.c_str(), static_cast<long long>(a.initialBid),
                    static_cast<long long>(a.reserve), static_cast<long long>(a.dateTime),
                    static_cast<long long>(a.expires), static_cast<long long>(a.seller),
                    static_cast<long long>(a.category), a.extra.c_str());
        break;
      }
      case rt::NexmarkKind::kBid: {
        const auto& b = e.bid;
        std::printf("%lld|bid|%lld|%lld|%lld|%s|%s|%lld|%s\n", static_cast<long long>(i),
                    static_cast<long long>(b.auction), static_cast<long long>(b.bidder),
                    static_cast<long long>(b.price), b.channel.c_str(), b.url.c_str(),
                    static_cast<long long>(b.dateTime), b.extra.c_str());
        break;
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string query;
  rt::NexmarkConfig config;
  int threads = 1;
  int64_t dump = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return Usage(("missing value of " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "--query") {
      query = value;
    } else if (flag == "--events") {
      config.events = std::atoll(value);
    } else if (flag == "--rate") {
      config.rate = std::atof(value);
    } else if (flag == "--threads") {
      threads = std::atoi(value);
    } else if (flag == "--print-rows") {
      flow::bench::RowChecksum::SetEchoAll(std::strcmp(value, "1") == 0);
    } else if (flag == "--dump") {
      dump = std::atoll(value);
    } else {
      return Usage(("unknown flag " + flag).c_str());
    }
  }
  if (dump >= 0) {
    config.events = dump;
    if (!config.Validate().ok()) return Usage("bad --rate");
    Dump(config, dump);
    return 0;
  }
  if (config.events <= 0) return Usage("--events must be > 0");
  if (const auto status = config.Validate(); !status.ok()) return Usage("bad --rate");
  if (threads < 1) return Usage("--threads must be >= 1");

  const auto wall_start = std::chrono::steady_clock::now();
  LimitResult result;
  if (query == "q0") {
    result = flow::bench::RunQ0(config, threads);
  } else if (query == "q1") {
    result = flow::bench::RunQ1(config, threads);
  } else if (query == "q2") {
    result = flow::bench::RunQ2(config, threads);
  } else if (query == "q3") {
    result = flow::bench::RunQ3(config);
  } else if (query == "q5") {
    result = flow::bench::RunQ5(config);
  } else if (query == "q7") {
    result = flow::bench::RunQ7(config);
  } else if (query == "q8") {
    result = flow::bench::RunQ8(config);
  } else if (query == "q11") {
    result = flow::bench::RunQ11(config);
  } else {
    return Usage(("unknown query '" + query + "'").c_str());
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  std::printf(
      "{\"system\": \"limit\", \"query\": \"%s\", \"events\": %lld, \"rows\": %lld, "
      "\"checksum\": \"%016llx\", \"cpu_s\": %.6f, \"wall_s\": %.6f}\n",
      query.c_str(), static_cast<long long>(config.events), static_cast<long long>(result.rows),
      static_cast<unsigned long long>(result.checksum), ProcessCpuSeconds(), wall);
  return 0;
}
