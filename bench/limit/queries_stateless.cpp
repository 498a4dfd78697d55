// q0 (pass-through), q1 (currency conversion), q2 (selection): one pass over the bids, split over
// threads by index (thread t takes the indices i with i % threads == t).
#include <thread>
#include <vector>

#include "limit_queries.h"

namespace flow::bench {

namespace {

template <typename RowFn>
LimitResult ForEachBidParallel(const rt::NexmarkConfig& config, int threads, RowFn row_fn) {
  const int n = threads < 1 ? 1 : threads;
  std::vector<RowChecksum> sums(static_cast<size_t>(n));
  auto work = [&](int t) {
    auto gen = rt::NexmarkGenerator::Create(config);
    if (!gen.ok()) return;
    // On this thread's stack, stored once at the end: the threads' sums side by side in `sums`
    // share a cache line, and updating them per row made two threads slower than one (q0, q1).
    RowChecksum sum;
    rt::NexmarkBid bid;
    for (int64_t i = t; i < config.events; i += n) {
      if (gen->KindAt(i) != rt::NexmarkKind::kBid) continue;
      gen->GenerateBid(i, &bid);
      row_fn(bid, sum);
    }
    sums[static_cast<size_t>(t)] = sum;
  };
  if (n == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < n; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
  }
  RowChecksum total;
  for (const auto& s : sums) total.Merge(s);
  return {total.rows(), total.sum()};
}

}  // namespace

LimitResult RunQ0(const rt::NexmarkConfig& config, int threads) {
  return ForEachBidParallel(config, threads, [](const rt::NexmarkBid& b, RowChecksum& sum) {
    sum.Int(b.auction).Int(b.bidder).Int(b.price).Int(b.dateTime).Str(b.extra).End();
  });
}

LimitResult RunQ1(const rt::NexmarkConfig& config, int threads) {
  return ForEachBidParallel(config, threads, [](const rt::NexmarkBid& b, RowChecksum& sum) {
    const double price_eur = static_cast<double>(b.price) * 0.908;
    sum.Int(b.auction).Int(b.bidder).Float(price_eur).Int(b.dateTime).Str(b.extra).End();
  });
}

LimitResult RunQ2(const rt::NexmarkConfig& config, int threads) {
  return ForEachBidParallel(config, threads, [](const rt::NexmarkBid& b, RowChecksum& sum) {
    if (b.auction % kQ2AuctionModulus == 0) sum.Int(b.auction).Int(b.price).End();
  });
}

}  // namespace flow::bench
