package flow.bench;

/** Event kinds of the Nexmark sequence. */
public final class Event {
  public static final int PERSON = 0;
  public static final int AUCTION = 1;
  public static final int BID = 2;

  private Event() {}
}
