#pragma once
// NexmarkGenerator: the Nexmark benchmark's event sequence (persons, auctions, bids), generated
// deterministically from the event index, for the `nexmark` source and the benchmarks.
//
// The sequence follows the reference generator of Apache Beam's Nexmark suite and its Flink port
// (github.com/nexmark/nexmark): for event index i (0-based, counted over all kinds),
//   event number  n  = first_event_number + i, adjusted for out-of-order groups (see below)
//   event id      id = first_event_id + n
//   kind             = person if id % 50 < 1, auction if < 4, else bid (proportions 1 : 3 : 46)
//   timestamp        = base_time + (int64)(n * 1e6 / rate) / 1000        (milliseconds)
//   person id        = 1000 + id / 50                       (consecutive over persons)
//   auction id       = 1000 + (id / 50) * 3 + id % 50 - 1   (consecutive over auctions)
// and every other field is drawn from java.util.Random seeded with `id`, in the reference's order:
// hot sellers/bidders/auctions (1 - 1/ratio of the picks go to the "hot" id of the last 100),
// otherwise a recent id (the last `num_active_people` persons or `num_in_flight_auctions`
// auctions, plus a lead of 10 ids not yet created); prices round(10^(6u) * 100) cents; categories
// 10..14; six US states; ten cities; names from 11 first x 9 last names; `extra` padding so the
// average record size is avg_*_byte_size.
//
// Deviations from the reference, all documented in docs/language.md ("Nexmark"):
//  - Seeding: the Flink port draws from one unseeded Random per generator (its payload strings
//    differ on every run); we seed per event id as Beam does, so every run and every parallelism
//    produce identical events. Ids, kinds and timestamps follow the same formulas in both.
//  - Bid channel/url (Flink's additions): "Google", "Facebook", "Baidu", "Apple" with 50%, else
//    "channel-<k>" for k < 10000. The reference builds the URLs from an unseeded Random; ours are
//    fixed functions of k (same shape: https://www.nexmark.com/<a>/<b>/<c>/item.htm?query=1,
//    nine in ten with &channel_id=<abs(bit-reversed k)>).
//  - Bidder ids: the Flink port adds the first person id (1000) twice, so its bidders never match
//    a person; we add it once, as Beam does.
//  - Splitting: the reference splits into generators with separate id ranges that restart the
//    timeline; we give subtask s of P the indices i with i % P == s of the ONE sequence, so the
//    union over subtasks is exactly the single-generator sequence (and timestamps interleave).
//
// Threading: a NexmarkGenerator is used by one thread at a time; the const per-index functions
// may be called from any thread. Errors: Create() returns InvalidArgument naming the bad
// parameter; nothing else fails.

#include <cstdint>
#include <string>
#include <string_view>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"

namespace flow::rt {

// 2015-07-15T00:00:00Z, the fixed base time of the Beam reference generator.
inline constexpr TimestampMs kNexmarkDefaultBaseTime = 1436918400000;
inline constexpr int64_t kNexmarkFirstPersonId = 1000;
inline constexpr int64_t kNexmarkFirstAuctionId = 1000;
inline constexpr int64_t kNexmarkFirstCategoryId = 10;
inline constexpr int64_t kNexmarkNumCategories = 5;

struct NexmarkConfig {
  // Number of events of all kinds in the sequence; 0 = unbounded. Default: 0.
  int64_t events = 0;
  // Events per second of event time (the inter-event delay is 1e6 / rate microseconds).
  // Default: 10000 (the reference's firstEventRate).
  double rate = 10000;
  // Timestamp of event number 0. Default: kNexmarkDefaultBaseTime.
  TimestampMs base_time = kNexmarkDefaultBaseTime;
  // Offsets of the first event's id and number. Default: 0, 0 (Beam). Flink's nexmark source
  // at parallelism 1 uses 1, 1.
  int64_t first_event_id = 0;
  int64_t first_event_number = 0;
  // Proportions out of their sum. Default: 1 : 3 : 46.
  int32_t person_proportion = 1;
  int32_t auction_proportion = 3;
  int32_t bid_proportion = 46;
  // Average sizes in bytes the `extra` field pads records to. Default: 200, 500, 100.
  int32_t avg_person_byte_size = 200;
  int32_t avg_auction_byte_size = 500;
  int32_t avg_bid_byte_size = 100;
  // 1 - 1/ratio of picks go to a hot id. Default: 2, 4, 4.
  int32_t hot_auction_ratio = 2;
  int32_t hot_sellers_ratio = 4;
  int32_t hot_bidders_ratio = 4;
  // Window of recent ids random picks come from. Default: 100, 1000.
  int32_t num_in_flight_auctions = 100;
  int32_t num_active_people = 1000;
  // Events are shuffled within groups of this many consecutive numbers; 1 = in order. Default: 1.
  int64_t out_of_order_group_size = 1;

