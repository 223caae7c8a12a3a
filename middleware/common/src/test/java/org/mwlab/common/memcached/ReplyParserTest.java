package org.mwlab.common.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ReplyParserTest {
  private final ReplyParser parser = new ReplyParser(1000);

  @Test
  void aValueHeaderGivesItsFieldsInTheCallersBuffer() {
    final byte[] b = bytes("..VALUE key:1 42 512\r\n");
    assertEquals(ReplyKind.VALUE, parser.parse(b, 2, b.length - 2));
    assertEquals("key:1", slice(b, parser.keyStart(), parser.keyEnd()));
    assertEquals("42", slice(b, parser.flagsStart(), parser.flagsEnd()));
    assertEquals(512, parser.valueBytes());
    assertEquals("", slice(b, parser.casStart(), parser.casEnd()), "no CAS");
  }

  @Test
  void aValueHeaderMayCarryACasUnique() {
    final byte[] b = bytes("VALUE k 0 3 18446744073709551615");
    assertEquals(ReplyKind.VALUE, parser.parse(b, 0, b.length));
    assertEquals(3, parser.valueBytes());
    assertEquals("18446744073709551615", slice(b, parser.casStart(), parser.casEnd()));
  }

  @Test
  void keyAndFlagsAreTakenAsTheyAre() {
    // Only the byte count decides where the stream goes on; the policies check the rest.
    assertValue("VALUE  0 3", "", "0", 3);
    assertValue("VALUE k  3", "k", "", 3);
    assertValue("VALUE k x 3", "k", "x", 3);
    assertValue("VALUE k 0 3 ", "k", "0", 3);
    assertValue("VALUE k 0 3 1 2", "k", "0", 3);
  }

  @Test
  void theByteCountIsADecimalWithinTheLimit() {
    assertValue("VALUE k 0 1000", "k", "0", 1000);
    assertValue("VALUE k 0 0000000007", "k", "0", 7);
    for (final String line : new String[] {
        "VALUE k 0 1001", // beyond the limit
        "VALUE k 0 00000000007", // eleven digits
        "VALUE k 0 -1",
        "VALUE k 0 +1",
        "VALUE k 0 1x",
        "VALUE k 0 ",
        "VALUE k 0 3x 1",
        "VALUE k 0",
        "VALUE k",
        "VALUE 3",
        "VALUE "}) {
      final byte[] b = bytes(line);
      assertEquals(ReplyKind.MALFORMED_VALUE, parser.parse(b, 0, b.length), line);
    }
    final byte[] big = bytes("VALUE k 0 2147483647");
    assertEquals(ReplyKind.VALUE, new ReplyParser(Integer.MAX_VALUE).parse(big, 0, big.length));
    assertThrows(IllegalArgumentException.class, () -> new ReplyParser(-1));
  }

  @Test
  void oneWordRepliesAreExactlyTheWord() {
    for (final ReplyKind kind : new ReplyKind[] {ReplyKind.END, ReplyKind.STORED,
        ReplyKind.NOT_STORED, ReplyKind.EXISTS, ReplyKind.NOT_FOUND, ReplyKind.DELETED,
        ReplyKind.ERROR}) {
      final byte[] b = bytes("x" + kind.name() + "y");
      assertEquals(kind, parser.parse(b, 1, b.length - 1), kind.name());
      assertEquals(ReplyKind.MALFORMED, parser.parse(b, 0, b.length - 1), "x" + kind.name());
      assertEquals(ReplyKind.MALFORMED, parser.parse(b, 1, b.length), kind.name() + "y");
      assertEquals(ReplyKind.MALFORMED, parser.parse(b, 1, b.length - 2), "a prefix");
    }
    for (final String line : new String[] {"", "end", "END ", " END", "ERROR x", "VALUE", "VALUEk",
        "STORE", "\u0000"}) {
      final byte[] b = bytes(line);
      assertEquals(ReplyKind.MALFORMED, parser.parse(b, 0, b.length), "'" + line + "'");
    }
  }

  @Test
  void errorRepliesGiveTheirMessage() {
    assertError("SERVER_ERROR out of memory storing object", ReplyKind.SERVER_ERROR,
        "out of memory storing object");
    assertError("CLIENT_ERROR bad data chunk", ReplyKind.CLIENT_ERROR, "bad data chunk");
    assertError("SERVER_ERROR", ReplyKind.SERVER_ERROR, "");
    assertError("SERVER_ERROR ", ReplyKind.SERVER_ERROR, "");
    assertError("SERVER_ERRORS", ReplyKind.SERVER_ERROR, "S");
    assertError("CLIENT_ERROR  two", ReplyKind.CLIENT_ERROR, " two");
    assertError("ERROR", ReplyKind.ERROR, "");
    assertTrue(ReplyKind.ERROR.isError());
    assertTrue(ReplyKind.CLIENT_ERROR.isError());
    assertTrue(ReplyKind.SERVER_ERROR.isError());
    assertFalse(ReplyKind.NOT_STORED.isError());
    assertFalse(ReplyKind.MALFORMED.isError());
  }

  @Test
  void aDataBlockEndsInCrlf() {
    final byte[] b = bytes("abc\r\nabc\n\rabc\n");
    assertTrue(ReplyParser.endsInCrlf(b, 5));
    assertFalse(ReplyParser.endsInCrlf(b, 10));
    assertFalse(ReplyParser.endsInCrlf(b, 14));
  }

  private void assertValue(final String line, final String key, final String flags,
      final int bytes) {
    final byte[] b = bytes(line);
    assertEquals(ReplyKind.VALUE, parser.parse(b, 0, b.length), line);
    assertEquals(key, slice(b, parser.keyStart(), parser.keyEnd()), line);
    assertEquals(flags, slice(b, parser.flagsStart(), parser.flagsEnd()), line);
    assertEquals(bytes, parser.valueBytes(), line);
  }

  private void assertError(final String line, final ReplyKind kind, final String message) {
    final byte[] b = bytes(line);
    assertEquals(kind, parser.parse(b, 0, b.length), line);
    assertEquals(message, slice(b, parser.textStart(), b.length), line);
  }

  private static byte[] bytes(final String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static String slice(final byte[] b, final int from, final int to) {
    return new String(b, from, to - from, StandardCharsets.ISO_8859_1);
  }
}
