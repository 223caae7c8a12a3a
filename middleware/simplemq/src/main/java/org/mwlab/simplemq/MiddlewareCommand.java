package org.mwlab.simplemq;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.concurrent.Callable;
import org.mwlab.common.cli.ListenOptions;
import org.mwlab.common.cli.Termination;
import org.mwlab.common.cli.Usage;
import org.mwlab.simplemq.server.Limits;
import org.mwlab.simplemq.server.Middleware;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** `simplemq middleware`: runs one SimpleMQ middleware. */
@Command(
    name = "middleware",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    usageHelpWidth = 100,
    description = {
      "SimpleMQ, the message-queue middleware of the 2015 study: clients send, peek and pop"
          + " messages over length-prefixed binary frames (README); the state lives in"
          + " PostgreSQL, behind the procedures in sql/.",
      "One distributor thread reads requests and hands each to an idle worker; each worker"
          + " has one database connection. SIGTERM drains: requests already read are answered,"
          + " then the statistics are written and the process exits with status 0."
    })
public final class MiddlewareCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Mixin private ListenOptions listen;

  // The testbed always passes the count; this default, for standalone use, is
  // testbed.services.middleware.DEFAULT_MQ_WORKERS (tests/test_workers.py checks it).
  @Option(names = {"-t", "--workers"}, paramLabel = "WORKERS", defaultValue = "16",
      description = "Worker threads, each with one database connection (default: ${DEFAULT-VALUE}).")
  private int workers;

  @Option(names = "--db", paramLabel = "URL", required = true,
      description = "pgjdbc URL of the database, e.g. jdbc:postgresql://host:5432/simplemq?user=mq.")
  private String databaseUrl;

  @Option(names = "--max-frame", paramLabel = "BYTES", defaultValue = "65536",
      description = "Longest request frame; longer ones are skipped and refused"
          + " (default: ${DEFAULT-VALUE}).")
  private int maxFrame;

  @Option(names = "--max-body", paramLabel = "BYTES", defaultValue = "4096",
      description = "Longest message body (default: ${DEFAULT-VALUE}).")
  private int maxBody;

  @Option(names = "--max-connections", paramLabel = "N",
      defaultValue = "" + Limits.MAX_CONNECTIONS,
      description = "Client connections served at once; one more gets a TOO_MANY_CONNECTIONS"
          + " reply and is closed (default: ${DEFAULT-VALUE}).")
  private int maxConnections;

  @Option(names = "--max-pending", paramLabel = "REQUESTS",
      defaultValue = "" + Limits.MAX_PENDING,
      description = "Requests read from one connection and not yet at a worker; at the limit the"
          + " connection is not read until half of them went (default: ${DEFAULT-VALUE}).")
  private int maxPending;

  @Option(names = "--max-output", paramLabel = "BYTES",
      defaultValue = "" + Limits.MAX_OUTPUT_BYTES,
      description = "Reply bytes one client has not taken; at the limit its next requests wait,"
          + " and then its reading (default: ${DEFAULT-VALUE}).")
  private int maxOutput;

  @Option(names = "--frame-timeout-ms", paramLabel = "MS",
      defaultValue = "" + Limits.FRAME_TIMEOUT_MS,
      description = "Close a connection that sent part of a frame and then nothing for MS"
          + " milliseconds; 0: never (default: ${DEFAULT-VALUE}).")
  private long frameTimeoutMs;

  @Option(names = "--stats-dir", paramLabel = "DIR", defaultValue = "mq-stats",
      description = "Where the statistics are written (default: ${DEFAULT-VALUE}).")
  private Path statsDir;

  @Option(names = "--stats-window-ms", paramLabel = "MS", defaultValue = "1000",
      description = "Length of the statistics' windows (default: ${DEFAULT-VALUE}).")
  private int statsWindowMs;

  @Option(names = "--hold-after-commit", paramLabel = "POPS", defaultValue = "-1", hidden = true,
      description = "Fault tests only: after POPS answered pops and reads, hold every further"
          + " committed pop or read unanswered and journal its message ids (see the module"
          + " README).")
  private long holdAfterPops;

  @Option(names = "--hold-journal", paramLabel = "FILE", hidden = true,
      description = "Fault tests only: where --hold-after-commit journals the held messages.")
  private Path holdJournal;

  @Option(names = "--group-commit", paramLabel = "K", defaultValue = "1",
      description = "Run up to K waiting requests of different clients in one transaction, each"
          + " answered after its commit (default: ${DEFAULT-VALUE}, the seed's: every request"
          + " its own transaction).")
  private int groupCommit;

  @Option(names = "--notify",
      description = "Serve blocking pops and reads (pop_wait, read_wait): install the database's"
          + " notification triggers (sql/notify.sql) and LISTEN, so a waiting request is woken"
          + " by a new message, never polled (beyond the study; it costs each send's commit).")
  private boolean blockingWaits;

  @Option(names = "--drain-ms", paramLabel = "MS", defaultValue = "10000",
      description = "Longest wait for the requests in flight on SIGTERM (default: ${DEFAULT-VALUE}).")
  private long drainMs;

  Middleware.Config config() {
    final Usage usage = new Usage(spec);
    usage.refuseIf(workers < 1, "--workers: at least one worker");
    usage.refuseIf(maxBody < 1 || maxFrame < maxBody + 64,
        "--max-frame must hold a send of --max-body bytes and its 29 header bytes"
            + " (at least --max-body + 64)");
    usage.refuseIf(statsWindowMs < 1, "--stats-window-ms: at least 1");
    usage.refuseIf(maxConnections < 1, "--max-connections: at least one connection");
    usage.refuseIf(maxPending < 1, "--max-pending: at least one request");
    usage.refuseIf(maxOutput < maxFrame,
        "--max-output must hold a reply of --max-frame bytes (at least --max-frame, "
            + maxFrame + ")");
    usage.refuseIf(frameTimeoutMs < 0, "--frame-timeout-ms: 0 (never) or more");
    usage.refuseIf((holdJournal == null) != (holdAfterPops < 0),
        "--hold-after-commit and --hold-journal go together (a count of at least 0, a file)");
    usage.refuseIf(groupCommit < 1 || groupCommit > 1024,
        "--group-commit: from 1 (each request its own transaction) to 1024");
    usage.refuseIf(listen.port() < 0 || listen.port() > 65535, "-p: a port from 0 to 65535");
    return new Middleware.Config(new InetSocketAddress(listen.address(), listen.port()),
        databaseUrl, workers, maxFrame, maxBody, statsDir, statsWindowMs,
        new Limits(maxConnections, maxPending, maxOutput, frameTimeoutMs), holdJournal,
        holdAfterPops, groupCommit, blockingWaits);
  }

  @Override
  public Integer call() {
    final Middleware.Config config = config();
    final Middleware m;
    final PrintWriter err = spec.commandLine().getErr();
    try {
      m = new Middleware(config);
    } catch (IOException | SQLException e) {
      err.println("simplemq: cannot start: " + e.getMessage());
      err.flush();
      return 1;
    }
    final Termination end =
        Termination.onSignal(
            () -> {
              try {
                m.stop(drainMs);
              } catch (IOException | InterruptedException e) {
                System.err.println("simplemq: stopping: " + e);
              }
            });
    try {
      System.out.println("simplemq: listening on " + config.listen().getHostString() + ":"
          + m.address().getPort() + ", " + config.workers() + " workers"
          + (config.groupCommit() > 1 ? ", group commit of up to " + config.groupCommit() : ""));
    } catch (IOException e) {
      err.println("simplemq: " + e.getMessage());
    }
    System.out.flush();
    end.await();
    return 0;
  }
}
