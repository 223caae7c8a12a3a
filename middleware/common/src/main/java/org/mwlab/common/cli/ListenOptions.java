package org.mwlab.common.cli;

import picocli.CommandLine.Option;

/** Where a middleware listens: the options every middleware of the project takes. */
public final class ListenOptions {

  @Option(names = "-l", paramLabel = "IP", defaultValue = "127.0.0.1",
      description = "Listen address (default: ${DEFAULT-VALUE}).")
  private String address;

  @Option(names = "-p", paramLabel = "PORT", required = true,
      description = "Listen port (0 = any free port).")
  private int port;

  public String address() {
    return address;
  }

  public int port() {
    return port;
  }
}
