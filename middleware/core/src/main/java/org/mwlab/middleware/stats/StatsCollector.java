package org.mwlab.middleware.stats;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.mwlab.common.Json;
import org.mwlab.common.stats.Welford;

/**
 * Merges the per-thread recorders off the request path and writes the statistics directory. A
 * window is written once it has ended and every recorder's floor ({@link Recorder#hold}) is past
 * it: each record lands in the window of its own time, however late its thread ran.
 */
public final class StatsCollector {
  private static final String[] TYPES = {"set", "get", "multiget"};

  private final StatsClock clock;
  private final List<String> servers;
  private final List<PoolSpec> pools;
  private final String design;
  private final int workers;
  private final Recorder[] workerRecorders;
  private final Recorder netRecorder;
  private final TreeMap<Long, WindowData> pending = new TreeMap<>();
  private final long[][] totals = new long[TYPES.length][4];
  private final Path dir;
  private final Map<String, Object> config;
  private final AtomicLong localReplies = new AtomicLong();
  /** Worker turns by batch size, over the whole run. */
  private long[] batchSizes = new long[0];
  private final BufferedWriter windowsCsv;
  private final BufferedWriter queueCsv;
  private final BufferedWriter serversCsv;
  private final BufferedWriter workersCsv;
  private final BufferedWriter histogramCsv;
  private final BufferedWriter traceCsv;
  private final BufferedWriter poolsCsv;
  private final BufferedWriter poolRequestsCsv;
  private final PrintStream hlogStream;
  private final HistogramLogWriter hlog;
  private final Thread thread;
  private volatile boolean running = true;
  private long nextWindow;
  /** Levels at the start of {@link #nextWindow}: parts queued, per pool queued and in flight. */
  private long queueLevel;
  private final long[] poolQueueLevel;
  private final long[] poolInFlightLevel;
  /** Arrivals and answered requests recorded after their window was written. */
  private long lateRecords;
  private boolean finished;

  /**
   * @param pools the queues and their threads; workers are numbered pool after pool as given by
   *     {@link PoolSpec#firstWorker()}
   * @param design the design's name for summary.json ({@code 2018} or {@code 2016})
   */
  public StatsCollector(
      final StatsClock clock,
      final Path dir,
      final List<PoolSpec> pools,
      final List<String> servers,
      final boolean trace,
      final Map<String, Object> config,
      final String design)
      throws IOException {
    this.clock = clock;
    this.dir = dir;
    this.pools = List.copyOf(pools);
    this.design = design;
    this.workers = pools.stream().mapToInt(PoolSpec::threads).sum();
    this.servers = List.copyOf(servers);
    this.config = config;
    Files.createDirectories(dir);
    workerRecorders = new Recorder[workers];
    for (int i = 0; i < workers; i++) {
      workerRecorders[i] = new Recorder(clock, i, workers, servers.size(), pools.size());
    }
    netRecorder = new Recorder(clock, 0, workers, servers.size(), pools.size());
    poolQueueLevel = new long[pools.size()];
    poolInFlightLevel = new long[pools.size()];
    windowsCsv =
        open(
            "windows.csv",
            "window,start_ms,end_ms,type,keys,count,throughput_ops,net_us_mean,net_us_var,"
                + "queue_us_mean,queue_us_var,worker_us_mean,worker_us_var,server_us_mean,"
                + "server_us_var,response_us_mean,response_us_var,response_us_p50,"
                + "response_us_p90,response_us_p99,keys_requested,values_returned,misses,errors");
    queueCsv =
        open(
            "queue.csv",
            "window,start_ms,end_ms,arrivals,arrival_rate_ops,queue_length_mean,"
                + "queue_length_max,workers_busy_mean");
    serversCsv = open("servers.csv", "window,server,requests,keys,errors");
    workersCsv = open("workers.csv", "window,worker,requests,busy_fraction");
    histogramCsv = open("histogram.csv", "window,type,keys,bucket_us,count");
    traceCsv =
        trace
            ? open(
                "trace.csv",
                "type,keys,arrival_ns,enqueue_ns,dequeue_ns,sent_ns,replied_ns,written_ns,pool,"
                    + "server,parts")
            : null;
    poolsCsv =
        open(
            "pools.csv",
            "window,start_ms,end_ms,pool,server,threads,enqueued,completed,queue_length_mean,"
                + "queue_length_max,busy_threads_mean,busy_fraction,in_flight_mean,in_flight_max");
    poolRequestsCsv =
        open(
            "pool_requests.csv",
            "window,start_ms,end_ms,pool,server,type,keys,count,part_keys,queue_us_mean,"
                + "queue_us_var,queue_us_p50,queue_us_p90,queue_us_p99,server_us_mean,"
                + "server_us_var,server_us_p50,server_us_p90,server_us_p99,response_us_mean,"
                + "response_us_var,response_us_p50,response_us_p90,response_us_p99,errors");
    hlogStream =
        new PrintStream(
            Files.newOutputStream(dir.resolve("response_time.hlog")), false, StandardCharsets.UTF_8);
    hlog = new HistogramLogWriter(hlogStream);
    hlog.outputComment("mwlab middleware response time, microseconds, one interval per window"
        + " and type, tagged <type>-<keys>");
    hlog.outputLogFormatVersion();
    hlog.outputStartTime(clock.startEpochMs());
    hlog.setBaseTime(clock.startEpochMs());
    hlog.outputLegend();
    hlogStream.flush();
    writeSummary(false, System.currentTimeMillis());
    thread = new Thread(this::loop, "stats-collector");
    thread.setDaemon(true);
  }

