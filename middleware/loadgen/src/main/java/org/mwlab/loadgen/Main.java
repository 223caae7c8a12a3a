package org.mwlab.loadgen;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Command-line entry point of the built-in closed-loop load generator. */
@Command(
    name = "loadgen",
    mixinStandardHelpOptions = true,
    version = "mwlab loadgen 1.0.0",
    description = "Closed-loop memcached load generator with memtier_benchmark's flags.")
public final class Main implements Callable<Integer> {

  @Override
  public Integer call() {
    System.err.println("loadgen: not implemented yet");
    return 2;
  }

  public static void main(final String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }
}
