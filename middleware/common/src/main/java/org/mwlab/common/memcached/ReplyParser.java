package org.mwlab.common.memcached;

import org.mwlab.common.Ascii;

/**
 * Classifies the lines of memcached's text-protocol replies in the caller's buffer, without
 * allocating. Each caller keeps its own policy on top (which replies it expects, what a failure
 * means for its stream).
 *
 * <p>The grammar of a line {@code b[start, end)}, its CRLF removed (see {@link LineFramer}):
 *
 * <ul>
 *   <li>{@code VALUE <key> <flags> <bytes>[ <cas>]}: key and flags are the runs up to the next
 *       space, taken as they are (possibly empty); bytes is a decimal of at most 10 digits and at
 *       most the parser's limit; whatever follows the space after it is the CAS unique, unchecked.
 *       A line opening with {@code VALUE } that fails this is {@link ReplyKind#MALFORMED_VALUE}.
 *   <li>{@code END}, {@code STORED}, {@code NOT_STORED}, {@code EXISTS}, {@code NOT_FOUND},
 *       {@code DELETED}, {@code ERROR}: exactly the word.
 *   <li>{@code CLIENT_ERROR} and {@code SERVER_ERROR}: the word, then the message ({@link
 *       #textStart}) after a space.
 *   <li>Anything else is {@link ReplyKind#MALFORMED}.
 * </ul>
 *
 * <p>The fields of a VALUE header or an error reply are read from the parser after {@link #parse}
 * returned that kind, before the next line; one parser per thread.
 */
public final class ReplyParser {
  private static final byte SPACE = ' ';
  private static final byte[] VALUE = Ascii.bytes("VALUE ");
  private static final byte[] SERVER_ERROR = Ascii.bytes("SERVER_ERROR");
  private static final byte[] CLIENT_ERROR = Ascii.bytes("CLIENT_ERROR");
  /** The replies that are one word, the commonest first; each kind is named as its word. */
  private static final ReplyKind[] WORDS = {
    ReplyKind.END, ReplyKind.STORED, ReplyKind.NOT_STORED, ReplyKind.EXISTS, ReplyKind.NOT_FOUND,
    ReplyKind.DELETED, ReplyKind.ERROR
  };
  private static final byte[][] WORD_BYTES = new byte[WORDS.length][];

  static {
    for (int i = 0; i < WORDS.length; i++) {
      WORD_BYTES[i] = Ascii.bytes(WORDS[i].name());
    }
  }

  private final int maxValueBytes;
  private int keyStart;
  private int keyEnd;
  private int flagsStart;
  private int flagsEnd;
  private int valueBytes;
  private int casStart;
  private int casEnd;
  private int textStart;

  /** A parser that takes data blocks of at most {@code maxValueBytes} bytes. */
  public ReplyParser(final int maxValueBytes) {
    if (maxValueBytes < 0) {
      throw new IllegalArgumentException("largest value must be >= 0, got " + maxValueBytes);
    }
    this.maxValueBytes = maxValueBytes;
  }

  /** Classifies the reply line {@code b[start, end)} (CRLF removed). */
  public ReplyKind parse(final byte[] b, final int start, final int end) {
    if (Ascii.startsWith(b, start, end, VALUE)) {
      return value(b, start, end);
    }
    for (int i = 0; i < WORDS.length; i++) {
      if (Ascii.equals(b, start, end, WORD_BYTES[i])) {
        textStart = end;
        return WORDS[i];
      }
    }
    if (Ascii.startsWith(b, start, end, SERVER_ERROR)) {
      textStart = message(b, start + SERVER_ERROR.length, end);
      return ReplyKind.SERVER_ERROR;
    }
    if (Ascii.startsWith(b, start, end, CLIENT_ERROR)) {
      textStart = message(b, start + CLIENT_ERROR.length, end);
      return ReplyKind.CLIENT_ERROR;
    }
    return ReplyKind.MALFORMED;
  }

  /** After {@link ReplyKind#VALUE}: where the key starts. */
  public int keyStart() {
    return keyStart;
  }

  /** After {@link ReplyKind#VALUE}: where the key ends. */
  public int keyEnd() {
    return keyEnd;
  }

  /** After {@link ReplyKind#VALUE}: where the flags start (unchecked). */
  public int flagsStart() {
    return flagsStart;
  }

  /** After {@link ReplyKind#VALUE}: where the flags end. */
  public int flagsEnd() {
    return flagsEnd;
  }

  /** After {@link ReplyKind#VALUE}: the data block's length, without its CRLF. */
  public int valueBytes() {
    return valueBytes;
  }

  /** After {@link ReplyKind#VALUE}: where the CAS unique starts (unchecked; empty if none). */
  public int casStart() {
    return casStart;
  }

  /** After {@link ReplyKind#VALUE}: where the CAS unique ends (the end of the line). */
  public int casEnd() {
    return casEnd;
  }

  /** After an error reply: where its message starts (it ends with the line; empty if none). */
  public int textStart() {
    return textStart;
  }

  /** True if the data block and CRLF that end at {@code b[end]} end in CRLF. */
  public static boolean endsInCrlf(final byte[] b, final int end) {
    return b[end - 2] == '\r' && b[end - 1] == '\n';
  }

  private ReplyKind value(final byte[] b, final int start, final int end) {
    final int keyFrom = start + VALUE.length;
    final int keyTo = Ascii.indexOf(b, keyFrom, end, SPACE);
    final int flagsTo = keyTo < 0 ? -1 : Ascii.indexOf(b, keyTo + 1, end, SPACE);
    if (flagsTo < 0) {
      return ReplyKind.MALFORMED_VALUE;
    }
    int bytesTo = Ascii.indexOf(b, flagsTo + 1, end, SPACE);
    if (bytesTo < 0) {
      bytesTo = end;
    }
    final long bytes = Ascii.parseUnsigned(b, flagsTo + 1, bytesTo, maxValueBytes);
    if (bytes < 0) {
      return ReplyKind.MALFORMED_VALUE;
    }
    keyStart = keyFrom;
    keyEnd = keyTo;
    flagsStart = keyTo + 1;
    flagsEnd = flagsTo;
    valueBytes = (int) bytes;
    casStart = bytesTo == end ? end : bytesTo + 1;
    casEnd = end;
    return ReplyKind.VALUE;
  }

  /** Where the message after an error word at {@code from} starts. */
  private static int message(final byte[] b, final int from, final int end) {
    return from < end && b[from] == SPACE ? from + 1 : from;
  }
}
