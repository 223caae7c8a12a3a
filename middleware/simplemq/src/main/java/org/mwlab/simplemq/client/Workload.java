package org.mwlab.simplemq.client;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.mwlab.simplemq.protocol.Request;

/**
 * What a client sends, in turn. Every body starts with a tag {@code <sender>:<sequence>:} and is
 * padded with ASCII to its size, so a peek or pop can be checked against what was sent.
 */
public sealed interface Workload {

  /** The next request of client {@code client} (its {@code turn}-th, from 0). */
  Request next(int client, long turn, int requestId, long sequence);

  /** Whether {@code turn} sends a message (and so uses a new sequence number). */
  boolean sends(long turn);

  /**
   * The seed's staticsmall (200 bytes) and staticlarge (2,000): send, peek, pop in turn on one
   * queue; client {@code c} sends to the next client of the run, wrapping to the first, and
   * peeks and pops its own messages.
   */
  record Static(int queue, int size, int firstClient, int clients) implements Workload {
    @Override
    public Request next(final int client, final long turn, final int requestId, final long seq) {
      return switch ((int) (turn % 3)) {
        case 0 -> {
          final int receiver = firstClient + (client - firstClient + 1) % clients;
          yield new Request.Send(requestId, client, receiver, queue, nowMicros(),
              body(client, seq, size));
        }
        case 1 -> new Request.PeekQueue(requestId, queue, client);
        default -> new Request.PopQueue(requestId, queue, client);
      };
    }

    @Override
    public boolean sends(final long turn) {
      return turn % 3 == 0;
    }
  }

  /**
   * Many clients pop one (queue, receiver) at once, the load that tests that a message is removed once: each
   * client sends to the shared receiver, then pops as it.
   */
  record SharedReceiver(int queue, int size, int receiver) implements Workload {
    @Override
    public Request next(final int client, final long turn, final int requestId, final long seq) {
      return turn % 2 == 0
          ? new Request.Send(requestId, client, receiver, queue, nowMicros(),
              body(client, seq, size))
          : new Request.PopQueue(requestId, queue, receiver);
    }

    @Override
    public boolean sends(final long turn) {
      return turn % 2 == 0;
    }
  }

  /**
   * The lease mode's load: each client sends to the shared receiver, then reads as it, up to
   * {@code batch} messages leased for {@code visibilityMs}; the client acks each message it
   * got (the acks are not turns). Once its messages are sent it only reads, until its reads
   * have found nothing for {@code drainMs}.
   */
  record Lease(int queue, int size, int receiver, int visibilityMs, int batch, long drainMs)
      implements Workload {
    @Override
    public Request next(final int client, final long turn, final int requestId, final long seq) {
      return turn % 2 == 0
          ? new Request.Send(requestId, client, receiver, queue, nowMicros(),
              body(client, seq, size))
          : read(requestId);
    }

    @Override
    public boolean sends(final long turn) {
      return turn % 2 == 0;
    }

    Request.Read read(final int requestId) {
      return new Request.Read(requestId, queue, receiver, visibilityMs, batch);
    }
  }

  static long nowMicros() {
    final java.time.Instant t = java.time.Instant.now();
    return t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
  }

  /** {@code <sender>:<sequence>:} padded with 'x' to {@code size} bytes (longer if the tag is). */
  static byte[] body(final int sender, final long sequence, final int size) {
    final byte[] tag = (sender + ":" + sequence + ":").getBytes(StandardCharsets.US_ASCII);
    final byte[] b = Arrays.copyOf(tag, Math.max(size, tag.length));
    Arrays.fill(b, tag.length, b.length, (byte) 'x');
    return b;
  }

  /** The (sender, sequence) tag of a body, or null when it is not one this workload wrote. */
  static long[] tag(final byte[] body, final int expectedSize) {
    if (body.length != expectedSize && expectedSize > 0) {
      return null;
    }
    final String s = new String(body, StandardCharsets.US_ASCII);
    final int a = s.indexOf(':');
    final int b = a < 0 ? -1 : s.indexOf(':', a + 1);
    if (b < 0) {
      return null;
    }
    for (int i = b + 1; i < s.length(); i++) {
      if (s.charAt(i) != 'x') {
        return null;
      }
    }
    try {
      return new long[] {Long.parseLong(s.substring(0, a)), Long.parseLong(s.substring(a + 1, b))};
    } catch (final NumberFormatException e) {
      return null;
    }
  }
}
