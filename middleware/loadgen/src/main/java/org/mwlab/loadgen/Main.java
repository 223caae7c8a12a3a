package org.mwlab.loadgen;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.mwlab.common.Json;
import org.mwlab.common.load.RunClock;
import org.mwlab.common.load.StartGate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/** Command-line entry point of the built-in closed-loop load generator. */
@Command(
    name = "loadgen",
    mixinStandardHelpOptions = true,
    version = "mwlab loadgen " + Main.VERSION,
    sortOptions = false,
    description = {
      "Closed-loop memcached (text protocol) load generator with memtier_benchmark's flags.",
      "Every connection sends one request and waits for its reply before the next.",
      "--json-out-file writes memtier's JSON layout plus an \"mwlab\" section with the full"
          + " latency histograms (microseconds, 3 significant digits)."
    })
public final class Main implements Callable<Integer> {

  static final String VERSION = "1.0.0";

  @Spec private CommandLine.Model.CommandSpec spec;

  @Option(names = {"-s", "--server"}, description = "Server address (default: ${DEFAULT-VALUE}).", defaultValue = "127.0.0.1")
  private String server;

  @Option(names = {"-p", "--port"}, description = "Server port (default: ${DEFAULT-VALUE}).", defaultValue = "11211")
  private int port;

  @Option(names = {"-P", "--protocol"}, description = "Only memcache_text is supported.", defaultValue = "memcache_text")
  private String protocol;

  @Option(names = {"-c", "--clients"}, description = "Connections per thread (default: ${DEFAULT-VALUE}).", defaultValue = "50")
  private int clients;

  @Option(names = {"-t", "--threads"}, description = "Threads (default: ${DEFAULT-VALUE}).", defaultValue = "4")
  private int threads;

  @Option(names = "--test-time", description = "Seconds to run (exclusive with --requests).", defaultValue = "0")
  private int testTime;

  @Option(
      names = {"-n", "--requests"},
      description = "Requests per connection, or 'allkeys' to cover the key range once (default 10000 without --test-time).")
  private String requests;

  @Option(
      names = "--steps",
      paramLabel = "C",
      split = ",",
      description = {
        "Stepped load: connections per thread that send in each step (each 1..--clients; all are"
            + " opened first). Needs --step-time; excludes --test-time and --requests.",
        "--json-out-file F then also gets one file per step, F's name with .step<i>.json."
      })
  private List<Integer> steps;

  @Option(names = "--step-time", paramLabel = "S", description = "Seconds of each step of --steps.")
  private Integer stepTime;

  @Option(
      names = "--window-ms",
      paramLabel = "N",
      description = {
        "Length of the windows of the JSON's \"Time-Serie\", in milliseconds (" + Config.MIN_WINDOW_MS
            + ".." + Config.MAX_WINDOW_MS + ", default: ${DEFAULT-VALUE}, memtier's one second).",
        "Its keys are then window indices; with --steps, --step-time must be a whole number of windows."
      },
      defaultValue = "1000")
  private int windowMs;

  @Option(names = "--ratio", description = "SET:GET ratio (default: ${DEFAULT-VALUE}).", defaultValue = "1:10")
  private String ratio;

  @Option(names = "--multi-key-get", description = "Keys per multi-key GET, 0 = single GETs.", defaultValue = "0")
  private int multiKeyGet;

  @Option(names = {"-d", "--data-size"}, description = "Value size in bytes (default: ${DEFAULT-VALUE}).", defaultValue = "32")
  private int dataSize;

  @Option(names = "--key-minimum", description = "Smallest key index (default: ${DEFAULT-VALUE}).", defaultValue = "0")
  private long keyMinimum;

  @Option(names = "--key-maximum", description = "Largest key index (default: ${DEFAULT-VALUE}).", defaultValue = "10000000")
  private long keyMaximum;

  @Option(names = "--key-pattern", description = "SET:GET key pattern, each R, S or G (default: ${DEFAULT-VALUE}).", defaultValue = "R:R")
  private String keyPattern;

  @Option(names = "--key-prefix", description = "Key prefix (default: ${DEFAULT-VALUE}).", defaultValue = "memtier-")
  private String keyPrefix;

  @Option(names = "--expiry-range", description = "Expiry MIN-MAX seconds (default: ${DEFAULT-VALUE}).", defaultValue = "0-0")
  private String expiryRange;

  @Option(names = "--print-percentiles", description = "Percentiles to report (default: ${DEFAULT-VALUE}).", defaultValue = "50,90,99,99.9", split = ",")
  private List<Double> percentiles;

  @Option(names = "--json-out-file", description = "Write the results as JSON to this file.")
  private Path jsonOut;

  @Option(names = "--hide-histogram", description = "Accepted for memtier compatibility; the table omits it anyway.")
  private boolean hideHistogram;

