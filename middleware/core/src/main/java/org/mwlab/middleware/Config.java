package org.mwlab.middleware;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything the middleware is configured with.
 *
 * @param replication replicas per key, already resolved (1..servers)
 * @param workers design 2018: worker threads; design 2016: read threads per server
 * @param traceSample 0 = no trace, otherwise one request in N is traced
 * @param design which queues and threads carry the requests to the servers
 * @param maxBatch design 2018: most requests a worker takes from the queue in one turn (those
 *     already queued, never waiting for more) and pipelines to the servers; 1 = one at a time
 */
public record Config(
    String listenAddress,
    int port,
    int workers,
    boolean sharded,
    List<HostPort> servers,
    int replication,
    ReadBalance readBalance,
    long statsWindowMs,
    Path statsDir,
    int traceSample,
    int serverTimeoutMs,
    int reconnectMinMs,
    int reconnectMaxMs,
    int queueCapacity,
    int maxKeyLength,
    int maxValueBytes,
    int maxLineLength,
    int maxKeysPerGet,
    int maxConnections,
    int maxPipeline,
    int virtualNodes,
    Design design,
    int maxBatch) {

  public Config {
    servers = List.copyOf(servers);
    if (design == null) {
      throw new IllegalArgumentException("a design is required");
    }
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("at least one server (-m) is required");
    }
    if (workers < 1) {
      throw new IllegalArgumentException("--workers must be >= 1");
    }
    if (replication < 1 || replication > servers.size()) {
      throw new IllegalArgumentException(
          "replication must be between 1 and the number of servers (" + servers.size() + ")");
    }
    if (new java.util.HashSet<>(servers).size() != servers.size()) {
      throw new IllegalArgumentException("a server is listed twice: " + servers);
    }
    requirePositive("stats window", statsWindowMs);
    requirePositive("server timeout", serverTimeoutMs);
    requirePositive("reconnect min", reconnectMinMs);
    requirePositive("reconnect max", reconnectMaxMs);
    requirePositive("queue capacity", queueCapacity);
    requirePositive("max key length", maxKeyLength);
    requirePositive("max value bytes", maxValueBytes);
    requirePositive("max keys per get", maxKeysPerGet);
    requirePositive("max connections", maxConnections);
    requirePositive("max pipeline", maxPipeline);
    requirePositive("virtual nodes", virtualNodes);
    if (maxLineLength < maxKeyLength + 64) {
      throw new IllegalArgumentException("max line length must exceed the max key length + 64");
    }
    requirePositive("max batch", maxBatch);
    if (maxBatch > 1 && design != Design.D2018) {
      throw new IllegalArgumentException(
          "--max-batch > 1 needs --design 2018 (the 2016 design has no batching workers)");
    }
    if (traceSample < 0) {
      throw new IllegalArgumentException("trace sample must be >= 0");
    }
  }

  /** A configuration of the default design, 2018. */
  public Config(
      final String listenAddress,
      final int port,
      final int workers,
      final boolean sharded,
      final List<HostPort> servers,
      final int replication,
      final ReadBalance readBalance,
      final long statsWindowMs,
      final Path statsDir,
      final int traceSample,
      final int serverTimeoutMs,
      final int reconnectMinMs,
      final int reconnectMaxMs,
      final int queueCapacity,
      final int maxKeyLength,
      final int maxValueBytes,
      final int maxLineLength,
      final int maxKeysPerGet,
      final int maxConnections,
      final int maxPipeline,
      final int virtualNodes) {
    this(listenAddress, port, workers, sharded, servers, replication, readBalance, statsWindowMs,
        statsDir, traceSample, serverTimeoutMs, reconnectMinMs, reconnectMaxMs, queueCapacity,
        maxKeyLength, maxValueBytes, maxLineLength, maxKeysPerGet, maxConnections, maxPipeline,
        virtualNodes, Design.D2018, 1);
  }

  private static void requirePositive(final String what, final long v) {
    if (v <= 0) {
      throw new IllegalArgumentException(what + " must be > 0, got " + v);
    }
  }

  /** A configuration with the defaults of every option not given here. */
  public static Config defaults(
      final int port, final int workers, final boolean sharded, final List<HostPort> servers) {
    return new Config(
        "127.0.0.1", port, workers, sharded, servers, servers.size(), ReadBalance.ROUND_ROBIN,
        1000, Path.of("mw-stats"), 0, 1000, 50, 2000, 4096, 250, 1 << 20, 8192, 1024, 1024, 1024,
        160);
  }

  /** Flag names and values, for summary.json. */
  public Map<String, Object> describe() {
    final Map<String, Object> m = new LinkedHashMap<>();
    m.put("listen", listenAddress);
    m.put("port", port);
    m.put("workers", workers);
    m.put("sharded", sharded);
    m.put("servers", servers.stream().map(HostPort::toString).toList());
    m.put("replication", replication);
    m.put("read_balance", readBalance.label());
    m.put("stats_window_ms", statsWindowMs);
    m.put("stats_dir", statsDir.toString());
    m.put("trace_sample", traceSample);
    m.put("server_timeout_ms", serverTimeoutMs);
    m.put("reconnect_min_ms", reconnectMinMs);
    m.put("reconnect_max_ms", reconnectMaxMs);
    m.put("queue_capacity", queueCapacity);
    m.put("max_key_length", maxKeyLength);
    m.put("max_value_bytes", maxValueBytes);
    m.put("max_line_length", maxLineLength);
    m.put("max_keys_per_get", maxKeysPerGet);
    m.put("max_connections", maxConnections);
    m.put("max_pipeline", maxPipeline);
    m.put("virtual_nodes", virtualNodes);
    m.put("design", design.label());
    m.put("max_batch", maxBatch);
    return m;
  }

  /** A copy with other limits, for tests. */
  public Config withLimits(
      final int keyLen, final int valueBytes, final int lineLen, final int keysPerGet) {
    return new Config(listenAddress, port, workers, sharded, servers, replication, readBalance,
        statsWindowMs, statsDir, traceSample, serverTimeoutMs, reconnectMinMs, reconnectMaxMs,
        queueCapacity, keyLen, valueBytes, lineLen, keysPerGet, maxConnections, maxPipeline,
        virtualNodes, design, maxBatch);
  }
}
