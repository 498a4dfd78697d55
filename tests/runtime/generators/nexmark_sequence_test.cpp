// Properties of the Nexmark sequence: determinism, splitting across subtasks, proportions, id
// relationships, timestamps, field ranges, positions for checkpoints, and config validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "flow/runtime/generators/nexmark.h"

namespace flow::rt {
namespace {

NexmarkGenerator Make(const NexmarkConfig& config, uint32_t subtask = 0, uint32_t parallelism = 1) {
  auto gen = NexmarkGenerator::Create(config, subtask, parallelism);
  EXPECT_TRUE(gen.ok()) << gen.status().ToString();
  return std::move(gen).value();
}

NexmarkConfig Bounded(int64_t events) {
  NexmarkConfig c;
  c.events = events;
  return c;
}

// Every field of the event's kind, so two events compare equal only if all their data does.
bool SameEvent(const NexmarkEvent& a, const NexmarkEvent& b) {
  if (a.kind != b.kind || a.index != b.index || a.timestamp != b.timestamp) return false;
  switch (a.kind) {
    case NexmarkKind::kPerson:
      return a.person == b.person;
    case NexmarkKind::kAuction:
      return a.auction == b.auction;
    case NexmarkKind::kBid:
      return a.bid == b.bid;
  }
  return false;
}

std::vector<NexmarkEvent> Drain(NexmarkGenerator gen) {
  std::vector<NexmarkEvent> out;
  while (gen.HasNext()) {
    out.emplace_back();
    gen.Next(&out.back());
  }
  return out;
}

TEST(NexmarkSequenceTest, SameConfigGivesSameEvents) {
  const auto first = Drain(Make(Bounded(3000)));
  const auto second = Drain(Make(Bounded(3000)));
  ASSERT_EQ(first.size(), 3000u);
  ASSERT_EQ(second.size(), 3000u);
  for (size_t i = 0; i < first.size(); ++i) {
    ASSERT_TRUE(SameEvent(first[i], second[i])) << "event " << i;
  }
}

TEST(NexmarkSequenceTest, SlicesOfAnyParallelismUnionToTheWholeSequence) {
  const auto whole = Drain(Make(Bounded(2011)));  // not a multiple of any P below
  for (uint32_t p = 1; p <= 4; ++p) {
    std::vector<NexmarkEvent> merged;
    for (uint32_t s = 0; s < p; ++s) {
      for (auto& e : Drain(Make(Bounded(2011), s, p))) {
        EXPECT_EQ(e.index % p, s) << "subtask " << s << " of " << p << " got index " << e.index;
        merged.push_back(std::move(e));
      }
    }
    ASSERT_EQ(merged.size(), whole.size()) << "parallelism " << p;
    std::sort(merged.begin(), merged.end(),
              [](const NexmarkEvent& a, const NexmarkEvent& b) { return a.index < b.index; });
    for (size_t i = 0; i < whole.size(); ++i) {
      ASSERT_TRUE(SameEvent(merged[i], whole[i])) << "parallelism " << p << " index " << i;
    }
  }
}

TEST(NexmarkSequenceTest, EveryFiftyEventsHoldOnePersonThreeAuctionsFortySixBids) {
  for (int64_t first_id : {0, 7}) {
    NexmarkConfig c = Bounded(50 * 40);
    c.first_event_id = first_id;
    const auto events = Drain(Make(c));
    for (size_t block = 0; block < events.size(); block += 50) {
      std::map<NexmarkKind, int> counts;
      for (size_t i = block; i < block + 50; ++i) counts[events[i].kind]++;
      EXPECT_EQ(counts[NexmarkKind::kPerson], 1) << "block at " << block;
      EXPECT_EQ(counts[NexmarkKind::kAuction], 3) << "block at " << block;
      EXPECT_EQ(counts[NexmarkKind::kBid], 46) << "block at " << block;
    }
  }
}

TEST(NexmarkSequenceTest, IdsAreConsecutiveAndReferencesPointAtRecentOrLeadIds) {
  const auto events = Drain(Make(Bounded(50 * 400)));
  int64_t next_person = kNexmarkFirstPersonId;
  int64_t next_auction = kNexmarkFirstAuctionId;
  int64_t bids = 0;
  int64_t bids_on_existing = 0;
  for (const auto& e : events) {
    switch (e.kind) {
      case NexmarkKind::kPerson:
        ASSERT_EQ(e.person.id, next_person++);
        break;
      case NexmarkKind::kAuction:
        ASSERT_EQ(e.auction.id, next_auction++);
        // Sellers are existing persons or at most 10 ids ahead (the reference's lead).
        EXPECT_GE(e.auction.seller, kNexmarkFirstPersonId);
        EXPECT_LT(e.auction.seller, next_person + 10);
        break;
      case NexmarkKind::kBid:
        ++bids;
        EXPECT_GE(e.bid.auction, kNexmarkFirstAuctionId);
        EXPECT_LT(e.bid.auction, next_auction + 10);
        // Random picks come from the last 100 auctions (the in-flight window) or the lead.
        EXPECT_GE(e.bid.auction, std::max(kNexmarkFirstAuctionId, next_auction - 1 - 100));
        EXPECT_GE(e.bid.bidder, kNexmarkFirstPersonId);
        EXPECT_LT(e.bid.bidder, next_person + 10);
        if (e.bid.auction < next_auction) ++bids_on_existing;
        break;
    }
  }
  // Half of the bids go to the hot auction, which always exists; most others do too.
  EXPECT_GT(bids_on_existing * 10, bids * 9);
}

TEST(NexmarkSequenceTest, TimestampsAdvanceAtTheConfiguredRate) {
  NexmarkConfig c = Bounded(5000);
  c.rate = 2500;  // 400 microseconds apart
  c.base_time = 1000000;
  const auto events = Drain(Make(c));
  for (const auto& e : events) {
    // Independent integer form of base + (int64)(i * 400.0) / 1000.
    ASSERT_EQ(e.timestamp, 1000000 + e.index * 400 / 1000) << "index " << e.index;
    const TimestampMs data_time = e.kind == NexmarkKind::kPerson    ? e.person.dateTime
                                  : e.kind == NexmarkKind::kAuction ? e.auction.dateTime
                                                                    : e.bid.dateTime;
    ASSERT_EQ(data_time, e.timestamp);
  }
  for (size_t i = 1; i < events.size(); ++i)
    ASSERT_LE(events[i - 1].timestamp, events[i].timestamp);
}

TEST(NexmarkSequenceTest, FieldsStayInTheirDomains) {
  const std::set<std::string> states = {"AZ", "CA", "ID", "OR", "WA", "WY"};
  const std::set<std::string> cities = {"Phoenix",  "Los Angeles", "San Francisco", "Boise",
                                        "Portland", "Bend",        "Redmond",       "Seattle",
                                        "Kent",     "Cheyenne"};
  const std::set<std::string> hot = {"Google", "Facebook", "Baidu", "Apple"};
  int64_t bid_extra_total = 0;
  int64_t bid_count = 0;
  int hot_count = 0;
  for (const auto& e : Drain(Make(Bounded(20000)))) {
    if (e.kind == NexmarkKind::kPerson) {
      EXPECT_TRUE(states.count(e.person.state)) << e.person.state;
      EXPECT_TRUE(cities.count(e.person.city)) << e.person.city;
      ASSERT_EQ(e.person.creditCard.size(), 19u);
      for (size_t i = 0; i < 19; ++i) {
        if (i % 5 == 4) {
          EXPECT_EQ(e.person.creditCard[i], ' ');
        } else {
          EXPECT_TRUE(isdigit(static_cast<unsigned char>(e.person.creditCard[i])));
        }
      }
      EXPECT_NE(e.person.emailAddress.find('@'), std::string::npos);
      EXPECT_TRUE(e.person.emailAddress.ends_with(".com"));
      EXPECT_NE(e.person.name.find(' '), std::string::npos);
    } else if (e.kind == NexmarkKind::kAuction) {
      EXPECT_GE(e.auction.category, 10);
      EXPECT_LE(e.auction.category, 14);
      EXPECT_GE(e.auction.initialBid, 100);        // round(10^0 * 100)
      EXPECT_LE(e.auction.initialBid, 100000000);  // round(10^6 * 100)
      EXPECT_GE(e.auction.reserve, e.auction.initialBid + 100);
      EXPECT_GT(e.auction.expires, e.auction.dateTime);
      EXPECT_LT(e.auction.itemName.size(), 20u);
      EXPECT_LT(e.auction.description.size(), 100u);
    } else {
      EXPECT_GE(e.bid.price, 100);
      EXPECT_LE(e.bid.price, 100000000);
      EXPECT_TRUE(e.bid.url.starts_with("https://www.nexmark.com/")) << e.bid.url;
      if (hot.count(e.bid.channel)) {
        ++hot_count;
      } else {
        ASSERT_TRUE(e.bid.channel.starts_with("channel-")) << e.bid.channel;
        const int number = std::stoi(e.bid.channel.substr(8));
        EXPECT_GE(number, 0);
        EXPECT_LT(number, 10000);
      }
      // Padding: 100 - 32 = 68 bytes +- 20% (delta 14): [54, 82).
      EXPECT_GE(e.bid.extra.size(), 54u);
      EXPECT_LT(e.bid.extra.size(), 82u);
      bid_extra_total += static_cast<int64_t>(e.bid.extra.size());
      ++bid_count;
    }
  }
  // Hot channels are drawn with probability 1/2.
  EXPECT_GT(hot_count * 10, bid_count * 4);
  EXPECT_LT(hot_count * 10, bid_count * 6);
  EXPECT_NEAR(static_cast<double>(bid_extra_total) / static_cast<double>(bid_count), 67.5, 1.5);
}

TEST(NexmarkSequenceTest, BidUrlsAreFixedPerChannel) {
  std::map<std::string, std::set<std::string>> urls;
  for (const auto& e : Drain(Make(Bounded(20000)))) {
    if (e.kind == NexmarkKind::kBid) urls[e.bid.channel].insert(e.bid.url);
  }
  for (const auto& [channel, set] : urls) EXPECT_EQ(set.size(), 1u) << channel;
}

TEST(NexmarkSequenceTest, OutOfOrderGroupsPermuteTimestampsAboveTheWatermark) {
  NexmarkConfig c = Bounded(1000);
  c.out_of_order_group_size = 10;
  c.rate = 1000;  // one event per millisecond, so timestamps are the event numbers
  c.base_time = 0;
  auto gen = Make(c);
  std::vector<TimestampMs> stamps;
  std::vector<TimestampMs> watermarks;
  NexmarkEvent e;
  while (gen.HasNext()) {
    watermarks.push_back(gen.CurrentWatermark());
    gen.Next(&e);
    stamps.push_back(e.timestamp);
  }
  ASSERT_EQ(stamps.size(), 1000u);
  for (size_t group = 0; group < 1000; group += 10) {
    std::vector<TimestampMs> g(stamps.begin() + group, stamps.begin() + group + 10);
    std::vector<TimestampMs> expected(10);
    for (int i = 0; i < 10; ++i) expected[i] = static_cast<TimestampMs>(group) + i;
    std::sort(g.begin(), g.end());
    EXPECT_EQ(g, expected) << "group at " << group;
  }
  EXPECT_FALSE(std::is_sorted(stamps.begin(), stamps.end()));
  // The watermark before event i bounds every later timestamp.
  for (size_t i = 0; i < stamps.size(); ++i) {
    const TimestampMs later_min = *std::min_element(stamps.begin() + i, stamps.end());
    ASSERT_LE(watermarks[i], later_min) << "index " << i;
  }
}

TEST(NexmarkSequenceTest, NextOfKindSkipsOtherKinds) {
  std::vector<NexmarkEvent> expected;
  for (auto& e : Drain(Make(Bounded(3000), 1, 3))) {
    if (e.kind == NexmarkKind::kAuction) expected.push_back(std::move(e));
  }
  auto gen = Make(Bounded(3000), 1, 3);
  std::vector<NexmarkEvent> got;
  NexmarkEvent e;
  while (gen.NextOfKind(NexmarkKind::kAuction, &e)) got.push_back(e);
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_FALSE(got.empty());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(SameEvent(got[i], expected[i]));
}

TEST(NexmarkSequenceTest, RestoredPositionContinuesWhereTheSnapshotWas) {
  auto gen = Make(Bounded(500), 1, 2);
  NexmarkEvent e;
  for (int i = 0; i < 37; ++i) gen.Next(&e);
  BinaryWriter w;
  gen.SnapshotPosition(&w);
  std::vector<NexmarkEvent> rest;
  while (gen.HasNext()) {
    gen.Next(&e);
    rest.push_back(e);
  }

  auto restored = Make(Bounded(500), 1, 2);
  BinaryReader r(w.data());
  ASSERT_TRUE(restored.RestorePosition(&r).ok());
  std::vector<NexmarkEvent> again;
  while (restored.HasNext()) {
    restored.Next(&e);
    again.push_back(e);
  }
  ASSERT_EQ(again.size(), rest.size());
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_TRUE(SameEvent(again[i], rest[i]));

  auto other = Make(Bounded(500), 0, 3);
  BinaryReader r2(w.data());
  const Status s = other.RestorePosition(&r2);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("parallelism"), std::string::npos) << s.message();

  BinaryReader truncated(std::string_view(w.data()).substr(0, 5));
  EXPECT_EQ(restored.RestorePosition(&truncated).code(), StatusCode::kCorruption);
}

TEST(NexmarkSequenceTest, BadConfigurationIsRejectedWithTheFieldName) {
  NexmarkConfig c;
  c.rate = 0;
  auto r = NexmarkGenerator::Create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("rate"), std::string::npos) << r.status().message();

  c = NexmarkConfig{};
  c.bid_proportion = -1;
  r = NexmarkGenerator::Create(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bid_proportion"), std::string::npos);

  c = NexmarkConfig{};
  c.events = -5;
  EXPECT_FALSE(NexmarkGenerator::Create(c).ok());

  r = NexmarkGenerator::Create(NexmarkConfig{}, 3, 3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);

  EXPECT_TRUE(ParseNexmarkKind("bid").ok());
  auto k = ParseNexmarkKind("bids");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("'bids'"), std::string::npos);
}

}  // namespace
}  // namespace flow::rt