  @Option(names = "--seed", description = "Random seed (default: ${DEFAULT-VALUE}).", defaultValue = "1")
  private long seed;

  @Option(
      names = "--start-gate",
      paramLabel = "FILE",
      description = "Once connected, write FILE.ready and start measuring only when FILE exists.")
  private Path startGate;

  @Option(
      names = "--start-gate-timeout",
      description = "Seconds to wait at the start gate (default: ${DEFAULT-VALUE}).",
      defaultValue = "600")
  private long startGateTimeout;

  private List<String> arguments = List.of();

  @Override
  public Integer call() throws IOException, InterruptedException {
    final Config config = config();
    final ByteBuffer value = valueBuffer(config.dataSize());
    final RunClock clock = new RunClock();
    final AtomicReference<String> abort = new AtomicReference<>();
    final StartGate gate = startGate == null ? null : new StartGate(startGate, Duration.ofSeconds(startGateTimeout));
    final CyclicBarrier ready =
        new CyclicBarrier(
            config.threads(),
            () -> {
              // Runs once, when every thread has connected (or failed to).
              if (gate != null && abort.get() == null) {
                final String why = gate.pass();
                if (why != null) {
                  abort.compareAndSet(null, why);
                }
              }
              clock.start();
            });
    final AtomicLong setSequence = new AtomicLong();
    final AtomicLong getSequence = new AtomicLong();
    final List<Worker> workers = new ArrayList<>();
    final List<Thread> running = new ArrayList<>();
    for (int i = 0; i < config.threads(); i++) {
      final Worker w = new Worker(config, i, clock, ready, value, setSequence, getSequence, abort);
      workers.add(w);
      final Thread t = new Thread(w, "loadgen-" + i);
      running.add(t);
      t.start();
    }
    for (final Thread t : running) {
      t.join();
    }
    final RunStats[] perStep = new RunStats[config.stepCount()];
    for (int s = 0; s < perStep.length; s++) {
      perStep[s] = new RunStats();
    }
    String failure = abort.get();
    long finish = clock.startEpochMs();
    for (final Worker w : workers) {
      for (int s = 0; s < perStep.length; s++) {
        perStep[s].add(w.stats(s));
      }
      finish = Math.max(finish, w.finishedEpochMs());
      if (failure == null && w.failure() != null) {
        failure = w.failure();
      }
    }
    // The whole run: each step's windows shifted to where the step starts in the run.
    final RunStats merged = new RunStats();
    for (int s = 0; s < perStep.length; s++) {
      merged.add(perStep[s], s * config.windowsPerStep());
    }
    final long start = clock.startEpochMs() == 0 ? finish : clock.startEpochMs();
    final Report report = new Report(config, merged, percentiles, start, finish);
    final List<Report> stepReports = new ArrayList<>();
    if (config.stepped()) {
      final long stepMs = config.stepSeconds() * 1000L;
      for (int s = 0; s < perStep.length; s++) {
        final long stepStart = start + s * stepMs;
        stepReports.add(new Report(config.step(s), perStep[s], percentiles, stepStart, stepStart + stepMs));
      }
    }
    final PrintWriter out = spec.commandLine().getOut();
    out.printf(
        "%d Threads%n%d Connections per thread%n%s%n",
        config.threads(),
        config.clients(),
        config.byRequests() ? config.requests() + " Requests per client" : config.testTimeSeconds() + " Seconds");
    out.print(report.table());
    for (int s = 0; s < stepReports.size(); s++) {
      out.printf(
          "%nStep %d of %d: %d Connections per thread, %d Seconds%n",
          s + 1,
          stepReports.size(),
          config.activeClients(s),
          config.stepSeconds());
      out.print(stepReports.get(s).table());
    }
    out.flush();
    if (jsonOut != null) {
      final Path parent = jsonOut.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      // The step files first: a reader that waits for F finds them complete.
      for (int s = 0; s < stepReports.size(); s++) {
        final Map<String, Object> m =
            stepReports
                .get(s)
                .toMap(configuration(config.step(s)), failure, new Report.StepLabel(s + 1, stepReports.size()));
        Files.writeString(stepFile(jsonOut, s + 1), Json.indented(m) + "\n");
      }
      Files.writeString(jsonOut, Json.indented(report.toMap(configuration(config), failure)) + "\n");
    }
    if (failure != null) {
      spec.commandLine().getErr().println("loadgen: " + failure);
      return 1;
    }
    return 0;
  }

  /** F's sibling for step {@code step} (1-based): result.json gives result.step1.json. */
  static Path stepFile(final Path f, final int step) {
    final String name = f.getFileName().toString();
    final String stem = name.endsWith(".json") ? name.substring(0, name.length() - ".json".length()) : name;
    return f.resolveSibling(stem + ".step" + step + ".json");
  }

