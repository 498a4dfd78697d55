package flow.bench;

import java.util.Random;

/**
 * A Java port of Flow's NexmarkGenerator (runtime/include/flow/runtime/generators/nexmark.h):
 * every field of event {@code index} is a pure function of the index and the config, drawn from
 * {@code new Random(eventId)} in the same order as the C++ code, so the Flink peer sees exactly the
 * events Flow and the limit programs see. {@code bench/run --check-generator} compares the two.
 *
 * <p>Only the default proportions (1 : 3 : 46), sizes and ratios are supported; event count, rate
 * and base time are parameters. Instances are immutable and thread-safe.
 */
public final class NexmarkGenerator implements java.io.Serializable {
  public static final long DEFAULT_BASE_TIME = 1436918400000L;
  static final long FIRST_PERSON_ID = 1000;
  static final long FIRST_AUCTION_ID = 1000;
  static final long FIRST_CATEGORY_ID = 10;
  static final int NUM_CATEGORIES = 5;
  static final int PERSON_PROPORTION = 1;
  static final int AUCTION_PROPORTION = 3;
  static final int BID_PROPORTION = 46;
  static final int TOTAL_PROPORTION = 50;
  static final int AVG_PERSON_BYTES = 200;
  static final int AVG_AUCTION_BYTES = 500;
  static final int AVG_BID_BYTES = 100;
  static final int HOT_AUCTION_RATIO = 2;
  static final int HOT_SELLERS_RATIO = 4;
  static final int HOT_BIDDERS_RATIO = 4;
  static final int NUM_IN_FLIGHT_AUCTIONS = 100;
  static final int NUM_ACTIVE_PEOPLE = 1000;
  static final long PERSON_ID_LEAD = 10;
  static final long AUCTION_ID_LEAD = 10;
  static final long HOT_SELLER_BATCH = 100;
  static final long HOT_AUCTION_BATCH = 100;
  static final long HOT_BIDDER_BATCH = 100;
  static final int HOT_CHANNELS = 4;
  static final int CHANNELS = 10000;

  private static final String[] US_STATES = {"AZ", "CA", "ID", "OR", "WA", "WY"};
  private static final String[] US_CITIES = {
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
    "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"
  };
  private static final String[] FIRST_NAMES = {
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"
  };
  private static final String[] LAST_NAMES = {
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"
  };
  private static final String[] HOT_CHANNEL_NAMES = {"Google", "Facebook", "Baidu", "Apple"};
  private static final long HOT_URL_SEED = 0x6e65786d61726bL;

  private final long events;
  private final long baseTime;
  private final double interEventDelayUs;

  public NexmarkGenerator(long events, double rate, long baseTime) {
    this.events = events;
    this.baseTime = baseTime;
    this.interEventDelayUs = 1000000.0 / rate;
  }

  public long events() {
    return events;
  }

  public static int kindAt(long index) {
    long rem = index % TOTAL_PROPORTION;
    if (rem < PERSON_PROPORTION) return Event.PERSON;
    if (rem < PERSON_PROPORTION + AUCTION_PROPORTION) return Event.AUCTION;
    return Event.BID;
  }

  public long timestampAt(long index) {
    return baseTime + ((long) (index * interEventDelayUs)) / 1000;
  }

  // ---- Id arithmetic (event id == index: first_event_id 0, first_event_number 0, in order). ----

  static long lastBase0PersonId(long eventId) {
    long epoch = eventId / TOTAL_PROPORTION;
    long offset = eventId % TOTAL_PROPORTION;
    if (offset >= PERSON_PROPORTION) offset = PERSON_PROPORTION - 1;
    return epoch * PERSON_PROPORTION + offset;
  }

