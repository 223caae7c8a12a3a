package org.mwlab.middleware;

import java.util.List;

/**
 * The batch size every middleware a test starts runs with: {@code -Dmwlab.test.maxBatch=N} (the
 * build's second test run sets 16) adds {@code --max-batch N} wherever the test chose neither a
 * batch size nor design 2016, so that every test also covers batching workers.
 */
final class TestBatching {
  static final String PROPERTY = "mwlab.test.maxBatch";

  private TestBatching() {}

  /** The flags to add to a middleware command line {@code args}. */
  static List<String> args(final List<String> args) {
    final String n = System.getProperty(PROPERTY, "");
    if (n.isBlank() || args.contains("--max-batch")) {
      return List.of();
    }
    final int design = args.indexOf("--design");
    if (design >= 0 && design + 1 < args.size() && args.get(design + 1).equals("2016")) {
      return List.of();
    }
    return List.of("--max-batch", n.trim());
  }
}
