package org.mwlab.common.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LineFramerTest {

  @Test
  void linesEndAtLfAndDropOneCrBeforeIt() {
    final LineFramer f = new LineFramer(64, 64);
    put(f, "a\r\nb\nc\r\r\n\r\n\n\rd\r\nlast");
    assertEquals(List.of("a", "b", "c\r", "", "", "\rd"), lines(f));
    assertEquals(4, f.available(), "the incomplete line stays");
    put(f, "\r\n");
    assertEquals(List.of("last"), lines(f));
    assertEquals(0, f.available());
  }

  @Test
  void emptyLinesAreEmpty() {
    final LineFramer f = new LineFramer(8, 8);
    put(f, "\n\r\n");
    assertEquals(List.of("", ""), lines(f));
  }

  @Test
  void aStreamCutAtEveryByteGivesTheSameLinesAndBlocks() {
    final String stream = "VALUE k 0 5\r\na\r\nb\n\r\nEND\r\nSTORED\r\n";
    final List<String> whole = read(stream, stream.length());
    assertEquals(List.of("VALUE k 0 5", "[a\r\nb\n\r\n]", "END", "STORED"), whole);
    for (int chunk = 1; chunk < stream.length(); chunk++) {
      assertEquals(whole, read(stream, chunk), "chunks of " + chunk);
    }
  }

  @Test
  void theBufferGrowsForALongLineUpToItsBound() {
    final LineFramer f = new LineFramer(4, 16);
    final String line = "x".repeat(15);
    int fed = 0;
    while (fed < line.length()) {
      assertTrue(f.makeRoom());
      final int n = Math.min(f.room(), line.length() - fed);
      put(f, line.substring(fed, fed + n));
      fed += n;
      assertEquals(-1, f.nextLine());
    }
    assertTrue(f.makeRoom(), "15 bytes and room for the LF");
    assertEquals(16, f.capacity());
    put(f, "\n");
    assertEquals(List.of(line), lines(f));

    final LineFramer tooLong = new LineFramer(4, 16);
    for (int i = 0; i < 3; i++) {
      assertTrue(tooLong.makeRoom());
      put(tooLong, "y".repeat(tooLong.room()));
    }
    assertEquals(16, tooLong.available());
    assertFalse(tooLong.makeRoom(), "16 bytes without LF fill the bound");
    assertEquals(16, tooLong.capacity());
  }

  @Test
  void makeRoomMovesTheUnreadBytesToTheStart() {
    final LineFramer f = new LineFramer(8, 8);
    put(f, "ab\ncd");
    assertEquals(List.of("ab"), lines(f));
    assertEquals(3, f.position());
    assertTrue(f.makeRoom());
    assertEquals(0, f.position());
    assertEquals(2, f.limit());
    assertEquals(6, f.room());
    put(f, "e\n");
    assertEquals(List.of("cde"), lines(f));
  }

  @Test
  void channelsReadIntoTheSpaceAfterTheUnreadBytes() {
    final LineFramer f = new LineFramer(4, 64);
    f.space().put(bytes("ab\ncd"), 0, 4);
    f.spaceFilled();
    assertEquals(List.of("ab"), lines(f));
    assertTrue(f.makeRoom());
    final ByteBuffer space = f.space();
    assertEquals(0, f.position());
    assertEquals(1, space.position(), "after the unread byte");
    assertEquals(3, space.remaining());
    space.put(bytes("de\n"));
    f.spaceFilled();
    f.spaceFilled(); // taking the same bytes twice changes nothing
    assertEquals(List.of("cde"), lines(f));
    assertTrue(f.makeRoom());
    f.space().put(bytes("fghi"));
    f.spaceFilled();
    assertTrue(f.makeRoom(), "grows: a new buffer and a new view of it");
    assertEquals(8, f.space().capacity());
    f.space().put(bytes("\n"));
    f.spaceFilled();
    assertEquals(List.of("fghi"), lines(f));
  }

  @Test
  void dataBlocksAreTakenByLength() {
    final LineFramer f = new LineFramer(16, 16);
    put(f, "abc\ndef\n");
    f.consume(4);
    assertEquals(4, f.position());
    assertEquals(List.of("def"), lines(f));
    assertThrows(IndexOutOfBoundsException.class, () -> f.consume(1));
    assertThrows(IndexOutOfBoundsException.class, () -> f.consume(-1));
    assertThrows(IndexOutOfBoundsException.class, () -> f.filled(f.room() + 1));
  }

  @Test
  void clearDropsTheUnreadBytesAndKeepsTheSize() {
    final LineFramer f = new LineFramer(2, 8);
    put(f, "ab");
    assertTrue(f.makeRoom());
    put(f, "cd");
    f.clear();
    assertEquals(0, f.available());
    assertEquals(4, f.capacity());
    assertEquals(0, f.space().position());
    put(f, "x\n");
    assertEquals(List.of("x"), lines(f));
  }

  @Test
  void boundsAreChecked() {
    assertThrows(IllegalArgumentException.class, () -> new LineFramer(0, 8));
    assertThrows(IllegalArgumentException.class, () -> new LineFramer(8, 4));
  }

  /** Frames {@code stream} delivered in chunks: lines, and 5-byte blocks after VALUE lines. */
  private static List<String> read(final String stream, final int chunk) {
    final LineFramer f = new LineFramer(4, 64);
    final byte[] b = bytes(stream);
    final List<String> out = new ArrayList<>();
    final StringBuilder block = new StringBuilder();
    int blockLeft = 0;
    int off = 0;
    while (off < b.length) {
      assertTrue(f.makeRoom());
      final int n = Math.min(Math.min(chunk, f.room()), b.length - off);
      System.arraycopy(b, off, f.array(), f.limit(), n);
      f.filled(n);
      off += n;
      while (true) {
        if (blockLeft > 0) {
          final int k = Math.min(blockLeft, f.available());
          if (k == 0) {
            break;
          }
          block.append(new String(f.array(), f.position(), k, StandardCharsets.ISO_8859_1));
          f.consume(k);
          blockLeft -= k;
          if (blockLeft == 0) {
            out.add("[" + block + "]");
            block.setLength(0);
          }
          continue;
        }
        final int end = f.nextLine();
        if (end < 0) {
          break;
        }
        final String line =
            new String(f.array(), f.lineStart(), end - f.lineStart(), StandardCharsets.ISO_8859_1);
        out.add(line);
        if (line.startsWith("VALUE ")) {
          blockLeft = 5 + 2;
        }
      }
    }
    return out;
  }

  private static void put(final LineFramer f, final String s) {
    final byte[] b = bytes(s);
    System.arraycopy(b, 0, f.array(), f.limit(), b.length);
    f.filled(b.length);
  }

  private static List<String> lines(final LineFramer f) {
    final List<String> out = new ArrayList<>();
    for (int end = f.nextLine(); end >= 0; end = f.nextLine()) {
      out.add(new String(f.array(), f.lineStart(), end - f.lineStart(),
          StandardCharsets.ISO_8859_1));
    }
    return out;
  }

  private static byte[] bytes(final String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }
}
