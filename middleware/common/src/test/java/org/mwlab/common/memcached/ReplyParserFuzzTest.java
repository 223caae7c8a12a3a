package org.mwlab.common.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzz tests of the shared {@link ReplyParser} on the lines a {@link LineFramer} takes from a
 * stream, as the middleware and the load generator read their replies. Without {@code
 * JAZZER_FUZZ} they replay the inputs in
 * {@code src/test/resources/org/mwlab/common/memcached/ReplyParserFuzzTestInputs/}.
 *
 * <p>{@link #anyStream}: byte 0 (low 4 bits) is the number of cuts, then one byte per cut (a chunk
 * of 1-64 bytes), then the stream. It is read whole through the framer's array, and cut through
 * its channel view; both readings must equal a plain reading of the stream with a string-based
 * grammar: the same lines, kinds, VALUE fields, error messages and data blocks (taken by their
 * byte count), and the same end (more bytes needed, or a line too long for the bound). Checked
 * too: no exception, the buffer never exceeds its bound.
 *
 * <p>{@link #wellFormed}: replies built as memcached builds them (VALUE with arbitrary keys, flags,
 * data and CAS, the one-word replies, errors with messages), delivered in arbitrary chunks, are
 * read back exactly.
 */
class ReplyParserFuzzTest {

  private static final int MAX_VALUE = 1000;
  private static final int INITIAL = 8;
  private static final int MAX_LINE = 128;
  private static final ReplyKind[] WORDS = {ReplyKind.END, ReplyKind.STORED, ReplyKind.NOT_STORED,
      ReplyKind.EXISTS, ReplyKind.NOT_FOUND, ReplyKind.DELETED, ReplyKind.ERROR};
  private static final ReplyKind[] SENT = {ReplyKind.VALUE, ReplyKind.END, ReplyKind.STORED,
      ReplyKind.NOT_STORED, ReplyKind.EXISTS, ReplyKind.NOT_FOUND, ReplyKind.DELETED,
      ReplyKind.ERROR, ReplyKind.CLIENT_ERROR, ReplyKind.SERVER_ERROR};

  /**
   * One line as read: kind and text; a VALUE's key, flags, byte count, CAS and data block (with its
   * CRLF, as far as it arrived); an error's message. Fields that do not apply are null or 0.
   */
  private record Event(ReplyKind kind, String line, String key, String flags, int bytes,
      String cas, String text, String block) {
    Event withBlock(final String b) {
      return new Event(kind, line, key, flags, bytes, cas, text, b);
    }
  }

  /** What a stream reads as, and whether it ended on a line too long for the bound. */
  private record Run(List<Event> events, boolean tooLong) {}

  // CR and LF are common in the seeds; Jazzer writes them into the dictionary unescaped.
  @DictionaryEntries({"VALUE ", "END", "STORED", "NOT_STORED", "EXISTS", "NOT_FOUND", "DELETED",
      "ERROR", "CLIENT_ERROR ", "SERVER_ERROR ", " 0 1", " 0 10 "})
  @FuzzTest
  void anyStream(final byte[] input) {
    if (input.length == 0) {
      return;
    }
    final int ncuts = Math.min(input[0] & 15, input.length - 1);
    final int[] chunks = new int[ncuts];
    for (int i = 0; i < ncuts; i++) {
      chunks[i] = (input[1 + i] & 63) + 1;
    }
    final byte[] stream = Arrays.copyOfRange(input, 1 + ncuts, input.length);
    final Run expected = plainReading(stream);
    assertEquals(expected, framed(stream, new int[0], false, MAX_LINE), "read whole");
    assertEquals(expected, framed(stream, chunks, true, MAX_LINE), "read in chunks");
  }

