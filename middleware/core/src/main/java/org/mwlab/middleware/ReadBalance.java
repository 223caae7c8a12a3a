package org.mwlab.middleware;

import java.util.Locale;

/** How a GET picks one server of its key's replica set. */
public enum ReadBalance {
  ROUND_ROBIN("round-robin"),
  LEAST_OUTSTANDING("least-outstanding");

  private final String label;

  ReadBalance(final String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }

  public static ReadBalance parse(final String text) {
    final String t = text.toLowerCase(Locale.ROOT);
    for (final ReadBalance b : values()) {
      if (b.label.equals(t)) {
        return b;
      }
    }
    throw new IllegalArgumentException(
        "read balance must be round-robin or least-outstanding, got '" + text + "'");
  }
}
