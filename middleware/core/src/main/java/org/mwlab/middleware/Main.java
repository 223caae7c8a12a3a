package org.mwlab.middleware;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Command-line entry point of the middleware. */
@Command(
    name = "middleware",
    mixinStandardHelpOptions = true,
    version = "mwlab middleware 1.0.0",
    description = "memcached middleware (text protocol).")
public final class Main implements Callable<Integer> {

  @Option(names = "-l", description = "Listen address.", defaultValue = "127.0.0.1")
  private String listenAddress;

  @Option(names = "-p", description = "Listen port.", required = true)
  private int port;

  @Option(names = "-t", description = "Worker threads.", defaultValue = "8")
  private int workers;

  @Option(names = "-s", description = "Shard multi-key GETs (true|false).", defaultValue = "false", arity = "1")
  private boolean sharded;

  @Option(names = "-m", description = "memcached servers as host:port.", required = true, arity = "1..*")
  private List<String> servers;

  @Override
  public Integer call() {
    System.err.println("middleware: not implemented yet");
    return 2;
  }

  public static void main(final String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }
}