  @FuzzTest
  void wellFormed(final FuzzedDataProvider data) {
    final List<Event> sent = new ArrayList<>();
    final ByteArrayOutputStream stream = new ByteArrayOutputStream();
    final int n = data.consumeInt(1, 16);
    for (int i = 0; i < n; i++) {
      final ReplyKind kind = data.pickValue(SENT);
      final String eol = data.consumeBoolean() ? "\r\n" : "\n";
      final String line;
      if (kind == ReplyKind.VALUE) {
        final String key = text(data.consumeBytes(data.consumeInt(1, 250)), " \n", (byte) '_');
        final String flags = Long.toString(data.consumeLong(0, 0xFFFF_FFFFL));
        final String value = text(data.consumeBytes(data.consumeInt(0, 64)), "", (byte) 0);
        final String cas = data.consumeBoolean() ? Long.toUnsignedString(data.consumeLong()) : "";
        line = "VALUE " + key + " " + flags + " " + value.length()
            + (cas.isEmpty() ? "" : " " + cas);
        sent.add(new Event(kind, line, key, flags, value.length(), cas, null, value + "\r\n"));
        write(stream, line + eol + value + "\r\n");
        continue;
      }
      if (kind.isError() && kind != ReplyKind.ERROR) {
        final String message = text(data.consumeBytes(data.consumeInt(0, 100)), "\r\n", (byte) '.');
        line = kind.name() + " " + message;
        sent.add(new Event(kind, line, null, null, 0, null, message, null));
      } else {
        line = kind.name();
        sent.add(new Event(kind, line, null, null, 0, null, kind.isError() ? "" : null, null));
      }
      write(stream, line + eol);
    }
    final int[] chunks = new int[data.consumeInt(0, 16)];
    for (int i = 0; i < chunks.length; i++) {
      chunks[i] = data.consumeInt(1, 64);
    }
    final Run run = framed(stream.toByteArray(), chunks, data.consumeBoolean(), 512);
    assertFalse(run.tooLong());
    assertEquals(sent, run.events());
  }

  /** Reads {@code stream} with a framer and a parser in chunks of these lengths, then the rest. */
  private static Run framed(
      final byte[] stream, final int[] chunks, final boolean channel, final int maxLine) {
    final LineFramer f = new LineFramer(INITIAL, maxLine);
    final ReplyParser p = new ReplyParser(MAX_VALUE);
    final List<Event> events = new ArrayList<>();
    final ByteArrayOutputStream block = new ByteArrayOutputStream();
    Event value = null;
    long left = 0;
    int off = 0;
    for (int c = 0; off < stream.length; c++) {
      int want = Math.min(c < chunks.length ? chunks[c] : stream.length, stream.length - off);
      while (want > 0) {
        final int n = Math.min(want, f.room());
        assertTrue(n > 0, "no room to read into");
        if (channel) {
          f.space().put(stream, off, n);
          f.spaceFilled();
        } else {
          System.arraycopy(stream, off, f.array(), f.limit(), n);
          f.filled(n);
        }
        off += n;
        want -= n;
        while (true) {
          if (left > 0) {
            final int k = (int) Math.min(left, f.available());
            if (k == 0) {
              break;
            }
            block.write(f.array(), f.position(), k);
            f.consume(k);
            left -= k;
            if (left == 0) {
              events.add(value.withBlock(string(block.toByteArray(), 0, block.size())));
              value = null;
              block.reset();
            }
            continue;
          }
          final int end = f.nextLine();
          if (end < 0) {
            break;
          }
          final Event e = event(p, f.array(), f.lineStart(), end);
          if (e.kind() == ReplyKind.VALUE) {
            value = e;
            left = e.bytes() + 2L;
          } else {
            events.add(e);
          }
        }
        final boolean room = f.makeRoom();
        assertTrue(f.capacity() <= maxLine, "buffer grew to " + f.capacity());
        if (!room) {
          return new Run(finish(events, value, block), true);
        }
      }
    }
    return new Run(finish(events, value, block), false);
  }

  private static List<Event> finish(
      final List<Event> events, final Event value, final ByteArrayOutputStream block) {
    if (value != null) {
      events.add(value.withBlock(string(block.toByteArray(), 0, block.size())));
    }
    return events;
  }

