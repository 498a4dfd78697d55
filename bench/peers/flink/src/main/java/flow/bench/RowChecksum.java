package flow.bench;

import java.nio.charset.StandardCharsets;

/**
 * The canonical result checksum (bench/limit/row_checksum.h): a row's fields joined by ',' (ints
 * in decimal, timestamps as epoch ms, strings as they are, floats as round(x * 1000)), hashed
 * with 64-bit FNV-1a; a result's checksum is the sum of its rows' hashes (mod 2^64).
 */
public final class RowChecksum {
  private static final long FNV_OFFSET = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;

  private RowChecksum() {}

  public static long fnv1a64(String text) {
    long h = FNV_OFFSET;
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    for (byte b : bytes) {
      h ^= (b & 0xff);
      h *= FNV_PRIME;
    }
    return h;
  }

  /** Canonical form of a float column. */
  public static long floatField(double value) {
    return Math.round(value * 1000.0);
  }

  /** Joins the fields of a row with ','. */
  public static String row(Object... fields) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < fields.length; ++i) {
      if (i > 0) sb.append(',');
      sb.append(fields[i]);
    }
    return sb.toString();
  }
}
