package org.mwlab.simplemq.client;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.mwlab.common.Json;
import org.mwlab.common.cli.Usage;
import org.mwlab.common.load.MemtierReport;
import org.mwlab.common.load.StartGate;
import org.mwlab.common.load.TypeStats;
import org.mwlab.simplemq.protocol.Op;
import org.mwlab.simplemq.protocol.Status;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** `simplemq client`: closed-loop clients of a middleware, or of the database directly. */
@Command(
    name = "client",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    usageHelpWidth = 100,
    description = {
      "Closed-loop SimpleMQ clients, one thread each, with ids from --first-client on.",
      "Every client registers first; all start together once every one has (and the start"
          + " gate opened, with --start-gate). The report is memtier's JSON layout, one block"
          + " per operation, with the empty pops, errors and mismatches in its \"mwlab\" part."
    })
public final class ClientCommand implements Callable<Integer> {

  /**
   * The report's block of each operation, in the report's order (analysis/parse/memtier.py
   * reads them by these names).
   */
  private static final List<Map.Entry<Op, String>> BLOCKS = List.of(
      Map.entry(Op.SEND, "Sends"),
      Map.entry(Op.PEEK_QUEUE, "Peeks"),
      Map.entry(Op.POP_QUEUE, "Pops"),
      Map.entry(Op.POP_FROM_SENDER, "SenderPops"),
      Map.entry(Op.QUERY_QUEUES, "Queries"));

  /** The lease workload's blocks, after those (the other workloads' reports stay as they were). */
  private static final List<Map.Entry<Op, String>> LEASE_BLOCKS = List.of(
      Map.entry(Op.READ, "Reads"),
      Map.entry(Op.ACK, "Acks"));

  @Spec private CommandSpec spec;

  @Option(names = "--middleware", paramLabel = "HOST:PORT", split = ",",
      description = "Middlewares; client i starts at the (i mod n)-th and moves to the next"
          + " when its connection breaks.")
  private List<String> middlewares = new ArrayList<>();

  @Option(names = "--db", paramLabel = "URL",
      description = "The database baseline: call the procedures over JDBC, no middleware.")
  private String databaseUrl;

  @Option(names = "--first-client", defaultValue = "1", paramLabel = "ID",
      description = "Id of the first client (default: ${DEFAULT-VALUE}).")
  private int firstClient;

  @Option(names = "--clients", defaultValue = "1", paramLabel = "N",
      description = "Clients, one thread each (default: ${DEFAULT-VALUE}).")
  private int clients;

  @Option(names = "--all-clients", paramLabel = "N",
      description = "Clients of the whole run, ids 1 to N over every process (static workloads"
          + " send to the next id, wrapping to 1; default: this process's own, --clients from"
          + " --first-client on).")
  private Integer allClients;

  @Option(names = "--workload", defaultValue = "staticsmall",
      paramLabel = "staticsmall|staticlarge|shared-receiver|lease",
      description = "What each client sends (default: ${DEFAULT-VALUE}).")
  private String workload;

  @Option(names = "--size", paramLabel = "BYTES",
      description = "Body size (default: 200 for staticsmall and shared-receiver, 2000 for"
          + " staticlarge).")
  private Integer size;

  @Option(names = "--queue", defaultValue = "1", paramLabel = "ID",
      description = "The queue (default: ${DEFAULT-VALUE}).")
  private int queue;

  @Option(names = "--receiver", defaultValue = "1", paramLabel = "ID",
      description = "shared-receiver and lease: the receiver every client sends to and pops"
          + " or reads as (default: ${DEFAULT-VALUE}).")
  private int receiver;

  @Option(names = "--visibility-ms", defaultValue = "30000", paramLabel = "MS",
      description = "lease: how long a read hides the messages it leased (default:"
          + " ${DEFAULT-VALUE}).")
  private int visibilityMs;

  @Option(names = "--read-batch", defaultValue = "1", paramLabel = "N",
      description = "lease: messages one read leases at most, 1 to 16 (default: ${DEFAULT-VALUE}).")
  private int readBatch;

  @Option(names = "--drain-ms", paramLabel = "MS",
      description = "lease: once its messages are sent, a client reads until its reads found"
          + " nothing for MS (default: --visibility-ms plus 2000, so that a lease a killed"
          + " middleware left comes back while the clients still read).")
  private Long drainMs;

