package org.mwlab.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class AsciiTest {
  private static final byte[] LINE = Ascii.bytes("xxVALUE key 0 4294967295\r\n");

  @Test
  void parseUnsignedTakesOnlyDecimalsUpToTheLimit() {
    assertEquals(4294967295L, Ascii.parseUnsigned(LINE, 14, 24, 0xFFFF_FFFFL));
    assertEquals(-1, Ascii.parseUnsigned(LINE, 14, 24, Integer.MAX_VALUE), "over the limit");
    assertEquals(0, Ascii.parseUnsigned(LINE, 12, 13, 10));
    final byte[] b = Ascii.bytes("-1 +1 12345678901 1a");
    assertEquals(-1, Ascii.parseUnsigned(b, 0, 2, 100), "a sign");
    assertEquals(-1, Ascii.parseUnsigned(b, 3, 5, 100), "a sign");
    assertEquals(-1, Ascii.parseUnsigned(b, 6, 17, Long.MAX_VALUE), "eleven digits");
    assertEquals(-1, Ascii.parseUnsigned(b, 18, 20, 100), "not a digit");
    assertEquals(-1, Ascii.parseUnsigned(b, 5, 5, 100), "empty");
    assertEquals(-1, Ascii.parseUnsigned(b, 6, 5, 100), "a reversed range");
  }

  @Test
  void rangesAreComparedWithinTheirBounds() {
    assertTrue(Ascii.startsWith(LINE, 2, LINE.length, "VALUE "));
    assertTrue(Ascii.startsWith(LINE, 2, LINE.length, Ascii.bytes("VALUE ")));
    assertFalse(Ascii.startsWith(LINE, 2, 6, "VALUE"), "the range ends first");
    assertTrue(Ascii.equals(LINE, 8, 11, Ascii.bytes("key")));
    assertFalse(Ascii.equals(LINE, 8, 12, Ascii.bytes("key")));
    assertEquals(11, Ascii.indexOf(LINE, 8, LINE.length, (byte) ' '));
    assertEquals(-1, Ascii.indexOf(LINE, 8, 11, (byte) ' '));
    assertEquals("VALUE", Ascii.text(LINE, 2, LINE.length, 5));
    assertEquals("VALUE key", Ascii.text(LINE, 2, 11, 200));
  }
}
