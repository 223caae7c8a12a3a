package org.mwlab.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.Test;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Fuzz test of the load generator's {@link ReplyReader}: any reply, cut anywhere, as the channel
 * delivers it. Without {@code JAZZER_FUZZ} it replays the inputs in
 * {@code src/test/resources/org/mwlab/loadgen/ReplyReaderFuzzTestInputs/replies/}.
 *
 * <p>Input layout: byte 0 picks the request (bit 0: get, else set; bits 1-3: 1-8 keys), byte 1
 * (low 4 bits) the number of cuts, then one byte per cut (a chunk of 1-256 bytes), then what the
 * server sends.
 *
 * <p>Checked: no exception; the buffer never exceeds its bound; where the reply ends, its hits
 * and error do not depend on the cuts; a reply not flagged as an error is well-formed (the exact
 * {@code STORED}, or VALUE blocks with decimal byte counts in the header's third field, no more
 * than the keys requested, then the exact {@code END}); after a complete reply, whatever followed
 * it, the next request's reply is read correctly.
 */
class ReplyReaderFuzzTest {

  private static final int INITIAL = 16;
  private static final int MAX = 256;

  /** Where and how the reply ended (end -1: not complete when the stream ran out). */
  private record Outcome(ReplyReader.Status status, int end, int hits, boolean error) {}

  // CR and LF are common in the seeds; Jazzer writes them into the dictionary unescaped.
  @DictionaryEntries({"VALUE ", "END", "STORED", "SERVER_ERROR ", " 0 1"})
  @FuzzTest
  void replies(final byte[] input) {
    if (input.length < 2) {
      return;
    }
    final OpType type = (input[0] & 1) != 0 ? OpType.GET : OpType.SET;
    final int keys = type == OpType.SET ? 1 : 1 + ((input[0] >> 1) & 7);
    final int ncuts = Math.min(input[1] & 15, input.length - 2);
    final int[] chunks = new int[ncuts];
    for (int i = 0; i < ncuts; i++) {
      chunks[i] = (input[2 + i] & 0xff) + 1;
    }
    final byte[] stream = Arrays.copyOfRange(input, 2 + ncuts, input.length);

    final ReplyReader reader = new ReplyReader(INITIAL, MAX);
    final Outcome cut = run(reader, type, keys, stream, chunks);
    final Outcome whole = run(new ReplyReader(INITIAL, MAX), type, keys, stream, new int[0]);
    assertEquals(whole, cut, "the outcome depends on where the stream was cut");
    if (cut.status() == ReplyReader.Status.COMPLETE && !cut.error()) {
      assertTrue(wellFormed(type, keys, Arrays.copyOf(stream, cut.end())),
          "a malformed reply was taken as correct");
    }
    if (cut.status() != ReplyReader.Status.COMPLETE) {
      return;
    }
    // As the connection does: drop what followed the reply, then send the next request.
    if (reader.unread() > 0) {
      reader.dropUnread();
      assertTrue(reader.error());
    }
    final byte[] get = "VALUE key:1 0 3\r\nabc\r\nEND\r\n".getBytes(StandardCharsets.US_ASCII);
    assertEquals(new Outcome(ReplyReader.Status.COMPLETE, get.length, 1, false),
        run(reader, OpType.GET, 2, get, new int[0]));
    final byte[] set = "STORED\r\n".getBytes(StandardCharsets.US_ASCII);
    assertEquals(new Outcome(ReplyReader.Status.COMPLETE, set.length, 0, false),
        run(reader, OpType.SET, 1, set, new int[0]));
  }

  @Test
  void malformedGetRepliesAreErrors() {
    for (final String reply : new String[] {
        "VALUE k 0 1x\r\nab\r\nEND\r\n", // a byte count that is not a number
        "VALUE k 0 99999999999\r\nEND\r\n", // beyond any int
        "VALUE k 0 1\r\na\r\nVALUE k 0 1\r\nb\r\nEND\r\n", // two values for one key
        "ENDING\r\n"}) {
      final byte[] b = reply.getBytes(StandardCharsets.US_ASCII);
      final Outcome o = run(new ReplyReader(INITIAL, MAX), OpType.GET, 1, b, new int[0]);
      assertEquals(ReplyReader.Status.COMPLETE, o.status(), reply);
      assertTrue(o.error(), reply);
    }
  }

  @Test
  void aLineBeyondTheBufferBoundGivesUp() {
    final byte[] b = new byte[MAX + 10];
    Arrays.fill(b, (byte) 'x');
    final ReplyReader r = new ReplyReader(INITIAL, MAX);
    assertEquals(ReplyReader.Status.LINE_TOO_LONG, run(r, OpType.GET, 1, b, new int[0]).status());
    assertEquals(MAX, r.capacity());
  }

  /** Delivers {@code stream} in chunks of the given lengths (then the rest) until the reply ends. */
  private static Outcome run(
      final ReplyReader reader, final OpType type, final int keys, final byte[] stream,
      final int[] chunks) {
    reader.expect(type, keys);
    int off = 0;
    for (int c = 0; off < stream.length; c++) {
      int want = Math.min(c < chunks.length ? chunks[c] : stream.length, stream.length - off);
      while (want > 0) {
        final ByteBuffer buf = reader.buffer();
        final int n = Math.min(want, buf.remaining());
        assertTrue(n > 0, "no room to read into");
        buf.put(stream, off, n);
        off += n;
        want -= n;
        final ReplyReader.Status s = reader.parse();
        assertTrue(reader.capacity() <= MAX, "buffer grew to " + reader.capacity());
        if (s == ReplyReader.Status.COMPLETE) {
          assertTrue(reader.unread() <= off);
          return new Outcome(s, off - reader.unread(), reader.hits(), reader.error());
        }
        if (s == ReplyReader.Status.LINE_TOO_LONG) {
          assertEquals(MAX, reader.capacity());
          return new Outcome(s, -1, reader.hits(), reader.error());
        }
      }
    }
    assertFalse(reader.buffer().remaining() == 0, "pending with a full buffer");
    return new Outcome(ReplyReader.Status.PENDING, -1, reader.hits(), reader.error());
  }

  /** The reply grammar: lines end in LF (CR before it optional), data blocks go by byte count. */
  private static boolean wellFormed(final OpType type, final int keys, final byte[] r) {
    int pos = 0;
    int hits = 0;
    while (true) {
      int nl = pos;
      while (nl < r.length && r[nl] != '\n') {
        nl++;
      }
      if (nl == r.length) {
        return false;
      }
      final int end = nl > pos && r[nl - 1] == '\r' ? nl - 1 : nl;
      final String line = new String(r, pos, end - pos, StandardCharsets.ISO_8859_1);
      pos = nl + 1;
      if (type == OpType.SET) {
        return line.equals("STORED") && pos == r.length;
      }
      if (line.equals("END")) {
        return pos == r.length && hits <= keys;
      }
      if (!line.startsWith("VALUE ")) {
        return false;
      }
      // VALUE <key> <flags> <bytes>[ <cas>]: the byte count is the third field.
      final String[] fields = line.substring(6).split(" ", 4);
      if (fields.length < 3) {
        return false;
      }
      final String count = fields[2];
      if (count.isEmpty() || count.length() > 10
          || !count.chars().allMatch(ch -> ch >= '0' && ch <= '9')
          || Long.parseLong(count) > Integer.MAX_VALUE) {
        return false;
      }
      hits++;
      pos += (int) Math.min(r.length - pos, Long.parseLong(count) + 2);
    }
  }
}