  private BufferedWriter open(final String name, final String header) throws IOException {
    final BufferedWriter w =
        Files.newBufferedWriter(
            dir.resolve(name),
            StandardCharsets.UTF_8,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE);
    w.write(header);
    w.write('\n');
    w.flush();
    return w;
  }

  public Recorder worker(final int i) {
    return workerRecorders[i];
  }

  public Recorder net() {
    return netRecorder;
  }

  /** A reply the middleware gave itself (protocol errors and the like). */
  public void localReply() {
    localReplies.incrementAndGet();
  }

  public void start() {
    thread.start();
  }

  private void loop() {
    final long tick = Math.max(10, Math.min(250, clock.windowNs() / 4_000_000L));
    while (running) {
      try {
        Thread.sleep(tick);
      } catch (InterruptedException e) {
        return;
      }
      if (!pass()) {
        return;
      }
    }
  }

  /** Takes what the recorders have and writes every complete window; false once finished. */
  synchronized boolean pass() {
    if (finished) {
      return false;
    }
    // The floors are read before the recorders are taken: whatever a thread records with a time
    // before its floor it recorded before raising the floor past that time, so it is in what is
    // taken now, however long this thread or a recorder's thread was held up.
    final long complete = clock.window(floor()) - 1;
    collect();
    if (clock.started()) {
      emitUpTo(complete, Long.MAX_VALUE);
    }
    return true;
  }

  /** Nothing recorded from now on has an earlier time. */
  private long floor() {
    long f = System.nanoTime();
    for (final Recorder r : workerRecorders) {
      f = Math.min(f, r.floor());
    }
    return Math.min(f, netRecorder.floor());
  }