  private Config config() {
    try {
      if (!"memcache_text".equals(protocol)) {
        throw new IllegalArgumentException("only -P memcache_text is supported, got '" + protocol + "'");
      }
      final KeyPattern[] patterns = KeyPattern.parsePair(keyPattern);
      final String[] expiry = expiryRange.split("-", -1);
      if (expiry.length != 2) {
        throw new IllegalArgumentException("--expiry-range must look like MIN-MAX, got '" + expiryRange + "'");
      }
      long perConnection = 0;
      if (requests != null) {
        if ("allkeys".equals(requests)) {
          final long keys = keyMaximum - keyMinimum + 1;
          final long connections = (long) clients * threads;
          perConnection = (keys + connections - 1) / connections;
        } else {
          perConnection = Long.parseLong(requests);
          if (perConnection <= 0) {
            throw new IllegalArgumentException("--requests must be > 0");
          }
        }
      } else if (testTime <= 0 && steps == null) {
        perConnection = 10_000;
      }
      if (startGateTimeout <= 0) {
        throw new IllegalArgumentException("--start-gate-timeout must be > 0");
      }
      if (requests != null && testTime > 0) {
        throw new IllegalArgumentException("give either --test-time or --requests, not both");
      }
      int runSeconds = testTime;
      if (steps != null) {
        if (steps.isEmpty()) {
          throw new IllegalArgumentException("--steps needs at least one value");
        }
        if (requests != null) {
          throw new IllegalArgumentException("--steps excludes --requests");
        }
        // Also an explicit --test-time 0: the steps alone set the run's length.
        if (spec.commandLine().getParseResult().hasMatchedOption("--test-time")) {
          throw new IllegalArgumentException("--steps excludes --test-time (the run lasts steps x --step-time)");
        }
        if (stepTime == null) {
          throw new IllegalArgumentException("--steps needs --step-time");
        }
        if (stepTime <= 0) {
          throw new IllegalArgumentException("--step-time must be > 0");
        }
        try {
          runSeconds = Math.multiplyExact(steps.size(), stepTime);
        } catch (ArithmeticException e) {
          throw new IllegalArgumentException("--steps x --step-time is too long", e);
        }
      } else if (stepTime != null) {
        throw new IllegalArgumentException("--step-time needs --steps");
      }
      return new Config(
          server,
          port,
          clients,
          threads,
          runSeconds,
          perConnection,
          Ratio.parse(ratio),
          multiKeyGet,
          dataSize,
          keyMinimum,
          keyMaximum,
          patterns[0],
          patterns[1],
          Integer.parseInt(expiry[0].trim()),
          Integer.parseInt(expiry[1].trim()),
          keyPrefix,
          seed,
          steps == null ? List.of() : steps,
          stepTime == null ? 0 : stepTime,
          windowMs);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }

  private Map<String, Object> configuration(final Config c) {
    final Map<String, Object> m = new LinkedHashMap<>();
    m.put("server", c.server());
    m.put("port", c.port());
    m.put("protocol", protocol);
    m.put("clients", c.clients());
    m.put("threads", c.threads());
    m.put("test_time", c.testTimeSeconds());
    m.put("requests", c.requests());
    m.put("ratio", c.ratio().toString());
    m.put("multi_key_get", c.multiKeyGet());
    m.put("data_size", c.dataSize());
    m.put("key_minimum", c.keyMinimum());
    m.put("key_maximum", c.keyMaximum());
    m.put("key_pattern", c.setPattern().letter() + ":" + c.getPattern().letter());
    m.put("key_prefix", c.keyPrefix());
    m.put("expiry_range", c.expiryMin() + "-" + c.expiryMax());
    m.put("print_percentiles", percentiles);
    m.put("seed", c.seed());
    if (c.stepped()) {
      m.put("steps", c.steps());
      m.put("step_time", c.stepSeconds());
    }
    m.put("arguments", arguments);
    return m;
  }

  /** The value of every SET followed by its CRLF, built once and shared read-only. */
  static ByteBuffer valueBuffer(final int size) {
    final byte[] b = new byte[size + 2];
    Arrays.fill(b, 0, size, (byte) 'x');
    b[size] = '\r';
    b[size + 1] = '\n';
    // Direct, so that writing it does not copy it into a temporary native buffer each time.
    final ByteBuffer direct = ByteBuffer.allocateDirect(b.length);
    direct.put(b).flip();
    return direct.asReadOnlyBuffer();
  }

  public static int run(final String[] args, final PrintWriter out, final PrintWriter err) {
    final Main main = new Main();
    main.arguments = List.of(args);
    final CommandLine cmd = new CommandLine(main);
    cmd.setOut(out);
    cmd.setErr(err);
    return cmd.execute(args);
  }

  public static void main(final String[] args) {
    final PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    final PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
    System.exit(run(args, out, err));
  }
}
