package org.mwlab.common.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * The usage errors of a command: picocli prints the message and the usage help, and the process
 * exits with status 2.
 *
 * @param command the command whose line is refused (its {@code @Spec})
 */
public record Usage(CommandSpec command) {

  /** Refuses the command line with {@code message} if {@code refused} holds. */
  public void refuseIf(final boolean refused, final String message) {
    if (refused) {
      throw error(message);
    }
  }

  /** A usage error with {@code message}, for the caller to throw. */
  public ParameterException error(final String message) {
    return new ParameterException(command.commandLine(), message);
  }
}
