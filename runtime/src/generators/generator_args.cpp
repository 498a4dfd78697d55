#include "flow/runtime/generators/generator_args.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "flow/runtime/common/time.h"

namespace flow::rt {

namespace {

using T = GeneratorArgType;

// Names follow the Nexmark configuration (avgPersonByteSize -> avg_person_byte_size, ...).
constexpr std::array<GeneratorArgSpec, 15> kNexmarkSpecs = {{
    {"kind", T::kKind, true, "", "person, auction or bid: the events this source emits"},
    {"events", T::kInt, false, "unbounded", "events of all kinds in the sequence"},
    {"rate", T::kNumber, false, "10000", "events per second of event time"},
    {"base_time", T::kTimestamp, false, "2015-07-15T00:00:00Z", "event time of event 0"},
    {"first_event_id", T::kInt, false, "0", "offset added to every event id"},
    {"first_event_number", T::kInt, false, "0", "offset of the event numbers"},
    {"avg_person_byte_size", T::kInt, false, "200", "average person size in bytes"},
    {"avg_auction_byte_size", T::kInt, false, "500", "average auction size in bytes"},
    {"avg_bid_byte_size", T::kInt, false, "100", "average bid size in bytes"},
    {"hot_auction_ratio", T::kInt, false, "2", "1 - 1/ratio of bids go to a hot auction"},
    {"hot_sellers_ratio", T::kInt, false, "4", "1 - 1/ratio of auctions have a hot seller"},
    {"hot_bidders_ratio", T::kInt, false, "4", "1 - 1/ratio of bids have a hot bidder"},
    {"num_in_flight_auctions", T::kInt, false, "100", "recent auctions bids pick from"},
    {"num_active_people", T::kInt, false, "1000", "recent persons sellers and bidders come from"},
    {"out_of_order_group_size", T::kInt, false, "1",
     "events are shuffled within groups of this size"},
}};

constexpr std::array<GeneratorArgSpec, 8> kDatagenSpecs = {{
    {"count", T::kInt, false, "unbounded", "records to generate"},
    {"rate", T::kNumber, false, "1000", "records per second of event time"},
    {"seed", T::kInt, false, "0", "seed of the generator"},
    {"base_time", T::kTimestamp, false, "2026-01-01T00:00:00Z", "event time of record 0"},
    {"disorder", T::kDuration, false, "0ms", "timestamps move back by up to this much"},
    {"cardinality", T::kInt, false, "100", "distinct values per string field"},
    {"max", T::kInt, false, "1000", "int fields are uniform in [0, max)"},
    {"nulls", T::kNumber, false, "0.1", "probability that a nullable field is null"},
}};

Status BadValue(std::string_view source, std::string_view name, std::string_view expected,
                std::string_view text) {
  return Status::InvalidArgument(
      fmt::format("{}: argument `{}`: expected {}, got `{}`", source, name, expected, text));
}

bool ParseInt(std::string_view text, int64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

bool ParseNumber(std::string_view text, double* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && !text.empty() && std::isfinite(*out);
}

bool ParseTimestampText(std::string_view text, int64_t* out) {
  return ParseInt(text, out) || ParseTimestamp(text, out);
}

// Checks names against `specs`; reports the first unknown or missing argument.
Status CheckNames(std::string_view source, std::span<const GeneratorArgSpec> specs,
                  const std::map<std::string, std::string>& args) {
  for (const auto& [name, value] : args) {
    bool known = false;
    for (const auto& spec : specs) known = known || spec.name == name;
    if (!known) {
      std::string valid;
      for (const auto& spec : specs) valid += (valid.empty() ? "" : ", ") + std::string(spec.name);
      return Status::InvalidArgument(
          fmt::format("{}: unknown argument `{}` (valid: {})", source, name, valid));
    }
  }
  for (const auto& spec : specs) {
    if (spec.required && args.find(std::string(spec.name)) == args.end()) {
      return Status::InvalidArgument(fmt::format("{}: missing argument `{}`", source, spec.name));
    }
  }
  return Status::Ok();
}

// Reads `name` into `*out` when present; leaves the default otherwise.
class ArgReader {
 public:
  ArgReader(std::string_view source, const std::map<std::string, std::string>& args)
      : source_(source), args_(args) {}

  Status Int(std::string_view name, int64_t* out) const {
    const std::string* text = Find(name);
    if (text != nullptr && !ParseInt(*text, out))
      return BadValue(source_, name, "an integer", *text);
    return Status::Ok();
  }
  Status Int32(std::string_view name, int32_t* out) const {
    int64_t v = *out;
    FLOW_RETURN_IF_ERROR(Int(name, &v));
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      return BadValue(source_, name, "a 32-bit integer", *Find(name));
    }
    *out = static_cast<int32_t>(v);
    return Status::Ok();
  }
  Status Number(std::string_view name, double* out) const {
    const std::string* text = Find(name);
    if (text != nullptr && !ParseNumber(*text, out))
      return BadValue(source_, name, "a number", *text);
    return Status::Ok();
  }
  Status Duration(std::string_view name, int64_t* out) const {
    const std::string* text = Find(name);
    if (text != nullptr && !ParseDurationOrMillis(*text, out)) {
      return BadValue(source_, name, "a duration like 5s", *text);
    }
    return Status::Ok();
  }
  Status Timestamp(std::string_view name, int64_t* out) const {
    const std::string* text = Find(name);
    if (text != nullptr && !ParseTimestampText(*text, out)) {
      return BadValue(source_, name, "an RFC 3339 timestamp", *text);
    }
    return Status::Ok();
  }
  const std::string* Find(std::string_view name) const {
    auto it = args_.find(std::string(name));
    return it == args_.end() ? nullptr : &it->second;
  }

 private:
  std::string_view source_;
  const std::map<std::string, std::string>& args_;
};

}  // namespace

std::span<const GeneratorArgSpec> NexmarkArgSpecs() {
  return kNexmarkSpecs;
}
std::span<const GeneratorArgSpec> DatagenArgSpecs() {
  return kDatagenSpecs;
}

Result<NexmarkSourceArgs> ParseNexmarkArgs(const std::map<std::string, std::string>& args) {
  FLOW_RETURN_IF_ERROR(CheckNames("nexmark", NexmarkArgSpecs(), args));
  const ArgReader r("nexmark", args);
  NexmarkSourceArgs out;
  auto kind = ParseNexmarkKind(*r.Find("kind"));
  if (!kind.ok()) return BadValue("nexmark", "kind", "person, auction or bid", *r.Find("kind"));
  out.kind = kind.value();
  NexmarkConfig& c = out.config;
  FLOW_RETURN_IF_ERROR(r.Int("events", &c.events));
  FLOW_RETURN_IF_ERROR(r.Number("rate", &c.rate));
  FLOW_RETURN_IF_ERROR(r.Timestamp("base_time", &c.base_time));
  FLOW_RETURN_IF_ERROR(r.Int("first_event_id", &c.first_event_id));
  FLOW_RETURN_IF_ERROR(r.Int("first_event_number", &c.first_event_number));
  FLOW_RETURN_IF_ERROR(r.Int32("avg_person_byte_size", &c.avg_person_byte_size));
  FLOW_RETURN_IF_ERROR(r.Int32("avg_auction_byte_size", &c.avg_auction_byte_size));
  FLOW_RETURN_IF_ERROR(r.Int32("avg_bid_byte_size", &c.avg_bid_byte_size));
  FLOW_RETURN_IF_ERROR(r.Int32("hot_auction_ratio", &c.hot_auction_ratio));
  FLOW_RETURN_IF_ERROR(r.Int32("hot_sellers_ratio", &c.hot_sellers_ratio));
  FLOW_RETURN_IF_ERROR(r.Int32("hot_bidders_ratio", &c.hot_bidders_ratio));
  FLOW_RETURN_IF_ERROR(r.Int32("num_in_flight_auctions", &c.num_in_flight_auctions));
  FLOW_RETURN_IF_ERROR(r.Int32("num_active_people", &c.num_active_people));
  FLOW_RETURN_IF_ERROR(r.Int("out_of_order_group_size", &c.out_of_order_group_size));
  FLOW_RETURN_IF_ERROR(c.Validate());
  return out;
}

Result<DatagenConfig> ParseDatagenArgs(const std::map<std::string, std::string>& args) {
  FLOW_RETURN_IF_ERROR(CheckNames("datagen", DatagenArgSpecs(), args));
  const ArgReader r("datagen", args);
  DatagenConfig c;
  FLOW_RETURN_IF_ERROR(r.Int("count", &c.count));
  FLOW_RETURN_IF_ERROR(r.Number("rate", &c.rate));
  int64_t seed = 0;
  FLOW_RETURN_IF_ERROR(r.Int("seed", &seed));
  c.seed = static_cast<uint64_t>(seed);
  FLOW_RETURN_IF_ERROR(r.Timestamp("base_time", &c.base_time));
  FLOW_RETURN_IF_ERROR(r.Duration("disorder", &c.disorder));
  FLOW_RETURN_IF_ERROR(r.Int("cardinality", &c.cardinality));
  FLOW_RETURN_IF_ERROR(r.Int("max", &c.max_int));
  FLOW_RETURN_IF_ERROR(r.Number("nulls", &c.null_probability));
  FLOW_RETURN_IF_ERROR(c.Validate());
  return c;
}

}  // namespace flow::rt
