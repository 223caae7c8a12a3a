package org.mwlab.loadgen;

/** memtier's {@code --ratio S:G}: per cycle, {@code sets} SETs then {@code gets} keys read. */
public record Ratio(int sets, int gets) {

  public Ratio {
    if (sets < 0 || gets < 0 || sets + gets == 0) {
      throw new IllegalArgumentException("ratio needs non-negative parts and at least one > 0");
    }
  }

  /** Parses {@code "S:G"}. */
  public static Ratio parse(final String text) {
    final String[] parts = text.split(":", -1);
    if (parts.length != 2) {
      throw new IllegalArgumentException("ratio must look like S:G, got '" + text + "'");
    }
    try {
      return new Ratio(Integer.parseInt(parts[0].trim()), Integer.parseInt(parts[1].trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("ratio must look like S:G, got '" + text + "'", e);
    }
  }

  @Override
  public String toString() {
    return sets + ":" + gets;
  }
}
