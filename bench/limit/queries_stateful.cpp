// q3 (incremental join), q5 (hot items), q7 (highest bid), q8 (new users), q11 (user sessions):
// one pass over the sequence in index order on the calling thread. The sequence is in timestamp
// order (out_of_order_group_size 1), so a window can be closed as soon as time passes its end.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "limit_queries.h"

namespace flow::bench {

namespace {

rt::NexmarkGenerator MakeGenerator(const rt::NexmarkConfig& config) {
  auto gen = rt::NexmarkGenerator::Create(config);
  // main() validated the config; Create cannot fail here.
  return std::move(gen).value();
}

bool Q3State(std::string_view state) {
  return state == "OR" || state == "ID" || state == "CA";
}

}  // namespace

LimitResult RunQ3(const rt::NexmarkConfig& config) {
  struct PersonRow {
    std::string name, city, state;
  };
  const auto gen = MakeGenerator(config);
  std::unordered_map<int64_t, PersonRow> persons;              // id -> person
  std::unordered_map<int64_t, std::vector<int64_t>> auctions;  // seller -> auction ids
  RowChecksum sum;
  rt::NexmarkPerson person;
  rt::NexmarkAuction auction;
  auto emit = [&sum](const PersonRow& p, int64_t auction_id) {
    sum.Str(p.name).Str(p.city).Str(p.state).Int(auction_id).End();
  };
  for (int64_t i = 0; i < config.events; ++i) {
    const rt::NexmarkKind kind = gen.KindAt(i);
    if (kind == rt::NexmarkKind::kPerson) {
      gen.GeneratePerson(i, &person);
      if (!Q3State(person.state)) continue;
      PersonRow& row = persons[person.id];
      row = {person.name, person.city, person.state};
      if (auto it = auctions.find(person.id); it != auctions.end()) {
        for (int64_t a : it->second) emit(row, a);
      }
    } else if (kind == rt::NexmarkKind::kAuction) {
      gen.GenerateAuction(i, &auction);
      if (auction.category != kQ3Category) continue;
      auctions[auction.seller].push_back(auction.id);
      if (auto it = persons.find(auction.seller); it != persons.end()) emit(it->second, auction.id);
    }
  }
  return {sum.rows(), sum.sum()};
}

LimitResult RunQ5(const rt::NexmarkConfig& config) {
  const auto gen = MakeGenerator(config);
  // Bid counts per auction in each slide-long bucket, by bucket start.
  std::map<int64_t, std::unordered_map<int64_t, int64_t>> buckets;
  RowChecksum sum;
  std::unordered_map<int64_t, int64_t> window_counts;
  auto emit_window = [&](int64_t end) {
    window_counts.clear();
    for (auto it = buckets.lower_bound(end - kQ5WindowMs); it != buckets.end() && it->first < end;
         ++it) {
      for (const auto& [auction, n] : it->second) window_counts[auction] += n;
    }
    int64_t max_count = 0;
    for (const auto& [auction, n] : window_counts) max_count = std::max(max_count, n);
    for (const auto& [auction, n] : window_counts) {
      if (n == max_count) sum.Int(auction).Int(n).Int(end - kQ5WindowMs).Int(end).End();
    }
  };
  bool started = false;
  int64_t next_end = 0;
  int64_t last_bucket = 0;
  rt::NexmarkBid bid;
  for (int64_t i = 0; i < config.events; ++i) {
    if (gen.KindAt(i) != rt::NexmarkKind::kBid) continue;
    gen.GenerateBid(i, &bid);
    const int64_t bucket = rt::AlignedStart(bid.dateTime, kQ5SlideMs);
    if (!started) {
      started = true;
      next_end = bucket + kQ5SlideMs;
    }
    while (next_end <= bucket) {
      emit_window(next_end);
      next_end += kQ5SlideMs;
      buckets.erase(buckets.begin(), buckets.lower_bound(next_end - kQ5WindowMs));
    }
    ++buckets[bucket][bid.auction];
    last_bucket = bucket;
  }
  if (started) {
    for (; next_end <= last_bucket + kQ5WindowMs; next_end += kQ5SlideMs) emit_window(next_end);
  }
  return {sum.rows(), sum.sum()};
}

LimitResult RunQ7(const rt::NexmarkConfig& config) {
  const auto gen = MakeGenerator(config);
  RowChecksum sum;
  std::vector<rt::NexmarkBid> best;  // the bids of the current window at its highest price
  int64_t window = 0;
  bool open = false;
  auto flush = [&] {
    for (const auto& b : best) {
      sum.Int(b.auction).Int(b.price).Int(b.bidder).Int(b.dateTime).Str(b.extra).End();
    }
    best.clear();
  };
  rt::NexmarkBid bid;
  for (int64_t i = 0; i < config.events; ++i) {
    if (gen.KindAt(i) != rt::NexmarkKind::kBid) continue;
    gen.GenerateBid(i, &bid);
    const int64_t start = rt::AlignedStart(bid.dateTime, kQ7WindowMs);
    if (!open || start != window) {
      flush();
      window = start;
      open = true;
    }
    if (!best.empty() && bid.price < best.front().price) continue;
    if (!best.empty() && bid.price > best.front().price) best.clear();
    best.push_back(bid);
  }
  flush();
  return {sum.rows(), sum.sum()};
}

LimitResult RunQ8(const rt::NexmarkConfig& config) {
  const auto gen = MakeGenerator(config);
  RowChecksum sum;
  std::unordered_map<int64_t, std::string> persons;  // id -> name, of the current window
  std::unordered_set<int64_t> sellers;               // sellers of the current window
  int64_t window = 0;
  bool open = false;
  auto flush = [&] {
    for (const auto& [id, name] : persons) {
      if (sellers.count(id) != 0) sum.Int(id).Str(name).Int(window).End();
    }
    persons.clear();
    sellers.clear();
  };
  rt::NexmarkPerson person;
  rt::NexmarkAuction auction;
  for (int64_t i = 0; i < config.events; ++i) {
    const rt::NexmarkKind kind = gen.KindAt(i);
    if (kind == rt::NexmarkKind::kBid) continue;
    const int64_t start = rt::AlignedStart(gen.TimestampAt(i), kQ8WindowMs);
    if (!open || start != window) {
      flush();
      window = start;
      open = true;
    }
    if (kind == rt::NexmarkKind::kPerson) {
      gen.GeneratePerson(i, &person);
      persons[person.id] = person.name;
    } else {
      gen.GenerateAuction(i, &auction);
      sellers.insert(auction.seller);
    }
  }
  flush();
  return {sum.rows(), sum.sum()};
}

LimitResult RunQ11(const rt::NexmarkConfig& config) {
  struct Session {
    int64_t start = 0;
    int64_t last = 0;
    int64_t count = 0;
  };
  const auto gen = MakeGenerator(config);
  RowChecksum sum;
  std::unordered_map<int64_t, Session> sessions;  // bidder -> open session
  auto emit = [&sum](int64_t bidder, const Session& s) {
    sum.Int(bidder).Int(s.count).Int(s.start).Int(s.last + kQ11GapMs).End();
  };
  rt::NexmarkBid bid;
  for (int64_t i = 0; i < config.events; ++i) {
    if (gen.KindAt(i) != rt::NexmarkKind::kBid) continue;
    gen.GenerateBid(i, &bid);
    auto [it, inserted] = sessions.try_emplace(bid.bidder);
    Session& s = it->second;
    if (!inserted && bid.dateTime - s.last >= kQ11GapMs) {
      emit(bid.bidder, s);
      inserted = true;
    }
    if (inserted) s = {bid.dateTime, bid.dateTime, 0};
    s.last = bid.dateTime;
    ++s.count;
  }
  for (const auto& [bidder, s] : sessions) emit(bidder, s);
  return {sum.rows(), sum.sum()};
}

}  // namespace flow::bench