  @Option(names = "--test-time", defaultValue = "10", paramLabel = "SECONDS",
      description = "Seconds to run (0: until --messages; default: ${DEFAULT-VALUE}).")
  private double testTime;

  @Option(names = "--messages", defaultValue = "0", paramLabel = "N",
      description = "Messages each client sends, then it stops (0: no limit).")
  private long messages;

  @Option(names = "--think-ms", defaultValue = "0", paramLabel = "MS",
      description = "Pause after each reply (default: ${DEFAULT-VALUE}, as in every"
          + " experiment of the seed).")
  private long thinkMs;

  @Option(names = "--window-ms", defaultValue = "1000", paramLabel = "MS",
      description = "Length of the report's time-series windows (default: ${DEFAULT-VALUE}).")
  private int windowMs;

  @Option(names = "--no-register",
      description = "Do not register the clients first: their ids exist already.")
  private boolean noRegister;

  @Option(names = "--idempotent-send",
      description = "Send each message with a key (its sequence number, unique per sender), and"
          + " send it again on the next middleware when the reply is lost: stored once either"
          + " way (beyond the study).")
  private boolean idempotentSend;

  @Option(names = "--prime", defaultValue = "0", paramLabel = "ROUNDS",
      description = "Before the start, each client sends, peeks and pops ROUNDS times on a queue"
          + " of its own, then deletes it: its connection's procedures are compiled and planned"
          + " before it is measured (default: ${DEFAULT-VALUE}).")
  private int primeRounds;

  @Option(names = "--start-gate", paramLabel = "FILE",
      description = "After registering, write FILE.ready and wait until FILE exists.")
  private Path startGate;

  @Option(names = "--json-out-file", paramLabel = "FILE", defaultValue = "result.json",
      description = "The report (default: ${DEFAULT-VALUE}).")
  private Path out;

  @Option(names = "--message-log", paramLabel = "DIR",
      description = "Write sent.tsv and popped.tsv (sender, sequence, message id) for an"
          + " oracle that checks each message is delivered at most once and lost only with a reply;"
          + " with the lease workload also delivered.tsv (with each delivery's count) and"
          + " acked.tsv (with each ack's outcome).")
  private Path messageLog;

  private ClientRun.Config config() {
    final Usage usage = new Usage(spec);
    final List<ClientRun.Endpoint> targets = new ArrayList<>();
    for (final String m : middlewares) {
      final int colon = m.lastIndexOf(':');
      usage.refuseIf(colon <= 0, "--middleware: HOST:PORT, not " + m);
      try {
        targets.add(new ClientRun.Middleware(new InetSocketAddress(m.substring(0, colon),
            Integer.parseInt(m.substring(colon + 1)))));
      } catch (final IllegalArgumentException e) {
        throw usage.error("--middleware " + m + ": " + e.getMessage());
      }
    }
    if (databaseUrl != null) {
      targets.add(new ClientRun.Database(databaseUrl));
    }
    usage.refuseIf(targets.isEmpty() || (databaseUrl != null && !middlewares.isEmpty()),
        "give either --middleware (one or more) or --db");
    usage.refuseIf(clients < 1 || testTime < 0 || messages < 0 || windowMs < 1,
        "--clients and --window-ms must be positive, --test-time and --messages not negative");
    usage.refuseIf(testTime == 0 && messages == 0, "give --test-time or --messages");
    usage.refuseIf(primeRounds < 0, "--prime must not be negative");
    final int all = allClients == null ? clients : allClients;
    // With several processes, the run's ids start at 1, not at this process's first: the
    // last client of the run sends to client 1, wherever that one runs.
    final int runFirst = allClients == null ? firstClient : 1;
    usage.refuseIf(
        allClients != null && (firstClient < 1 || firstClient + clients - 1 > allClients),
        "--first-client and --clients must name ids within 1 to --all-clients");
    final int bytes;
    final Workload w;
    switch (workload.toLowerCase(Locale.ROOT)) {
      case "staticsmall" -> {
        bytes = size == null ? 200 : size;
        w = new Workload.Static(queue, bytes, runFirst, all);
      }
      case "staticlarge" -> {
        bytes = size == null ? 2000 : size;
        w = new Workload.Static(queue, bytes, runFirst, all);
      }
      case "shared-receiver" -> {
        bytes = size == null ? 200 : size;
        w = new Workload.SharedReceiver(queue, bytes, receiver);
      }
      case "lease" -> {
        usage.refuseIf(visibilityMs < 0, "--visibility-ms must not be negative");
        usage.refuseIf(readBatch < 1 || readBatch > org.mwlab.simplemq.protocol.Codec.MAX_READ,
            "--read-batch: 1 to " + org.mwlab.simplemq.protocol.Codec.MAX_READ);
        usage.refuseIf(drainMs != null && drainMs < 0, "--drain-ms must not be negative");
        bytes = size == null ? 200 : size;
        w = new Workload.Lease(queue, bytes, receiver, visibilityMs, readBatch,
            drainMs == null ? visibilityMs + 2000L : drainMs);
      }
      default -> throw usage.error(
          "--workload: staticsmall, staticlarge, shared-receiver or lease, not " + workload);
    }
    return new ClientRun.Config(targets, firstClient, clients, w, bytes,
        Math.round(testTime * 1000), messages, thinkMs, windowMs, !noRegister,
        startGate == null ? null : new StartGate(startGate, Duration.ofMinutes(10)), messageLog,
        primeRounds, idempotentSend);
  }

