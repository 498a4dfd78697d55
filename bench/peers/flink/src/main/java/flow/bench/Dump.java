package flow.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;

/** Prints events in nexmark_limit --dump's format: index|kind|every field, '|'-separated. */
final class Dump {
  private Dump() {}

  static void print(NexmarkGenerator gen, long n) throws IOException {
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
    Person p = new Person();
    Auction a = new Auction();
    Bid b = new Bid();
    for (long i = 0; i < n; ++i) {
      switch (NexmarkGenerator.kindAt(i)) {
        case Event.PERSON -> {
          gen.generatePerson(i, p);
          out.write(String.join("|", Long.toString(i), "person", Long.toString(p.id), p.name,
              p.emailAddress, p.creditCard, p.city, p.state, Long.toString(p.dateTime), p.extra));
        }
        case Event.AUCTION -> {
          gen.generateAuction(i, a);
          out.write(String.join("|", Long.toString(i), "auction", Long.toString(a.id), a.itemName,
              a.description, Long.toString(a.initialBid), Long.toString(a.reserve),
              Long.toString(a.dateTime), Long.toString(a.expires), Long.toString(a.seller),
              Long.toString(a.category), a.extra));
        }
        default -> {
          gen.generateBid(i, b);
          out.write(String.join("|", Long.toString(i), "bid", Long.toString(b.auction),
              Long.toString(b.bidder), Long.toString(b.price), b.channel, b.url,
              Long.toString(b.dateTime), b.extra));
        }
      }
      out.write('\n');
    }
    out.flush();
  }
}
