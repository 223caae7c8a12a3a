package org.mwlab.middleware;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.mwlab.common.cli.ListenOptions;
import org.mwlab.common.cli.Termination;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Command-line entry point of the middleware. */
@Command(
    name = "middleware",
    mixinStandardHelpOptions = true,
    version = "mwlab middleware 1.0.0",
    sortOptions = false,
    usageHelpWidth = 100,
    description = {
      "memcached middleware (text protocol): get, multi-key get and set, forwarded to the"
          + " memcached servers given with -m.",
      "Writes are sent to every replica of the key; reads go to one replica. SIGTERM writes"
          + " the remaining statistics and exits with status 0.",
      "--design 2018 (default): one queue, --workers workers that each talk to every server."
          + " --design 2016: per server a read queue with --workers read threads and a write"
          + " queue with one asynchronous write thread; reads go to the key's primary."
    })
public final class Main implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Mixin private ListenOptions listen;

  // -t as in memtier and memcached. The testbed always passes the count; this default, for
  // standalone use, is testbed.point.DEFAULT_WORKERS (tests/test_workers.py checks it).
  @Option(names = {"-t", "--workers"}, paramLabel = "WORKERS", defaultValue = "8",
      description = "Worker threads; with --design 2016 read threads per server"
          + " (default: ${DEFAULT-VALUE}).")
  private int workers;

  @Option(names = "-s", paramLabel = "true|false", defaultValue = "false", arity = "1",
      description = "Sharded multi-key GETs: split the keys over the servers (default: ${DEFAULT-VALUE}).")
  private boolean sharded;

  @Option(names = "-m", paramLabel = "HOST:PORT", required = true, arity = "1..*",
      description = "memcached servers.")
  private List<String> servers;

  @Option(names = "--design", paramLabel = "2018|2016", defaultValue = "2018",
      description = "Middleware design: 2018 (one shared queue and workers) or 2016 (per server"
          + " a read queue with --workers threads and a write queue with one selector thread)"
          + " (default: ${DEFAULT-VALUE}).")
  private String design;

  @Option(names = "--replication", paramLabel = "R",
      description = "Replicas per key on the consistent-hash ring (default: all servers).")
  private Integer replication;

  @Option(names = "--read-balance", paramLabel = "POLICY", defaultValue = "round-robin",
      description = "How a GET picks a replica: round-robin or least-outstanding (default: ${DEFAULT-VALUE}).")
  private String readBalance;

  @Option(names = "--stats-window-ms", paramLabel = "MS", defaultValue = "1000",
      description = "Statistics window (default: ${DEFAULT-VALUE}).")
  private long statsWindowMs;

  @Option(names = "--stats-dir", paramLabel = "DIR", defaultValue = "mw-stats",
      description = "Statistics output directory (default: ${DEFAULT-VALUE}).")
  private Path statsDir;

  @Option(names = "--trace-sample", paramLabel = "N", defaultValue = "0",
      description = "Trace one request in N to trace.csv (default: ${DEFAULT-VALUE} = off).")
  private int traceSample;

  @Option(names = "--server-timeout-ms", paramLabel = "MS", defaultValue = "1000",
      description = "Time a server has to answer (and to accept a connection) (default: ${DEFAULT-VALUE}).")
  private int serverTimeoutMs;

  @Option(names = "--reconnect-min-ms", paramLabel = "MS", defaultValue = "50",
      description = "First reconnect delay after a server failed; doubles per failure (default: ${DEFAULT-VALUE}).")
  private int reconnectMinMs;

  @Option(names = "--reconnect-max-ms", paramLabel = "MS", defaultValue = "2000",
      description = "Longest reconnect delay (default: ${DEFAULT-VALUE}).")
  private int reconnectMaxMs;

  @Option(names = "--queue-capacity", paramLabel = "N", defaultValue = "4096",
      description = "Bound of the request queue (design 2016: of each queue); when full the"
          + " network thread stops reading (default: ${DEFAULT-VALUE}).")
  private int queueCapacity;

  @Option(names = "--max-key-length", paramLabel = "BYTES", defaultValue = "250",
      description = "Longest key (default: ${DEFAULT-VALUE}, as memcached).")
  private int maxKeyLength;

  @Option(names = "--max-value-bytes", paramLabel = "BYTES", defaultValue = "1048576",
      description = "Largest value (default: ${DEFAULT-VALUE}, memcached's item size limit).")
  private int maxValueBytes;

  @Option(names = "--max-line-length", paramLabel = "BYTES", defaultValue = "8192",
      description = "Longest command line (default: ${DEFAULT-VALUE}).")
  private int maxLineLength;

  @Option(names = "--max-keys-per-get", paramLabel = "N", defaultValue = "1024",
      description = "Most keys in one get (default: ${DEFAULT-VALUE}).")
  private int maxKeysPerGet;

  @Option(names = "--max-connections", paramLabel = "N", defaultValue = "1024",
      description = "Most client connections (default: ${DEFAULT-VALUE}, as memcached -c).")
  private int maxConnections;

  @Option(names = "--max-pipeline", paramLabel = "N", defaultValue = "1024",
      description = "Most unanswered requests per connection before reading from it pauses"
          + " (default: ${DEFAULT-VALUE}).")
  private int maxPipeline;

  @Option(names = "--virtual-nodes", paramLabel = "N", defaultValue = "160",
      description = "Points per server on the hash ring (default: ${DEFAULT-VALUE}).")
  private int virtualNodes;

  @Option(names = "--max-batch", paramLabel = "N", defaultValue = "1",
      description = "Design 2018: a worker takes up to N requests that are already queued and"
          + " pipelines them to the servers, one write per server (default: ${DEFAULT-VALUE} ="
          + " one request per turn).")
  private int maxBatch;

  /** Builds the configuration from the parsed options; bad combinations are usage errors. */
  Config config() {
    try {
      final List<HostPort> hosts = servers.stream().map(HostPort::parse).toList();
      return new Config(
          listen.address(), listen.port(), workers, sharded, hosts,
          replication == null ? hosts.size() : replication,
          ReadBalance.parse(readBalance), statsWindowMs, statsDir, traceSample, serverTimeoutMs,
          reconnectMinMs, reconnectMaxMs, queueCapacity, maxKeyLength, maxValueBytes,
          maxLineLength, maxKeysPerGet, maxConnections, maxPipeline, virtualNodes,
          Design.parse(design), maxBatch);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }

  /** Parses a command line into a configuration (for tests and embedding). */
  public static Config parse(final String... args) {
    final Main main = new Main();
    new CommandLine(main).parseArgs(args);
    return main.config();
  }

  @Override
  public Integer call() {
    final Config config = config();
    final Middleware m;
    try {
      m = Middleware.start(config);
    } catch (IOException e) {
      final PrintWriter err = spec.commandLine().getErr();
      err.println("middleware: cannot start: " + e.getMessage());
      err.flush();
      return 1;
    }
    final Termination end = Termination.onSignal(() -> m.shutdown(true));
    System.out.println(
        "middleware: listening on " + config.listenAddress() + ":" + m.port() + ", "
            + m.describe() + ", " + config.servers().size() + " servers, replication "
            + config.replication() + ", sharded " + config.sharded());
    System.out.flush();
    end.await();
    return 0;
  }

  public static void main(final String[] args) {
    System.exit(new CommandLine(new Main()).execute(args));
  }
}
