package org.mwlab.middleware;

/** How requests travel from the net-thread to the servers: which {@link Dispatcher} runs. */
public enum Design {
  /** One shared queue, W workers that each talk to every server (the default). */
  D2018("2018"),
  /** Per server a read queue with T blocking read threads and a write queue with one thread. */
  D2016("2016");

  private final String label;

  Design(final String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }

  public static Design parse(final String text) {
    for (final Design d : values()) {
      if (d.label.equals(text.trim())) {
        return d;
      }
    }
    throw new IllegalArgumentException("design must be 2018 or 2016, got '" + text + "'");
  }
}