  // InvalidArgument naming the first bad field, e.g. "nexmark: rate must be > 0 (got 0)".
  [[nodiscard]] Status Validate() const;
};

enum class NexmarkKind { kPerson, kAuction, kBid };

// "person", "auction", "bid".
const char* NexmarkKindName(NexmarkKind kind);
// Parses "person" / "auction" / "bid"; InvalidArgument otherwise.
Result<NexmarkKind> ParseNexmarkKind(std::string_view text);

// Field names are Nexmark's own (as in the Flink SQL tables and the Flow built-in schemas).
struct NexmarkPerson {
  int64_t id = 0;
  std::string name;
  std::string emailAddress;
  std::string creditCard;
  std::string city;
  std::string state;
  TimestampMs dateTime = 0;
  std::string extra;
  bool operator==(const NexmarkPerson&) const = default;
};

struct NexmarkAuction {
  int64_t id = 0;
  std::string itemName;
  std::string description;
  int64_t initialBid = 0;  // cents
  int64_t reserve = 0;     // cents
  TimestampMs dateTime = 0;
  TimestampMs expires = 0;
  int64_t seller = 0;  // a person id
  int64_t category = 0;
  std::string extra;
  bool operator==(const NexmarkAuction&) const = default;
};

struct NexmarkBid {
  int64_t auction = 0;  // an auction id
  int64_t bidder = 0;   // a person id
  int64_t price = 0;    // cents
  std::string channel;
  std::string url;
  TimestampMs dateTime = 0;
  std::string extra;
  bool operator==(const NexmarkBid&) const = default;
};

// One event; only the member named by `kind` is filled.
struct NexmarkEvent {
  NexmarkKind kind = NexmarkKind::kBid;
  int64_t index = 0;  // position in the sequence
  TimestampMs timestamp = 0;
  NexmarkPerson person;
  NexmarkAuction auction;
  NexmarkBid bid;
};

class NexmarkGenerator {
 public:
  // A generator of the slice of `config`'s sequence owned by `subtask` of `parallelism`: the
  // indices i < config.events (all i when unbounded) with i % parallelism == subtask.
  static Result<NexmarkGenerator> Create(const NexmarkConfig& config, uint32_t subtask = 0,
                                         uint32_t parallelism = 1);

  // ---- The whole sequence, by index (pure functions of the config). ----
  int64_t EventNumber(int64_t index) const;  // adjusted for out-of-order groups
  int64_t EventId(int64_t index) const { return config_.first_event_id + EventNumber(index); }
  NexmarkKind KindAt(int64_t index) const;
  TimestampMs TimestampAt(int64_t index) const;
  // No event at `index` or later has a timestamp below this (the reference's watermark).
  TimestampMs WatermarkAt(int64_t index) const;
  void Generate(int64_t index, NexmarkEvent* out) const;
  void GeneratePerson(int64_t index, NexmarkPerson* out) const;
  void GenerateAuction(int64_t index, NexmarkAuction* out) const;
  void GenerateBid(int64_t index, NexmarkBid* out) const;

  // ---- This subtask's slice, in index order. ----
  bool HasNext() const { return config_.events == 0 || next_index_ < config_.events; }
  int64_t next_index() const { return next_index_; }
  // Generates the next event of the slice and advances. Requires HasNext().
  void Next(NexmarkEvent* out);
  // Advances to the next event of `kind` in the slice (skipping others without generating them)
  // and generates it; false when the slice ends first.
  bool NextOfKind(NexmarkKind kind, NexmarkEvent* out);
  // Lower bound of the timestamps of every event the slice has not returned yet.
  TimestampMs CurrentWatermark() const { return WatermarkAt(next_index_); }
  // How many indices of the slice were consumed (returned or skipped).
  int64_t consumed() const { return (next_index_ - subtask_) / parallelism_; }
  // Repositions the slice so that `consumed` indices have been consumed.
  [[nodiscard]] Status Seek(int64_t consumed);
  // For checkpoints: the slice position (and a fingerprint of the slice, checked on restore).
  void SnapshotPosition(BinaryWriter* out) const;
  [[nodiscard]] Status RestorePosition(BinaryReader* in);

  const NexmarkConfig& config() const { return config_; }

 private:
  NexmarkGenerator(const NexmarkConfig& config, uint32_t subtask, uint32_t parallelism);
  TimestampMs TimestampForNumber(int64_t event_number) const;

  NexmarkConfig config_;
  int64_t subtask_ = 0;
  int64_t parallelism_ = 1;
  int64_t next_index_ = 0;
  double inter_event_delay_us_ = 100;
};

}  // namespace flow::rt
