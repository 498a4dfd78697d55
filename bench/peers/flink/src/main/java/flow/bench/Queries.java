package flow.bench;

import java.time.Duration;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.api.java.tuple.Tuple5;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessAllWindowFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * The Nexmark queries on the DataStream API, with the semantics of bench/nexmark/*.flow (and of
 * the limit programs): same windows, same joins, same output columns. Each query ends in a
 * ChecksumSink.
 */
final class Queries {
  private Queries() {}

  static final long Q5_WINDOW_MS = 10000;
  static final long Q5_SLIDE_MS = 2000;
  static final long Q7_WINDOW_MS = 10000;
  static final long Q8_WINDOW_MS = 10000;
  static final long Q11_GAP_MS = 10000;

  static DataStream<Bid> bids(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    return env.addSource(new NexmarkSource<Bid>(gen, Event.BID), "bids", TypeInformation.of(Bid.class))
        .assignTimestampsAndWatermarks(WatermarkStrategy.<Bid>forMonotonousTimestamps()
            .withTimestampAssigner((b, ts) -> b.dateTime));
  }

  static DataStream<Auction> auctions(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    return env.addSource(new NexmarkSource<Auction>(gen, Event.AUCTION), "auctions",
            TypeInformation.of(Auction.class))
        .assignTimestampsAndWatermarks(WatermarkStrategy.<Auction>forMonotonousTimestamps()
            .withTimestampAssigner((a, ts) -> a.dateTime));
  }

  static DataStream<Person> persons(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    return env.addSource(new NexmarkSource<Person>(gen, Event.PERSON), "persons",
            TypeInformation.of(Person.class))
        .assignTimestampsAndWatermarks(WatermarkStrategy.<Person>forMonotonousTimestamps()
            .withTimestampAssigner((p, ts) -> p.dateTime));
  }

  static void build(String query, StreamExecutionEnvironment env, NexmarkGenerator gen) {
    switch (query) {
      case "q0" -> q0(env, gen);
      case "q1" -> q1(env, gen);
      case "q2" -> q2(env, gen);
      case "q3" -> q3(env, gen);
      case "q5" -> q5(env, gen);
      case "q7" -> q7(env, gen);
      case "q8" -> q8(env, gen);
      case "q11" -> q11(env, gen);
      default -> throw new IllegalArgumentException("unknown query " + query);
    }
  }

  static void q0(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    bids(env, gen)
        .map(b -> Tuple5.of(b.auction, b.bidder, b.price, b.dateTime, b.extra))
        .returns(Types.TUPLE(Types.LONG, Types.LONG, Types.LONG, Types.LONG, Types.STRING))
        .addSink(new ChecksumSink<>(t -> RowChecksum.row(t.f0, t.f1, t.f2, t.f3, t.f4)));
  }

  static void q1(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    bids(env, gen)
        .map(b -> Tuple5.of(b.auction, b.bidder, b.price * 0.908, b.dateTime, b.extra))
        .returns(Types.TUPLE(Types.LONG, Types.LONG, Types.DOUBLE, Types.LONG, Types.STRING))
        .addSink(new ChecksumSink<>(t ->
            RowChecksum.row(t.f0, t.f1, RowChecksum.floatField(t.f2), t.f3, t.f4)));
  }

  static void q2(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    bids(env, gen)
        .filter(b -> b.auction % 123 == 0)
        .map(b -> Tuple2.of(b.auction, b.price))
        .returns(Types.TUPLE(Types.LONG, Types.LONG))
        .addSink(new ChecksumSink<>(t -> RowChecksum.row(t.f0, t.f1)));
  }

  /** q3: an unbounded symmetric hash join of filtered persons and auctions. */
  static void q3(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    DataStream<Person> people = persons(env, gen)
        .filter(p -> p.state.equals("OR") || p.state.equals("ID") || p.state.equals("CA"));
    DataStream<Auction> items = auctions(env, gen).filter(a -> a.category == 10);
    items.keyBy(a -> a.seller)
        .connect(people.keyBy(p -> p.id))
        .process(new Q3Join())
        .returns(Types.TUPLE(Types.STRING, Types.STRING, Types.STRING, Types.LONG))
        .addSink(new ChecksumSink<>(t -> RowChecksum.row(t.f0, t.f1, t.f2, t.f3)));
  }

  static final class Q3Join
      extends KeyedCoProcessFunction<Long, Auction, Person, Tuple4<String, String, String, Long>> {
    private transient ValueState<Person> person;
    private transient ListState<Long> auctionIds;

    @Override
    public void open(org.apache.flink.api.common.functions.OpenContext context) {
      person = getRuntimeContext().getState(new ValueStateDescriptor<>("person", Person.class));
      auctionIds = getRuntimeContext().getListState(new ListStateDescriptor<>("auctions", Long.class));
    }

    @Override
    public void processElement1(Auction a, Context ctx,
        Collector<Tuple4<String, String, String, Long>> out) throws Exception {
      auctionIds.add(a.id);
      Person p = person.value();
      if (p != null) out.collect(Tuple4.of(p.name, p.city, p.state, a.id));
    }

    @Override
    public void processElement2(Person p, Context ctx,
        Collector<Tuple4<String, String, String, Long>> out) throws Exception {
      person.update(p);
      for (Long id : auctionIds.get()) out.collect(Tuple4.of(p.name, p.city, p.state, id));
    }
  }

  static final class Count<T> implements AggregateFunction<T, Long, Long> {
    @Override public Long createAccumulator() { return 0L; }
    @Override public Long add(T value, Long acc) { return acc + 1; }
    @Override public Long getResult(Long acc) { return acc; }
    @Override public Long merge(Long a, Long b) { return a + b; }
  }

