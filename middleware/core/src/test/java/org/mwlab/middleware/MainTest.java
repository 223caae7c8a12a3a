package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class MainTest {
  @Test
  void rejectsMissingServers() {
    assertEquals(2, new CommandLine(new Main()).execute("-p", "11212"));
  }
}