  /** What the parser says about {@code b[start, end)}. */
  private static Event event(final ReplyParser p, final byte[] b, final int start, final int end) {
    final ReplyKind kind = p.parse(b, start, end);
    final String line = string(b, start, end);
    if (kind == ReplyKind.VALUE) {
      assertTrue(start < p.keyStart() && p.keyStart() <= p.keyEnd() && p.keyEnd() < p.flagsStart()
          && p.flagsStart() <= p.flagsEnd() && p.flagsEnd() < p.casStart()
          && p.casStart() <= p.casEnd() && p.casEnd() == end, line);
      return new Event(kind, line, string(b, p.keyStart(), p.keyEnd()),
          string(b, p.flagsStart(), p.flagsEnd()), p.valueBytes(),
          string(b, p.casStart(), p.casEnd()), null, null);
    }
    if (kind.isError()) {
      assertTrue(start < p.textStart() && p.textStart() <= end, line);
      return new Event(kind, line, null, null, 0, null, string(b, p.textStart(), end), null);
    }
    return new Event(kind, line, null, null, 0, null, null, null);
  }

  /** The stream read by plain indexing, each line classified by {@link #expected}. */
  private static Run plainReading(final byte[] s) {
    final List<Event> events = new ArrayList<>();
    int pos = 0;
    while (true) {
      int nl = pos;
      while (nl < s.length && s[nl] != '\n') {
        nl++;
      }
      if (nl - pos >= MAX_LINE) {
        return new Run(events, true); // the bound fills before the line ends
      }
      if (nl == s.length) {
        return new Run(events, false);
      }
      final int end = nl > pos && s[nl - 1] == '\r' ? nl - 1 : nl;
      final Event e = expected(string(s, pos, end));
      pos = nl + 1;
      if (e.kind() != ReplyKind.VALUE) {
        events.add(e);
        continue;
      }
      final int take = (int) Math.min(e.bytes() + 2L, s.length - pos);
      events.add(e.withBlock(string(s, pos, pos + take)));
      pos += take;
      if (take < e.bytes() + 2) {
        return new Run(events, false);
      }
    }
  }

  /** The grammar of {@link ReplyParser}, on strings. */
  private static Event expected(final String line) {
    if (line.startsWith("VALUE ")) {
      final String[] f = line.substring(6).split(" ", 4);
      if (f.length < 3 || f[2].isEmpty() || f[2].length() > 10
          || !f[2].chars().allMatch(ch -> ch >= '0' && ch <= '9')
          || Long.parseLong(f[2]) > MAX_VALUE) {
        return new Event(ReplyKind.MALFORMED_VALUE, line, null, null, 0, null, null, null);
      }
      return new Event(ReplyKind.VALUE, line, f[0], f[1], Integer.parseInt(f[2]),
          f.length == 4 ? f[3] : "", null, null);
    }
    for (final ReplyKind word : WORDS) {
      if (line.equals(word.name())) {
        return new Event(word, line, null, null, 0, null, word.isError() ? "" : null, null);
      }
    }
    for (final ReplyKind error : new ReplyKind[] {ReplyKind.SERVER_ERROR, ReplyKind.CLIENT_ERROR}) {
      if (line.startsWith(error.name())) {
        final String rest = line.substring(error.name().length());
        return new Event(error, line, null, null, 0, null,
            rest.startsWith(" ") ? rest.substring(1) : rest, null);
      }
    }
    return new Event(ReplyKind.MALFORMED, line, null, null, 0, null, null, null);
  }

  /** {@code b} as text, each byte of {@code banned} replaced by {@code with}. */
  private static String text(final byte[] b, final String banned, final byte with) {
    for (int i = 0; i < b.length; i++) {
      if (banned.indexOf(b[i] & 0xff) >= 0) {
        b[i] = with;
      }
    }
    return string(b, 0, b.length);
  }

  private static String string(final byte[] b, final int from, final int to) {
    return new String(b, from, to - from, StandardCharsets.ISO_8859_1);
  }

  private static void write(final ByteArrayOutputStream out, final String s) {
    out.writeBytes(s.getBytes(StandardCharsets.ISO_8859_1));
  }
}