  /** q5: bid counts per auction and sliding window, then the auctions at each window's maximum. */
  static void q5(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    bids(env, gen)
        .keyBy(b -> b.auction)
        .window(SlidingEventTimeWindows.of(Duration.ofMillis(Q5_WINDOW_MS), Duration.ofMillis(Q5_SLIDE_MS)))
        .aggregate(new Count<Bid>(),
            new ProcessWindowFunction<Long, Tuple4<Long, Long, Long, Long>, Long, TimeWindow>() {
              @Override
              public void process(Long auction, Context ctx, Iterable<Long> counts,
                  Collector<Tuple4<Long, Long, Long, Long>> out) {
                TimeWindow w = ctx.window();
                out.collect(Tuple4.of(auction, counts.iterator().next(), w.getStart(), w.getEnd()));
              }
            })
        .returns(Types.TUPLE(Types.LONG, Types.LONG, Types.LONG, Types.LONG))
        .keyBy(t -> t.f3)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(Q5_SLIDE_MS)))
        .process(new ProcessWindowFunction<Tuple4<Long, Long, Long, Long>,
            Tuple4<Long, Long, Long, Long>, Long, TimeWindow>() {
          @Override
          public void process(Long end, Context ctx, Iterable<Tuple4<Long, Long, Long, Long>> rows,
              Collector<Tuple4<Long, Long, Long, Long>> out) {
            long max = 0;
            for (Tuple4<Long, Long, Long, Long> r : rows) max = Math.max(max, r.f1);
            for (Tuple4<Long, Long, Long, Long> r : rows) if (r.f1 == max) out.collect(r);
          }
        })
        .returns(Types.TUPLE(Types.LONG, Types.LONG, Types.LONG, Types.LONG))
        .addSink(new ChecksumSink<>(t -> RowChecksum.row(t.f0, t.f1, t.f2, t.f3)));
  }

  /** q7: the maximum price per tumbling window, joined back with the bids of that window. */
  static void q7(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    DataStream<Bid> bids = bids(env, gen);
    DataStream<Long> maxima = bids
        .windowAll(TumblingEventTimeWindows.of(Duration.ofMillis(Q7_WINDOW_MS)))
        .process(new ProcessAllWindowFunction<Bid, Long, TimeWindow>() {
          @Override
          public void process(Context ctx, Iterable<Bid> window, Collector<Long> out) {
            long max = Long.MIN_VALUE;
            for (Bid b : window) max = Math.max(max, b.price);
            out.collect(max);
          }
        });
    bids.join(maxima)
        .where(b -> b.price).equalTo(m -> m)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(Q7_WINDOW_MS)))
        .apply((b, m) -> Tuple5.of(b.auction, b.price, b.bidder, b.dateTime, b.extra),
            Types.TUPLE(Types.LONG, Types.LONG, Types.LONG, Types.LONG, Types.STRING))
        .addSink(new ChecksumSink<>(t -> RowChecksum.row(t.f0, t.f1, t.f2, t.f3, t.f4)));
  }

  /** q8: persons joined with the sellers of the same tumbling window. */
  static void q8(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    DataStream<Tuple3<Long, Long, Long>> sellers = auctions(env, gen)
        .keyBy(a -> a.seller)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(Q8_WINDOW_MS)))
        .aggregate(new Count<Auction>(),
            new ProcessWindowFunction<Long, Tuple3<Long, Long, Long>, Long, TimeWindow>() {
              @Override
              public void process(Long seller, Context ctx, Iterable<Long> counts,
                  Collector<Tuple3<Long, Long, Long>> out) {
                out.collect(Tuple3.of(seller, ctx.window().getStart(), counts.iterator().next()));
              }
            })
        .returns(Types.TUPLE(Types.LONG, Types.LONG, Types.LONG));
    persons(env, gen).join(sellers)
        .where(p -> p.id).equalTo(s -> s.f0)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(Q8_WINDOW_MS)))
        .apply((p, s) -> Tuple3.of(p.id, p.name, s.f1),
            Types.TUPLE(Types.LONG, Types.STRING, Types.LONG))
        .addSink(new ChecksumSink<>(t -> RowChecksum.row(t.f0, t.f1, t.f2)));
  }

  /**
   * q11: bids per bidder session. Flow closes a session when the next bid is 10 s or more after
   * the last; Flink's session windows also merge a bid exactly 10 s later, so the gap here is
   * 10 s - 1 ms and the reported end adds the 1 ms back (end = last bid + 10 s, as in Flow).
   */
  static void q11(StreamExecutionEnvironment env, NexmarkGenerator gen) {
    bids(env, gen)
        .keyBy(b -> b.bidder)
        .window(EventTimeSessionWindows.withGap(Duration.ofMillis(Q11_GAP_MS - 1)))
        .aggregate(new Count<Bid>(),
            new ProcessWindowFunction<Long, Tuple4<Long, Long, Long, Long>, Long, TimeWindow>() {
              @Override
              public void process(Long bidder, Context ctx, Iterable<Long> counts,
                  Collector<Tuple4<Long, Long, Long, Long>> out) {
                TimeWindow w = ctx.window();
                out.collect(Tuple4.of(bidder, counts.iterator().next(), w.getStart(), w.getEnd() + 1));
              }
            })
        .returns(Types.TUPLE(Types.LONG, Types.LONG, Types.LONG, Types.LONG))
        .addSink(new ChecksumSink<>(t -> RowChecksum.row(t.f0, t.f1, t.f2, t.f3)));
  }
}
