package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.mwlab.common.Ascii;

/**
 * Fuzz tests of {@link ServerReplies}, the middleware's reading of a {@code get} reply (keys,
 * slots, staying in step) on top of the shared parser, which common's {@code
 * ReplyParserFuzzTest} fuzzes on its own. The stream is framed as {@link ServerConnection} frames
 * it (lines up to LF without one trailing CR, then each data block by its byte count). Without
 * {@code JAZZER_FUZZ} they replay the inputs in
 * {@code src/test/resources/org/mwlab/middleware/ServerRepliesFuzzTestInputs/}.
 *
 * <p>{@link #anyReply}: byte 0 picks the request (1-8 keys {@code k0..k7}, bit 3: sent in reverse
 * through a position map, as a sharded part is), the rest is what the server sends to a series of
 * such gets. Checked: no exception; each VALUE is a requested key, in request order, with a byte
 * count within {@link ServerReplies#MAX_VALUE_BYTES} (it keeps no bytes itself, so
 * that bounds what a worker buffers for one value); a server error ends the exchange in step,
 * and while the stream stays in step the next exchange is read from the next line, so a valid
 * reply after the fuzzed ones is read correctly.
 *
 * <p>{@link #wellFormedReply}: a reply built as memcached builds it, with arbitrary keys, hits,
 * flags and data, is read back exactly.
 */
class ServerRepliesFuzzTest {

  private static final byte[] VALID = ascii("VALUE k0 5 3\r\nabc\r\nEND\r\n");

  /** How one get exchange ended. */
  private enum Outcome { END, IN_STEP_FAILURE, OUT_OF_STEP, INCOMPLETE }

  /** How an exchange ended, where the stream goes on, and each value's slot, offset, length. */
  private record Exchange(Outcome outcome, int next, List<int[]> values) {}

  // CR and LF are common in the seeds; Jazzer writes them into the dictionary unescaped.
  @DictionaryEntries({"VALUE k0 ", "VALUE k1 ", "VALUE k7 ", "END", "SERVER_ERROR ",
      "CLIENT_ERROR ", "ERROR", " 0 1"})
  @FuzzTest
  void anyReply(final byte[] input) {
    if (input.length == 0) {
      return;
    }
    final int n = (input[0] & 7) + 1;
    final byte[][] keys = new byte[n][];
    for (int i = 0; i < n; i++) {
      keys[i] = ascii("k" + i);
    }
    int[] positions = null;
    if ((input[0] & 8) != 0) {
      positions = new int[n];
      for (int i = 0; i < n; i++) {
        positions[i] = n - 1 - i;
      }
    }
    final byte[] stream = Arrays.copyOfRange(input, 1, input.length);
    final ServerReplies replies = new ServerReplies();
    int pos = 0;
    while (pos < stream.length) {
      final Exchange e = exchange(replies, keys, positions, stream, pos);
      if (e.outcome() == Outcome.INCOMPLETE || e.outcome() == Outcome.OUT_OF_STEP) {
        return; // the worker waits for more, or drops the connection
      }
      assertTrue(e.next() > pos, "an exchange that consumed nothing");
      pos = e.next();
    }
    // In step: the next get on this connection reads its reply correctly.
    final byte[][] one = {positions == null ? keys[0] : keys[positions[0]]};
    final byte[] valid = VALID.clone();
    System.arraycopy(one[0], 0, valid, 6, one[0].length);
    final Exchange e = exchange(replies, one, null, valid, 0);
    assertEquals(Outcome.END, e.outcome());
    assertEquals(valid.length, e.next());
    assertEquals(1, e.values().size());
    assertArrayEquals(new int[] {0, 14, 3}, e.values().get(0));
  }

