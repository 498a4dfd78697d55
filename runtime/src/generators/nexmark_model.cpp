#include "nexmark_model.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace flow::rt::nexmark_model {

int64_t LastBase0PersonId(const NexmarkConfig& c, int64_t event_id) {
  const int64_t total = TotalProportion(c);
  const int64_t epoch = event_id / total;
  int64_t offset = event_id % total;
  if (offset >= c.person_proportion) offset = c.person_proportion - 1;
  return epoch * c.person_proportion + offset;
}

int64_t LastBase0AuctionId(const NexmarkConfig& c, int64_t event_id) {
  const int64_t total = TotalProportion(c);
  int64_t epoch = event_id / total;
  int64_t offset = event_id % total;
  if (offset < c.person_proportion) {
    // A person: the last auction is the last one of the previous epoch.
    --epoch;
    offset = c.auction_proportion - 1;
  } else if (offset >= c.person_proportion + c.auction_proportion) {
    // A bid: the last auction of this epoch.
    offset = c.auction_proportion - 1;
  } else {
    offset -= c.person_proportion;
  }
  return epoch * c.auction_proportion + offset;
}

int64_t NextBase0PersonId(const NexmarkConfig& c, int64_t event_id, JavaRandom& random) {
  const int64_t num_people = LastBase0PersonId(c, event_id) + 1;
  const int64_t active = std::min<int64_t>(num_people, c.num_active_people);
  const int64_t n = NextLong(random, active + kPersonIdLead);
  return num_people - active + n;
}

int64_t NextBase0AuctionId(const NexmarkConfig& c, int64_t event_id, JavaRandom& random) {
  const int64_t max_auction = LastBase0AuctionId(c, event_id);
  const int64_t min_auction = std::max<int64_t>(max_auction - c.num_in_flight_auctions, 0);
  return min_auction + NextLong(random, max_auction - min_auction + 1 + kAuctionIdLead);
}

int64_t NextLong(JavaRandom& random, int64_t n) {
  if (n < int64_t{INT32_MAX}) return random.NextInt(static_cast<int32_t>(n));
  return std::llabs(random.NextLong() % n);
}

int64_t NextPrice(JavaRandom& random) {
  const double x = std::pow(10.0, random.NextDouble() * 6.0) * 100.0;
  // Java's Math.round: round half up.
  const double f = std::floor(x);
  return static_cast<int64_t>(x - f >= 0.5 ? f + 1.0 : f);
}

void NextString(JavaRandom& random, int max_length, char special, std::string* out) {
  constexpr int kMinStringLength = 3;
  const int len = kMinStringLength + random.NextInt(max_length - kMinStringLength);
  out->resize(static_cast<size_t>(len));
  char* p = out->data();
  for (int i = 0; i < len; ++i) {
    p[i] = random.NextInt(13) == 0 ? special : static_cast<char>('a' + random.NextInt(26));
  }
  // Java's String.trim(): drop characters <= ' ' at both ends.
  size_t end = out->size();
  while (end > 0 && static_cast<unsigned char>((*out)[end - 1]) <= ' ') --end;
  size_t begin = 0;
  while (begin < end && static_cast<unsigned char>((*out)[begin]) <= ' ') ++begin;
  out->resize(end);
  if (begin > 0) out->erase(0, begin);
}

void NextExactString(JavaRandom& random, int length, std::string* out) {
  out->resize(static_cast<size_t>(std::max(length, 0)));
  char* p = out->data();
  int32_t rnd = 0;
  int n = 0;  // random characters left in rnd
  while (length-- > 0) {
    if (n == 0) {
      rnd = random.NextInt();
      n = 6;  // log_26(2^31)
    }
    // Java's % keeps the sign, so negative draws give characters below 'a' ('H'..'`').
    *p++ = static_cast<char>('a' + rnd % 26);
    rnd /= 26;
    --n;
  }
}

void NextExtra(JavaRandom& random, int64_t current_size, int64_t desired_average,
               std::string* out) {
  if (current_size > desired_average) {
    out->clear();
    return;
  }
  desired_average -= current_size;
  // Java's (int) Math.round(x * 0.2) for a non-negative x.
  const auto delta =
      static_cast<int32_t>(std::floor(static_cast<double>(desired_average) * 0.2 + 0.5));
  const auto min_size = static_cast<int32_t>(desired_average - delta);
  const int32_t size = min_size + (delta == 0 ? 0 : random.NextInt(2 * delta));
  NextExactString(random, size, out);
}

namespace {

// Base URL built from a Random seeded with `seed`: the reference's shape with fixed seeds.
std::string BaseUrl(JavaRandom& random) {
  std::string url = "https://www.nexmark.com/";
  std::string part;
  for (int i = 0; i < 3; ++i) {
    NextString(random, 5, '_', &part);
    url += part;
    url += '/';
  }
  url += "item.htm?query=1";
  return url;
}

int32_t ReverseBits(int32_t v) {
  auto x = static_cast<uint32_t>(v);
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i) {
    r = (r << 1) | (x & 1u);
    x >>= 1;
  }
  return static_cast<int32_t>(r);
}

// The URLs of all channels in one contiguous buffer: bids pick channels at random, and a packed
// table (about 700 KB) stays in cache where 10000 separately allocated strings would not.
struct ChannelTable {
  std::array<std::string, kHotChannelCount> hot_urls;
  std::string blob;               // every channel's URL, back to back
  std::vector<uint32_t> offsets;  // URL k is blob[offsets[k], offsets[k + 1])
};

// Seeds of the fixed hot URLs ("nexmark" in ASCII, plus the index).
constexpr int64_t kHotUrlSeed = 0x6e65786d61726bLL;

const ChannelTable& Channels() {
  static const ChannelTable table = [] {
    ChannelTable t;
    for (int i = 0; i < kHotChannelCount; ++i) {
      JavaRandom random(kHotUrlSeed + i);
      t.hot_urls[static_cast<size_t>(i)] = BaseUrl(random);
    }
    t.offsets.reserve(kChannelCount + 1);
    for (int k = 0; k < kChannelCount; ++k) {
      t.offsets.push_back(static_cast<uint32_t>(t.blob.size()));
      JavaRandom random(k);
      t.blob += BaseUrl(random);
      if (random.NextInt(10) > 0) {
        const int32_t reversed = ReverseBits(k);
        // Java's Math.abs leaves INT_MIN as it is.
        const int64_t id = reversed == INT32_MIN ? int64_t{INT32_MIN} : std::llabs(reversed);
        t.blob += "&channel_id=" + std::to_string(id);
      }
    }
    t.offsets.push_back(static_cast<uint32_t>(t.blob.size()));
    return t;
  }();
  return table;
}

constexpr std::array<const char*, kHotChannelCount> kHotChannels = {"Google", "Facebook", "Baidu",
                                                                    "Apple"};

}  // namespace

void HotChannel(int index, std::string* channel, std::string* url) {
  *channel = kHotChannels[static_cast<size_t>(index)];
  *url = Channels().hot_urls[static_cast<size_t>(index)];
}

void NumberedChannel(int number, std::string* channel, std::string* url) {
  char digits[16];
  const auto end = std::to_chars(digits, digits + sizeof digits, number).ptr;
  channel->assign("channel-");
  channel->append(digits, end);
  const ChannelTable& table = Channels();
  const uint32_t begin = table.offsets[static_cast<size_t>(number)];
  const uint32_t stop = table.offsets[static_cast<size_t>(number) + 1];
  url->assign(table.blob, begin, stop - begin);
}

}  // namespace flow::rt::nexmark_model