  private void collect() {
    final List<Recorder> recorders = new ArrayList<>(workers + 1);
    recorders.addAll(List.of(workerRecorders));
    recorders.add(netRecorder);
    final List<Accumulator> taken = new ArrayList<>(workers + 1);
    for (final Recorder r : recorders) {
      taken.add(r.swap());
    }
    for (int n = 0; n < taken.size(); n++) {
      final Accumulator a = taken.get(n);
      if (a.batchSizes.length > batchSizes.length) {
        batchSizes = java.util.Arrays.copyOf(batchSizes, a.batchSizes.length);
      }
      for (int i = 0; i < a.batchSizes.length; i++) {
        batchSizes[i] += a.batchSizes[i];
      }
      // Windows are written only when every floor is past them, so a record whose window was
      // written comes only from a thread still running at finish, or is the arrival of a request
      // whose bytes took longer than the net-thread holds its floor for them; it counts in the
      // next window written, so no request is lost, and in summary.json's late_records.
      a.windows.forEach(
          (w, d) -> {
            if (w < nextWindow) {
              lateRecords += d.arrivals;
              for (final TypeStats t : d.types.values()) {
                lateRecords += t.count;
              }
            }
            pending.computeIfAbsent(Math.max(w, nextWindow), k -> newWindow()).merge(d);
          });
      if (traceCsv != null) {
        try {
          for (final long[] t : a.trace) {
            traceCsv.write(TYPES[(int) t[0]]);
            for (int i = 1; i < 8; i++) {
              traceCsv.write(',');
              traceCsv.write(Long.toString(t[i]));
            }
            final PoolSpec p = pools.get((int) t[8]);
            traceCsv.write("," + p.pool() + "," + p.server() + "," + t[9] + "\n");
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      recorders.get(n).recycle(a);
    }
  }

  /** Writes windows {@code nextWindow..last}; the last one ends no later than {@code endNs}. */
  private void emitUpTo(final long last, final long endNs) {
    try {
      for (; nextWindow <= last; nextWindow++) {
        final WindowData d =
            pending.containsKey(nextWindow)
                ? pending.remove(nextWindow)
                : newWindow();
        emit(nextWindow, d, endNs);
      }
      for (final BufferedWriter w :
          new BufferedWriter[] {windowsCsv, queueCsv, serversCsv, workersCsv, histogramCsv,
              poolsCsv, poolRequestsCsv}) {
        w.flush();
      }
      if (traceCsv != null) {
        traceCsv.flush();
      }
      hlogStream.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void emit(final long w, final WindowData d, final long endNs) throws IOException {
    final long startNs = clock.windowStartNs(w);
    final long stopNs = Math.max(startNs + 1, Math.min(startNs + clock.windowNs(), endNs));
    final double seconds = (stopNs - startNs) / 1e9;
    final long startMs = clock.epochMs(startNs);
    final long endMs = clock.epochMs(stopNs);
    final String head = w + "," + startMs + "," + endMs + ",";
    for (final Map.Entry<Long, TypeStats> e : d.types.entrySet()) {
      final int type = (int) (e.getKey() >>> 32);
      final int keys = (int) (e.getKey() & 0xffff_ffffL);
      final TypeStats s = e.getValue();
      final String name = TYPES[type];
      final Histogram h = s.histogram();
      windowsCsv.write(
          head + name + "," + keys + "," + s.count + "," + num(s.count / seconds) + ","
              + welford(s.net) + "," + welford(s.queue) + "," + welford(s.worker) + ","
              + welford(s.server) + "," + welford(s.response) + ","
              + h.getValueAtPercentile(50) + "," + h.getValueAtPercentile(90) + ","
              + h.getValueAtPercentile(99) + "," + s.keysRequested + "," + s.valuesReturned + ","
              + (type == 0 ? 0 : s.keysRequested - s.valuesReturned) + "," + s.errors + "\n");
      final long[] buckets = s.buckets();
      for (int b = 0; b < buckets.length; b++) {
        if (buckets[b] > 0) {
          histogramCsv.write(
              w + "," + name + "," + keys + "," + (long) b * TypeStats.BUCKET_US + ","
                  + buckets[b] + "\n");
        }
      }
      h.setStartTimeStamp(startMs);
      h.setEndTimeStamp(endMs);
      h.setTag(name + "-" + keys);
      hlog.outputIntervalHistogram(h);
      totals[type][0] += s.count;
      totals[type][1] += s.errors;
      totals[type][2] += s.keysRequested;
      totals[type][3] += s.valuesReturned;
    }
    final double windowNs = stopNs - startNs;
    final long windowEndNs = startNs + clock.windowNs();
    final double queueNs = d.queue.integralNs(queueLevel, startNs, stopNs, windowEndNs);
    queueLevel += d.queue.delta;
    double busy = 0;
    for (int i = 0; i < workers; i++) {
      final double f = Math.min(1.0, d.workerBusyNs[i] / windowNs);
      busy += f;
      workersCsv.write(w + "," + i + "," + d.workerRequests[i] + "," + num(f) + "\n");
    }
    queueCsv.write(
        head + d.arrivals + "," + num(d.arrivals / seconds) + "," + num(queueNs / windowNs)
            + "," + d.maxQueue + "," + num(busy) + "\n");
    for (int i = 0; i < servers.size(); i++) {
      serversCsv.write(
          w + "," + servers.get(i) + "," + d.serverRequests[i] + "," + d.serverKeys[i]
              + "," + d.serverErrors[i] + "\n");
    }
    for (int p = 0; p < pools.size(); p++) {
      final PoolSpec spec = pools.get(p);
      double poolBusy = 0;
      for (int i = spec.firstWorker(); i < spec.firstWorker() + spec.threads(); i++) {
        poolBusy += Math.min(1.0, d.workerBusyNs[i] / windowNs);
      }
      final double poolQueueNs =
          d.poolQueue[p].integralNs(poolQueueLevel[p], startNs, stopNs, windowEndNs);
      final double poolInFlightNs =
          d.poolInFlight[p].integralNs(poolInFlightLevel[p], startNs, stopNs, windowEndNs);
      poolQueueLevel[p] += d.poolQueue[p].delta;
      poolInFlightLevel[p] += d.poolInFlight[p].delta;
      poolsCsv.write(
          head + spec.pool() + "," + spec.server() + "," + spec.threads() + ","
              + d.poolEnqueued[p] + "," + d.poolCompleted[p] + ","
              + num(poolQueueNs / windowNs) + "," + d.poolMaxQueue[p] + "," + num(poolBusy)
              + "," + num(poolBusy / spec.threads()) + "," + num(poolInFlightNs / windowNs)
              + "," + d.poolInFlightMax[p] + "\n");
    }
    for (final Map.Entry<Long, PartStats> e : d.parts.entrySet()) {
      final PoolSpec spec = pools.get((int) (e.getKey() >>> 34));
      final int type = (int) ((e.getKey() >>> 32) & 3);
      final int keys = (int) (e.getKey() & 0xffff_ffffL);
      final PartStats s = e.getValue();
      poolRequestsCsv.write(
          head + spec.pool() + "," + spec.server() + "," + TYPES[type] + "," + keys + ","
              + s.count + "," + s.partKeys + "," + welford(s.queue) + ","
              + percentiles(s.queueHistogram()) + "," + welford(s.server) + ","
              + percentiles(s.serverHistogram()) + "," + welford(s.response) + ","
              + percentiles(s.responseHistogram()) + "," + s.errors + "\n");
    }
  }

  private WindowData newWindow() {
    return new WindowData(workers, servers.size(), pools.size());
  }

  private static String percentiles(final Histogram h) {
    return h.getValueAtPercentile(50) + "," + h.getValueAtPercentile(90) + ","
        + h.getValueAtPercentile(99);
  }

  private static String welford(final Welford x) {
    return num(x.mean()) + "," + num(x.variance());
  }

  private static String num(final double v) {
    return String.format(Locale.ROOT, "%.3f", v);
  }

  /** Writes every remaining window and the summary; the statistics are complete afterwards. */
  public synchronized void finish(final boolean clean) {
    if (finished) {
      return;
    }
    running = false;
    thread.interrupt();
    final long now = System.nanoTime();
    collect();
    if (clock.started()) {
      long last = clock.window(now);
      if (!pending.isEmpty()) {
        last = Math.max(last, pending.lastKey());
      }
      emitUpTo(last, now);
    }
    finished = true;
    try {
      writeSummary(clean, System.currentTimeMillis());
      for (final BufferedWriter w :
          new BufferedWriter[] {windowsCsv, queueCsv, serversCsv, workersCsv, histogramCsv,
              poolsCsv, poolRequestsCsv}) {
        w.close();
      }
      if (traceCsv != null) {
        traceCsv.close();
      }
      hlogStream.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Threads per pool kind, with the net-thread. */
  private Map<String, Object> threads() {
    final Map<String, Object> m = new LinkedHashMap<>();
    m.put("net", 1);
    for (final PoolSpec p : pools) {
      m.merge(p.pool(), p.threads(), (a, b) -> (Integer) a + (Integer) b);
    }
    return m;
  }

  /** Threads per server and pool kind; null where pools do not belong to servers (2018). */
  private Map<String, Object> threadsPerServer() {
    final Map<String, Object> m = new LinkedHashMap<>();
    for (final PoolSpec p : pools) {
      if (p.server() < 0) {
        return null;
      }
      m.putIfAbsent(p.pool(), p.threads());
    }
    return m;
  }

  private void writeSummary(final boolean clean, final long endMs) throws IOException {
    final StringBuilder sb = new StringBuilder(1024);
    sb.append("{\n  \"config\": ").append(Json.inline(config)).append(",\n");
    sb.append("  \"start_ms\": ").append(clock.startEpochMs()).append(",\n");
    sb.append("  \"end_ms\": ").append(endMs).append(",\n");
    sb.append("  \"windows\": ").append(nextWindow).append(",\n");
    sb.append("  \"totals\": {");
    for (int t = 0; t < TYPES.length; t++) {
      sb.append(t == 0 ? "\n" : ",\n")
          .append("    \"")
          .append(TYPES[t])
          .append("\": {\"count\": ")
          .append(totals[t][0])
          .append(", \"errors\": ")
          .append(totals[t][1])
          .append(", \"keys_requested\": ")
          .append(totals[t][2])
          .append(", \"values_returned\": ")
          .append(totals[t][3])
          .append('}');
    }
    sb.append("\n  },\n");
    // Worker turns by the number of requests taken (design 2018); empty where no turn happened.
    final Map<String, Object> batches = new LinkedHashMap<>();
    for (int i = 1; i < batchSizes.length; i++) {
      if (batchSizes[i] > 0) {
        batches.put(Integer.toString(i), batchSizes[i]);
      }
    }
    sb.append("  \"batch_sizes\": ").append(Json.inline(batches)).append(",\n");
    sb.append("  \"local_replies\": ").append(localReplies.get()).append(",\n");
    sb.append("  \"late_records\": ").append(lateRecords).append(",\n");
    sb.append("  \"design\": ").append(Json.inline(design)).append(",\n");
    sb.append("  \"threads\": ").append(Json.inline(threads())).append(",\n");
    sb.append("  \"threads_per_server\": ").append(Json.inline(threadsPerServer())).append(",\n");
    sb.append("  \"pools\": [");
    for (int p = 0; p < pools.size(); p++) {
      final PoolSpec spec = pools.get(p);
      final Map<String, Object> m = new LinkedHashMap<>();
      m.put("pool", spec.pool());
      m.put("server", spec.server());
      m.put("address", spec.address());
      m.put("threads", spec.threads());
      m.put("first_worker", spec.firstWorker());
      sb.append(p == 0 ? "\n    " : ",\n    ").append(Json.inline(m));
    }
    sb.append("\n  ],\n");
    sb.append("  \"clean_shutdown\": ").append(clean).append("\n}\n");
    final Path tmp = dir.resolve("summary.json.tmp");
    Files.writeString(tmp, sb.toString(), StandardCharsets.UTF_8);
    Files.move(
        tmp,
        dir.resolve("summary.json"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }
}