  @Override
  public Integer call() throws IOException, InterruptedException {
    final ClientRun run = new ClientRun(config());
    final ClientRun.Counts counts;
    try {
      counts = run.run();
    } catch (final IOException e) {
      spec.commandLine().getErr().println("simplemq client: " + e.getMessage());
      return 1;
    }
    final long finish = System.currentTimeMillis();
    final List<MemtierReport.Block> blocks = new ArrayList<>();
    final List<Map.Entry<Op, String>> names = new ArrayList<>(BLOCKS);
    if (workload.equalsIgnoreCase("lease")) {
      names.addAll(LEASE_BLOCKS);
    }
    for (final Map.Entry<Op, String> b : names) {
      blocks.add(new MemtierReport.Block(b.getValue(),
          counts.stats.getOrDefault(b.getKey(), new TypeStats())));
    }
    final Map<String, Object> root = new LinkedHashMap<>();
    root.put("configuration", run.describe());
    root.put("ALL STATS", MemtierReport.allStats(blocks, run.clock().startEpochMs(), finish,
        List.of(50.0, 90.0, 95.0, 99.0, 99.9)));
    final Map<String, Object> mwlab = new LinkedHashMap<>();
    mwlab.put("generator", "mwlab simplemq client 1.0.0");
    mwlab.put("connections", clients);
    mwlab.put("window_ms", windowMs);
    final Map<String, Object> replies = new LinkedHashMap<>();
    for (final Map.Entry<Op, long[]> e : counts.byStatus.entrySet()) {
      final Map<String, Object> s = new LinkedHashMap<>();
      for (final Status status : Status.values()) {
        if (e.getValue()[status.code] > 0) {
          s.put(status.name().toLowerCase(Locale.ROOT), e.getValue()[status.code]);
        }
      }
      replies.put(e.getKey().name().toLowerCase(Locale.ROOT), s);
    }
    mwlab.put("replies", replies);
    mwlab.put("mismatches", counts.mismatches);
    mwlab.put("connection_losses", counts.connectionLosses);
    mwlab.put("resent", counts.resent);
    final Map<String, Object> delivery = new LinkedHashMap<>();
    delivery.put("count", counts.delivery.getTotalCount());
    if (counts.delivery.getTotalCount() > 0) {
      delivery.put("p50", counts.delivery.getValueAtPercentile(50));
      delivery.put("p99", counts.delivery.getValueAtPercentile(99));
      delivery.put("mean", counts.delivery.getMean());
    }
    // Send to delivery, µs, on the senders' clocks against the receivers' (one clock on one
    // machine).
    mwlab.put("delivery_us", delivery);
    final Map<String, Object> unanswered = new LinkedHashMap<>();
    counts.unanswered.forEach((op, n) -> unanswered.put(op.name().toLowerCase(Locale.ROOT), n));
    mwlab.put("unanswered", unanswered);
    mwlab.put("histogram_digits", TypeStats.DIGITS);
    mwlab.put("config", run.describe());
    root.put("mwlab", mwlab);
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    Files.writeString(out, Json.indented(root) + "\n", StandardCharsets.UTF_8);
    return 0;
  }
}