  static long lastBase0AuctionId(long eventId) {
    long epoch = eventId / TOTAL_PROPORTION;
    long offset = eventId % TOTAL_PROPORTION;
    if (offset < PERSON_PROPORTION) {
      --epoch;
      offset = AUCTION_PROPORTION - 1;
    } else if (offset >= PERSON_PROPORTION + AUCTION_PROPORTION) {
      offset = AUCTION_PROPORTION - 1;
    } else {
      offset -= PERSON_PROPORTION;
    }
    return epoch * AUCTION_PROPORTION + offset;
  }

  static long nextBase0PersonId(long eventId, Random random) {
    long numPeople = lastBase0PersonId(eventId) + 1;
    long active = Math.min(numPeople, NUM_ACTIVE_PEOPLE);
    long n = nextLong(random, active + PERSON_ID_LEAD);
    return numPeople - active + n;
  }

  static long nextBase0AuctionId(long eventId, Random random) {
    long maxAuction = lastBase0AuctionId(eventId);
    long minAuction = Math.max(maxAuction - NUM_IN_FLIGHT_AUCTIONS, 0);
    return minAuction + nextLong(random, maxAuction - minAuction + 1 + AUCTION_ID_LEAD);
  }

  static long nextLong(Random random, long n) {
    if (n < Integer.MAX_VALUE) return random.nextInt((int) n);
    return Math.abs(random.nextLong() % n);
  }

  static long nextPrice(Random random) {
    double x = Math.pow(10.0, random.nextDouble() * 6.0) * 100.0;
    double f = Math.floor(x);
    return (long) (x - f >= 0.5 ? f + 1.0 : f);
  }

  static String nextString(Random random, int maxLength, char special) {
    int len = 3 + random.nextInt(maxLength - 3);
    char[] chars = new char[len];
    for (int i = 0; i < len; ++i) {
      chars[i] = random.nextInt(13) == 0 ? special : (char) ('a' + random.nextInt(26));
    }
    return new String(chars).trim();
  }

  static String nextExactString(Random random, int length) {
    char[] chars = new char[Math.max(length, 0)];
    int rnd = 0;
    int n = 0;
    for (int i = 0; i < chars.length; ++i) {
      if (n == 0) {
        rnd = random.nextInt();
        n = 6;
      }
      chars[i] = (char) ('a' + rnd % 26);
      rnd /= 26;
      --n;
    }
    return new String(chars);
  }

  static String nextExtra(Random random, long currentSize, long desiredAverage) {
    if (currentSize > desiredAverage) return "";
    desiredAverage -= currentSize;
    int delta = (int) Math.floor(desiredAverage * 0.2 + 0.5);
    int minSize = (int) (desiredAverage - delta);
    int size = minSize + (delta == 0 ? 0 : random.nextInt(2 * delta));
    return nextExactString(random, size);
  }

  // ---- Channels and URLs: fixed functions of the channel number, as in nexmark_model.cpp. ----

  private static String baseUrl(Random random) {
    StringBuilder url = new StringBuilder("https://www.nexmark.com/");
    for (int i = 0; i < 3; ++i) {
      url.append(nextString(random, 5, '_')).append('/');
    }
    url.append("item.htm?query=1");
    return url.toString();
  }

  private static final class Channels {
    static final String[] HOT_URLS = new String[HOT_CHANNELS];
    static final String[] NAMES = new String[CHANNELS];
    static final String[] URLS = new String[CHANNELS];

    static {
      for (int i = 0; i < HOT_CHANNELS; ++i) HOT_URLS[i] = baseUrl(new Random(HOT_URL_SEED + i));
      for (int k = 0; k < CHANNELS; ++k) {
        Random random = new Random(k);
        String url = baseUrl(random);
        if (random.nextInt(10) > 0) url += "&channel_id=" + Math.abs(Integer.reverse(k));
        NAMES[k] = "channel-" + k;
        URLS[k] = url;
      }
    }
  }

  // ---- Events. ----

