package org.mwlab.loadgen;

/** Key distribution of one request type, as in memtier's {@code --key-pattern}. */
public enum KeyPattern {
  RANDOM('R'),
  SEQUENTIAL('S'),
  GAUSSIAN('G');

  private final char letter;

  KeyPattern(final char letter) {
    this.letter = letter;
  }

  public char letter() {
    return letter;
  }

  public static KeyPattern of(final char letter) {
    for (final KeyPattern p : values()) {
      if (p.letter == letter) {
        return p;
      }
    }
    throw new IllegalArgumentException("unknown key pattern '" + letter + "' (use R, S or G)");
  }

  /** Parses {@code "X:Y"} into the SET pattern and the GET pattern. */
  public static KeyPattern[] parsePair(final String text) {
    if (text.length() != 3 || text.charAt(1) != ':') {
      throw new IllegalArgumentException("key pattern must look like R:R, S:S or G:G, got '" + text + "'");
    }
    return new KeyPattern[] {of(text.charAt(0)), of(text.charAt(2))};
  }
}
