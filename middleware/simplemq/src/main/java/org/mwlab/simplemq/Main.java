package org.mwlab.simplemq;

import org.mwlab.simplemq.client.ClientCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Command-line entry point: the middleware and the clients of SimpleMQ. */
@Command(
    name = "simplemq",
    mixinStandardHelpOptions = true,
    version = "mwlab simplemq 1.0.0",
    subcommands = {MiddlewareCommand.class, ClientCommand.class},
    description = "SimpleMQ, the message-queue middleware of the 2015 study, and its clients.")
public final class Main implements Runnable {

  @Override
  public void run() {
    new CommandLine(this).usage(System.err);
  }

  public static void main(final String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }
}
