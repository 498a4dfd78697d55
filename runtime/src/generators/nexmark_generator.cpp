#include "flow/runtime/generators/nexmark.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "nexmark_model.h"

namespace flow::rt {

namespace m = nexmark_model;

namespace {

constexpr std::array<const char*, 6> kUsStates = {"AZ", "CA", "ID", "OR", "WA", "WY"};
constexpr std::array<const char*, 10> kUsCities = {
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
    "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
constexpr std::array<const char*, 11> kFirstNames = {
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"};
constexpr std::array<const char*, 9> kLastNames = {
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"};

template <size_t N>
const char* PickName(JavaRandom& random, const std::array<const char*, N>& names) {
  return names[static_cast<size_t>(random.NextInt(static_cast<int32_t>(N)))];
}

Status Positive(const char* name, int64_t value) {
  if (value > 0) return Status::Ok();
  return Status::InvalidArgument(fmt::format("nexmark: {} must be > 0 (got {})", name, value));
}

}  // namespace

Status NexmarkConfig::Validate() const {
  if (events < 0) {
    return Status::InvalidArgument(
        fmt::format("nexmark: events must be >= 0 (0 = unbounded), got {}", events));
  }
  if (!(rate > 0) || !std::isfinite(rate)) {
    return Status::InvalidArgument(fmt::format("nexmark: rate must be > 0 (got {})", rate));
  }
  if (first_event_id < 0 || first_event_number < 0) {
    return Status::InvalidArgument("nexmark: first_event_id and first_event_number must be >= 0");
  }
  FLOW_RETURN_IF_ERROR(Positive("person_proportion", person_proportion));
  FLOW_RETURN_IF_ERROR(Positive("auction_proportion", auction_proportion));
  FLOW_RETURN_IF_ERROR(Positive("bid_proportion", bid_proportion));
  FLOW_RETURN_IF_ERROR(Positive("avg_person_byte_size", avg_person_byte_size));
  FLOW_RETURN_IF_ERROR(Positive("avg_auction_byte_size", avg_auction_byte_size));
  FLOW_RETURN_IF_ERROR(Positive("avg_bid_byte_size", avg_bid_byte_size));
  FLOW_RETURN_IF_ERROR(Positive("hot_auction_ratio", hot_auction_ratio));
  FLOW_RETURN_IF_ERROR(Positive("hot_sellers_ratio", hot_sellers_ratio));
  FLOW_RETURN_IF_ERROR(Positive("hot_bidders_ratio", hot_bidders_ratio));
  FLOW_RETURN_IF_ERROR(Positive("num_in_flight_auctions", num_in_flight_auctions));
  FLOW_RETURN_IF_ERROR(Positive("num_active_people", num_active_people));
  FLOW_RETURN_IF_ERROR(Positive("out_of_order_group_size", out_of_order_group_size));
  // The sizes feed Java int arithmetic in the reference; keep them where that stays exact.
  constexpr int64_t kMaxSize = 1 << 24;
  if (avg_person_byte_size > kMaxSize || avg_auction_byte_size > kMaxSize ||
      avg_bid_byte_size > kMaxSize) {
    return Status::InvalidArgument(
        fmt::format("nexmark: average byte sizes must be <= {}", kMaxSize));
  }
  return Status::Ok();
}

const char* NexmarkKindName(NexmarkKind kind) {
  switch (kind) {
    case NexmarkKind::kPerson:
      return "person";
    case NexmarkKind::kAuction:
      return "auction";
    case NexmarkKind::kBid:
      return "bid";
  }
  return "?";
}

Result<NexmarkKind> ParseNexmarkKind(std::string_view text) {
  if (text == "person") return NexmarkKind::kPerson;
  if (text == "auction") return NexmarkKind::kAuction;
  if (text == "bid") return NexmarkKind::kBid;
  return Status::InvalidArgument(
      fmt::format("nexmark: kind must be person, auction or bid (got '{}')", text));
}

Result<NexmarkGenerator> NexmarkGenerator::Create(const NexmarkConfig& config, uint32_t subtask,
                                                  uint32_t parallelism) {
  FLOW_RETURN_IF_ERROR(config.Validate());
  if (parallelism == 0 || subtask >= parallelism) {
    return Status::InvalidArgument(fmt::format(
        "nexmark: subtask {} is not in 0..parallelism-1 (parallelism {})", subtask, parallelism));
  }
  return NexmarkGenerator(config, subtask, parallelism);
}

NexmarkGenerator::NexmarkGenerator(const NexmarkConfig& config, uint32_t subtask,
                                   uint32_t parallelism)
    : config_(config),
      subtask_(subtask),
      parallelism_(parallelism),
      next_index_(subtask),
      inter_event_delay_us_(1000000.0 / config.rate) {}

int64_t NexmarkGenerator::EventNumber(int64_t index) const {
  const int64_t n = config_.out_of_order_group_size;
  const int64_t number = config_.first_event_number + index;
  if (n == 1) return number;
  return (number / n) * n + (number * 953) % n;
}

NexmarkKind NexmarkGenerator::KindAt(int64_t index) const {
  const int64_t rem = EventId(index) % m::TotalProportion(config_);
  if (rem < config_.person_proportion) return NexmarkKind::kPerson;
  if (rem < config_.person_proportion + config_.auction_proportion) return NexmarkKind::kAuction;
  return NexmarkKind::kBid;
}

TimestampMs NexmarkGenerator::TimestampForNumber(int64_t event_number) const {
  // As the reference: truncate the microseconds to an integer, then to milliseconds.
  return config_.base_time +
         static_cast<int64_t>(static_cast<double>(event_number) * inter_event_delay_us_) / 1000;
}

TimestampMs NexmarkGenerator::TimestampAt(int64_t index) const {
  return TimestampForNumber(EventNumber(index));
}

TimestampMs NexmarkGenerator::WatermarkAt(int64_t index) const {
  const int64_t n = config_.out_of_order_group_size;
  const int64_t number = config_.first_event_number + index;
  return TimestampForNumber((number / n) * n);
}

void NexmarkGenerator::Generate(int64_t index, NexmarkEvent* out) const {
  out->kind = KindAt(index);
  out->index = index;
  out->timestamp = TimestampAt(index);
  switch (out->kind) {
    case NexmarkKind::kPerson:
      GeneratePerson(index, &out->person);
      break;
    case NexmarkKind::kAuction:
      GenerateAuction(index, &out->auction);
      break;
    case NexmarkKind::kBid:
      GenerateBid(index, &out->bid);
      break;
  }
}

void NexmarkGenerator::GeneratePerson(int64_t index, NexmarkPerson* out) const {
  const int64_t event_id = EventId(index);
  JavaRandom random(event_id);
  out->id = m::LastBase0PersonId(config_, event_id) + kNexmarkFirstPersonId;
  out->name = PickName(random, kFirstNames);
  out->name += ' ';
  out->name += PickName(random, kLastNames);
  std::string part;
  m::NextString(random, 7, ' ', &out->emailAddress);
  out->emailAddress += '@';
  m::NextString(random, 5, ' ', &part);
  out->emailAddress += part;
  out->emailAddress += ".com";
  out->creditCard.clear();
  for (int i = 0; i < 4; ++i) {
    if (i > 0) out->creditCard += ' ';
    out->creditCard += fmt::format("{:04d}", random.NextInt(10000));
  }
  out->city = PickName(random, kUsCities);
  out->state = PickName(random, kUsStates);
  out->dateTime = TimestampAt(index);
  const int64_t current_size =
      8 + static_cast<int64_t>(out->name.size() + out->emailAddress.size() +
                               out->creditCard.size() + out->city.size() + out->state.size());
  m::NextExtra(random, current_size, config_.avg_person_byte_size, &out->extra);
}

void NexmarkGenerator::GenerateAuction(int64_t index, NexmarkAuction* out) const {
  const int64_t event_id = EventId(index);
  const TimestampMs timestamp = TimestampAt(index);
  JavaRandom random(event_id);
  out->id = m::LastBase0AuctionId(config_, event_id) + kNexmarkFirstAuctionId;
  int64_t seller;
  if (random.NextInt(config_.hot_sellers_ratio) > 0) {
    // The first person of the batch of the last kHotSellerRatio persons.
    seller = (m::LastBase0PersonId(config_, event_id) / m::kHotSellerRatio) * m::kHotSellerRatio;
  } else {
    seller = m::NextBase0PersonId(config_, event_id, random);
  }
  out->seller = seller + kNexmarkFirstPersonId;
  out->category = kNexmarkFirstCategoryId + random.NextInt(kNexmarkNumCategories);
  out->initialBid = m::NextPrice(random);
  // Auction length: on average the time until num_in_flight_auctions more auctions exist.
  const int64_t events_for_auctions =
      (int64_t{config_.num_in_flight_auctions} * m::TotalProportion(config_)) /
      config_.auction_proportion;
  const TimestampMs future_auction = TimestampForNumber(EventNumber(index) + events_for_auctions);
  const int64_t horizon_ms = future_auction - timestamp;
  out->expires = timestamp + 1 + m::NextLong(random, std::max<int64_t>(horizon_ms * 2, 1));
  m::NextString(random, 20, ' ', &out->itemName);
  m::NextString(random, 100, ' ', &out->description);
  out->reserve = out->initialBid + m::NextPrice(random);
  out->dateTime = timestamp;
  const int64_t current_size =
      8 + static_cast<int64_t>(out->itemName.size() + out->description.size()) + 8 + 8 + 8 + 8 + 8;
  m::NextExtra(random, current_size, config_.avg_auction_byte_size, &out->extra);
}

void NexmarkGenerator::GenerateBid(int64_t index, NexmarkBid* out) const {
  const int64_t event_id = EventId(index);
  JavaRandom random(event_id);
  int64_t auction;
  if (random.NextInt(config_.hot_auction_ratio) > 0) {
    // The first auction of the batch of the last kHotAuctionRatio auctions.
    auction =
        (m::LastBase0AuctionId(config_, event_id) / m::kHotAuctionRatio) * m::kHotAuctionRatio;
  } else {
    auction = m::NextBase0AuctionId(config_, event_id, random);
  }
  out->auction = auction + kNexmarkFirstAuctionId;
  int64_t bidder;
  if (random.NextInt(config_.hot_bidders_ratio) > 0) {
    // The second person of the batch, so hot bidders and hot sellers differ.
    bidder =
        (m::LastBase0PersonId(config_, event_id) / m::kHotBidderRatio) * m::kHotBidderRatio + 1;
  } else {
    bidder = m::NextBase0PersonId(config_, event_id, random);
  }
  out->bidder = bidder + kNexmarkFirstPersonId;
  out->price = m::NextPrice(random);
  if (random.NextInt(2) > 0) {
    m::HotChannel(random.NextInt(m::kHotChannelCount), &out->channel, &out->url);
  } else {
    m::NumberedChannel(random.NextInt(m::kChannelCount), &out->channel, &out->url);
  }
  out->dateTime = TimestampAt(index);
  m::NextExtra(random, 8 + 8 + 8 + 8, config_.avg_bid_byte_size, &out->extra);
}

void NexmarkGenerator::Next(NexmarkEvent* out) {
  Generate(next_index_, out);
  next_index_ += parallelism_;
}

bool NexmarkGenerator::NextOfKind(NexmarkKind kind, NexmarkEvent* out) {
  while (HasNext()) {
    const int64_t index = next_index_;
    next_index_ += parallelism_;
    if (KindAt(index) == kind) {
      Generate(index, out);
      return true;
    }
  }
  return false;
}

Status NexmarkGenerator::Seek(int64_t consumed) {
  if (consumed < 0) {
    return Status::InvalidArgument(fmt::format("nexmark: cannot seek to position {}", consumed));
  }
  next_index_ = subtask_ + consumed * parallelism_;
  return Status::Ok();
}

void NexmarkGenerator::SnapshotPosition(BinaryWriter* out) const {
  out->PutI64(subtask_);
  out->PutI64(parallelism_);
  out->PutI64(consumed());
}

Status NexmarkGenerator::RestorePosition(BinaryReader* in) {
  int64_t subtask = 0;
  int64_t parallelism = 0;
  int64_t consumed = 0;
  FLOW_RETURN_IF_ERROR(in->GetI64(&subtask));
  FLOW_RETURN_IF_ERROR(in->GetI64(&parallelism));
  FLOW_RETURN_IF_ERROR(in->GetI64(&consumed));
  if (subtask != subtask_ || parallelism != parallelism_) {
    return Status::InvalidArgument(fmt::format(
        "nexmark: the snapshot is of subtask {} of {}, this generator is subtask {} of {} "
        "(a generator source cannot be restored at another parallelism)",
        subtask, parallelism, subtask_, parallelism_));
  }
  return Seek(consumed);
}

}  // namespace flow::rt
