package flow.bench;

/** A Nexmark bid (a Flink POJO); price in cents, time in epoch milliseconds. */
public class Bid {
  public long auction;
  public long bidder;
  public long price;
  public String channel;
  public String url;
  public long dateTime;
  public String extra;

  public Bid() {}
}
