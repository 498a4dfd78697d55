#pragma once
// Internal to the generators area: the pieces of the Nexmark reference model shared by the person,
// auction and bid generators (id arithmetic, strings, prices). Each function follows the reference
// generator's function of the same name, including the order in which it draws random numbers.

#include <cstdint>
#include <string>

#include "flow/runtime/generators/java_random.h"
#include "flow/runtime/generators/nexmark.h"

namespace flow::rt::nexmark_model {

inline constexpr int64_t kPersonIdLead = 10;
inline constexpr int64_t kAuctionIdLead = 10;
inline constexpr int64_t kHotSellerRatio = 100;
inline constexpr int64_t kHotAuctionRatio = 100;
inline constexpr int64_t kHotBidderRatio = 100;

inline int64_t TotalProportion(const NexmarkConfig& c) {
  return int64_t{c.person_proportion} + c.auction_proportion + c.bid_proportion;
}

// The last person id (base 0) created at or before event `event_id`.
int64_t LastBase0PersonId(const NexmarkConfig& c, int64_t event_id);
// The last auction id (base 0) created at or before event `event_id` (-1 before the first).
int64_t LastBase0AuctionId(const NexmarkConfig& c, int64_t event_id);
// A random recent person id (base 0), possibly up to kPersonIdLead ids ahead.
int64_t NextBase0PersonId(const NexmarkConfig& c, int64_t event_id, JavaRandom& random);
// A random in-flight auction id (base 0), possibly up to kAuctionIdLead ids ahead.
int64_t NextBase0AuctionId(const NexmarkConfig& c, int64_t event_id, JavaRandom& random);

// LongGenerator.nextLong: uniform in [0, n) (skewed for n >= 2^31, as in the reference).
int64_t NextLong(JavaRandom& random, int64_t n);
// PriceGenerator.nextPrice: round(10^(6u) * 100) cents.
int64_t NextPrice(JavaRandom& random);
// StringsGenerator.nextString: 3..max_length-1 characters of a-z and `special`, then trimmed.
void NextString(JavaRandom& random, int max_length, char special, std::string* out);
// StringsGenerator.nextExactString.
void NextExactString(JavaRandom& random, int length, std::string* out);
// StringsGenerator.nextExtra: padding so current_size + its length averages desired_average.
void NextExtra(JavaRandom& random, int64_t current_size, int64_t desired_average, std::string* out);

// The bid channel and URL for a draw; see nexmark.h for how they deviate from the reference.
void HotChannel(int index, std::string* channel, std::string* url);
void NumberedChannel(int number, std::string* channel, std::string* url);
inline constexpr int kHotChannelCount = 4;
inline constexpr int kChannelCount = 10000;

}  // namespace flow::rt::nexmark_model