  @FuzzTest
  void wellFormedReply(final FuzzedDataProvider data) {
    final int n = data.consumeInt(1, 8);
    final List<byte[]> distinct = new ArrayList<>();
    final Set<String> seen = new HashSet<>();
    for (int i = 0; i < n; i++) {
      final byte[] k = data.consumeBytes(data.consumeInt(1, 24));
      for (int j = 0; j < k.length; j++) {
        if (k[j] == ' ' || k[j] == '\n' || k[j] == '\r' || k[j] == 0) {
          k[j] = '_';
        }
      }
      if (k.length > 0 && seen.add(new String(k, StandardCharsets.ISO_8859_1))) {
        distinct.add(k);
      }
    }
    if (distinct.isEmpty()) {
      return;
    }
    final byte[][] keys = distinct.toArray(byte[][]::new);
    final boolean mapped = data.consumeBoolean();
    final int[] positions = mapped ? new int[keys.length] : null;
    if (mapped) {
      for (int i = 0; i < keys.length; i++) {
        positions[i] = keys.length - 1 - i;
      }
    }
    final ByteArrayOutputStream reply = new ByteArrayOutputStream();
    final List<int[]> expected = new ArrayList<>();
    final List<byte[]> blocks = new ArrayList<>();
    for (int slot = 0; slot < keys.length; slot++) {
      if (!data.consumeBoolean()) {
        continue; // a miss: memcached says nothing
      }
      final byte[] key = keys[positions == null ? slot : positions[slot]];
      final byte[] value = data.consumeBytes(data.consumeInt(0, 64));
      final long flags = data.consumeLong(0, 0xFFFF_FFFFL);
      reply.writeBytes(ascii("VALUE "));
      reply.writeBytes(key);
      reply.writeBytes(ascii(" " + flags + " " + value.length));
      if (data.consumeBoolean()) {
        reply.writeBytes(ascii(" " + data.consumeLong(0, Long.MAX_VALUE))); // a CAS unique
      }
      reply.writeBytes(ascii("\r\n"));
      expected.add(new int[] {slot, reply.size(), value.length});
      blocks.add(value);
      reply.writeBytes(value);
      reply.writeBytes(ascii("\r\n"));
    }
    reply.writeBytes(ascii("END\r\n"));
    final byte[] stream = reply.toByteArray();
    final Exchange e = exchange(new ServerReplies(), keys, positions, stream, 0);
    assertEquals(Outcome.END, e.outcome());
    assertEquals(stream.length, e.next());
    assertEquals(expected.size(), e.values().size());
    for (int i = 0; i < expected.size(); i++) {
      assertArrayEquals(expected.get(i), e.values().get(i));
      final int[] v = e.values().get(i);
      assertArrayEquals(blocks.get(i), Arrays.copyOfRange(stream, v[1], v[1] + v[2]));
    }
  }

  /** Reads one get exchange from {@code stream[pos...]} as a worker does. */
  private static Exchange exchange(
      final ServerReplies replies,
      final byte[][] keys,
      final int[] positions,
      final byte[] stream,
      final int start) {
    final int to = positions == null ? keys.length : positions.length;
    replies.expect(keys, positions, 0, to);
    final List<int[]> values = new ArrayList<>();
    int pos = start;
    int lastSlot = -1;
    while (true) {
      final int nl = Ascii.indexOf(stream, pos, stream.length, (byte) '\n');
      if (nl < 0) {
        return new Exchange(Outcome.INCOMPLETE, pos, values);
      }
      final int end = nl > pos && stream[nl - 1] == '\r' ? nl - 1 : nl;
      final ServerReplies.Line line = replies.line(stream, pos, end);
      assertNotNull(line);
      final int lineStart = pos;
      pos = nl + 1;
      if (line instanceof ServerReplies.End) {
        return new Exchange(Outcome.END, pos, values);
      }
      if (line instanceof ServerReplies.Failure f) {
        assertNotNull(f.message());
        return new Exchange(f.outOfStep() ? Outcome.OUT_OF_STEP : Outcome.IN_STEP_FAILURE, pos,
            values);
      }
      final ServerReplies.Value v = assertInstanceOf(ServerReplies.Value.class, line);
      assertTrue(v.slot() > lastSlot && v.slot() < to, "slot " + v.slot() + " after " + lastSlot);
      lastSlot = v.slot();
      assertTrue(v.bytes() >= 0 && v.bytes() <= ServerReplies.MAX_VALUE_BYTES);
      // The VALUE line names the key requested in that slot.
      final int keyStart = lineStart + 6;
      final int keyEnd = Ascii.indexOf(stream, keyStart, end, (byte) ' ');
      assertTrue(keyEnd > keyStart);
      assertArrayEquals(keys[positions == null ? v.slot() : positions[v.slot()]],
          Arrays.copyOfRange(stream, keyStart, keyEnd));
      if (stream.length - pos < v.bytes() + 2) {
        return new Exchange(Outcome.INCOMPLETE, pos, values);
      }
      values.add(new int[] {v.slot(), pos, v.bytes()});
      pos += v.bytes() + 2;
      final ServerReplies.Failure bad = ServerReplies.dataBlock(stream, pos);
      if (bad != null) {
        assertTrue(bad.outOfStep());
        return new Exchange(Outcome.OUT_OF_STEP, pos, values);
      }
    }
  }

  private static byte[] ascii(final String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