  public void generatePerson(long index, Person out) {
    Random random = new Random(index);
    out.id = lastBase0PersonId(index) + FIRST_PERSON_ID;
    out.name = FIRST_NAMES[random.nextInt(FIRST_NAMES.length)] + " "
        + LAST_NAMES[random.nextInt(LAST_NAMES.length)];
    out.emailAddress = nextString(random, 7, ' ') + "@" + nextString(random, 5, ' ') + ".com";
    StringBuilder cc = new StringBuilder(19);
    for (int i = 0; i < 4; ++i) {
      if (i > 0) cc.append(' ');
      String digits = Integer.toString(random.nextInt(10000));
      for (int pad = digits.length(); pad < 4; ++pad) cc.append('0');
      cc.append(digits);
    }
    out.creditCard = cc.toString();
    out.city = US_CITIES[random.nextInt(US_CITIES.length)];
    out.state = US_STATES[random.nextInt(US_STATES.length)];
    out.dateTime = timestampAt(index);
    long currentSize = 8 + out.name.length() + out.emailAddress.length()
        + out.creditCard.length() + out.city.length() + out.state.length();
    out.extra = nextExtra(random, currentSize, AVG_PERSON_BYTES);
  }

  public void generateAuction(long index, Auction out) {
    long timestamp = timestampAt(index);
    Random random = new Random(index);
    out.id = lastBase0AuctionId(index) + FIRST_AUCTION_ID;
    long seller;
    if (random.nextInt(HOT_SELLERS_RATIO) > 0) {
      seller = (lastBase0PersonId(index) / HOT_SELLER_BATCH) * HOT_SELLER_BATCH;
    } else {
      seller = nextBase0PersonId(index, random);
    }
    out.seller = seller + FIRST_PERSON_ID;
    out.category = FIRST_CATEGORY_ID + random.nextInt(NUM_CATEGORIES);
    out.initialBid = nextPrice(random);
    long eventsForAuctions = ((long) NUM_IN_FLIGHT_AUCTIONS * TOTAL_PROPORTION) / AUCTION_PROPORTION;
    long futureAuction = timestampAt(index + eventsForAuctions);
    long horizonMs = futureAuction - timestamp;
    out.expires = timestamp + 1 + nextLong(random, Math.max(horizonMs * 2, 1));
    out.itemName = nextString(random, 20, ' ');
    out.description = nextString(random, 100, ' ');
    out.reserve = out.initialBid + nextPrice(random);
    out.dateTime = timestamp;
    long currentSize = 8 + out.itemName.length() + out.description.length() + 8 + 8 + 8 + 8 + 8;
    out.extra = nextExtra(random, currentSize, AVG_AUCTION_BYTES);
  }

  public void generateBid(long index, Bid out) {
    Random random = new Random(index);
    long auction;
    if (random.nextInt(HOT_AUCTION_RATIO) > 0) {
      auction = (lastBase0AuctionId(index) / HOT_AUCTION_BATCH) * HOT_AUCTION_BATCH;
    } else {
      auction = nextBase0AuctionId(index, random);
    }
    out.auction = auction + FIRST_AUCTION_ID;
    long bidder;
    if (random.nextInt(HOT_BIDDERS_RATIO) > 0) {
      bidder = (lastBase0PersonId(index) / HOT_BIDDER_BATCH) * HOT_BIDDER_BATCH + 1;
    } else {
      bidder = nextBase0PersonId(index, random);
    }
    out.bidder = bidder + FIRST_PERSON_ID;
    out.price = nextPrice(random);
    if (random.nextInt(2) > 0) {
      int k = random.nextInt(HOT_CHANNELS);
      out.channel = HOT_CHANNEL_NAMES[k];
      out.url = Channels.HOT_URLS[k];
    } else {
      int k = random.nextInt(CHANNELS);
      out.channel = Channels.NAMES[k];
      out.url = Channels.URLS[k];
    }
    out.dateTime = timestampAt(index);
    out.extra = nextExtra(random, 8 + 8 + 8 + 8, AVG_BID_BYTES);
  }
}
