package org.mwlab.simplemq.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Recorder;
import org.mwlab.common.Json;
import org.mwlab.simplemq.protocol.Op;
import org.mwlab.simplemq.protocol.Status;

/**
 * The middleware's counters and response-time histograms, per operation: requests by status
 * (empty pops apart from successes), the errors it answered itself, replies a closed connection
 * lost, the requests a worker failed on, and the time in each stage of a request (queued for a
 * worker, at the database, writing the reply); and per middleware, its connections: accepted,
 * refused over the cap, closed for a frame left unfinished, and how often one was no longer
 * read because its requests or replies piled up. Written as {@code summary.json} when the
 * middleware stops.
 */
final class Stats {

  /** Microseconds; three significant digits. */
  private static final long MAX_US = 60_000_000L;

  private final Map<Op, Recorder> response = new EnumMap<>(Op.class);
  private final Map<Op, Recorder> queued = new EnumMap<>(Op.class);
  private final Map<Op, Recorder> database = new EnumMap<>(Op.class);
  /** [op][status] request counts. */
  private final AtomicLongArray counts = new AtomicLongArray(Op.values().length * 32);
  private final AtomicLongArray rejected = new AtomicLongArray(32);
  private final AtomicLongArray lost = new AtomicLongArray(Op.values().length);
  /** Requests a worker failed on (an exception, answered DATABASE). */
  private final AtomicLongArray failed = new AtomicLongArray(Op.values().length);
  private final AtomicLong failures = new AtomicLong();
  /** Counted by the distributor, read when the middleware stops. */
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong frameTimeouts = new AtomicLong();
  private final AtomicLong readPauses = new AtomicLong();
  /** Group commit: transactions of two requests or more, and the requests they held. */
  private final AtomicLong groups = new AtomicLong();
  private final AtomicLong grouped = new AtomicLong();
  /** Blocking pops and reads: times a request parked, and was woken (a notification, its end). */
  private final AtomicLong parked = new AtomicLong();
  private final AtomicLong woken = new AtomicLong();
  private final long[] perWorker;
  /** The time series, when the middleware writes statistics. */
  private final WindowStats windows;

  Stats(final int workers, final WindowStats windows) {
    this.windows = windows;
    for (final Op op : Op.values()) {
      response.put(op, new Recorder(MAX_US, 3));
      queued.put(op, new Recorder(MAX_US, 3));
      database.put(op, new Recorder(MAX_US, 3));
    }
    perWorker = new long[workers];
  }

  /** One request a worker ran. */
  void record(final int worker, final Op op, final Status status, final Timing t) {
    counts.incrementAndGet(op.ordinal() * 32 + status.code);
    response.get(op).recordValue(micros(t.responseNs()));
    queued.get(op).recordValue(micros(t.startNs() - t.arrivalNs()));
    database.get(op).recordValue(micros(t.dbEndNs() - t.startNs()));
    synchronized (perWorker) {
      perWorker[worker]++;
    }
    if (windows != null) {
      windows.record(worker, op, status, t);
      windows.busy.decrementAndGet();
    }
  }

  /** A request read, waiting for a worker. */
  void arrival(final long ns) {
    if (windows != null) {
      windows.arrival(ns);
      windows.waiting.incrementAndGet();
    }
  }

  /** A request read but not handed out before its connection closed. */
  void dropped() {
    if (windows != null) {
      windows.waiting.decrementAndGet();
    }
  }

  /** A request handed to a worker. */
  void dispatched() {
    if (windows != null) {
      windows.waiting.decrementAndGet();
      windows.busy.incrementAndGet();
    }
  }

  /** An error reply the distributor gave itself. */
  void rejected(final Status status) {
    rejected.incrementAndGet(status.code);
  }

  /** A reply whose connection had closed: a popped message this counts was lost in flight. */
  void lost(final Op op) {
    lost.incrementAndGet(op.ordinal());
  }

  /** A request a worker failed on; returns how many of them, of any operation, so far. */
  long failed(final Op op) {
    failed.incrementAndGet(op.ordinal());
    return failures.incrementAndGet();
  }

  /** A connection accepted. */
  void connectionAccepted() {
    accepted.incrementAndGet();
  }

  /** A connection over the cap, refused. */
  void connectionRefused() {
    refused.incrementAndGet();
  }

  /** A connection closed because a frame of it stayed unfinished too long. */
  void frameTimedOut() {
    frameTimeouts.incrementAndGet();
  }

  /** A connection no longer read because its requests or replies piled up. */
  void parked() {
    parked.incrementAndGet();
  }

  void woken(final int n) {
    woken.addAndGet(n);
  }

  /** A transaction that ran {@code size} requests (at least two). */
  void group(final int size) {
    groups.incrementAndGet();
    grouped.addAndGet(size);
  }

  void readPaused() {
    readPauses.incrementAndGet();
  }

  private static long micros(final long ns) {
    return Math.min(Math.max(ns / 1000, 0), MAX_US);
  }

  /** Ends the time series and writes {@code summary.json} into {@code dir}. */
  void write(final Path dir, final Map<String, Object> config) throws IOException {
    if (windows != null) {
      windows.close();
    }
    Files.createDirectories(dir);
    final Map<String, Object> ops = new LinkedHashMap<>();
    for (final Op op : Op.values()) {
      final Map<String, Object> byStatus = new LinkedHashMap<>();
      for (final Status s : Status.values()) {
        final long n = counts.get(op.ordinal() * 32 + s.code);
        if (n > 0) {
          byStatus.put(s.name().toLowerCase(java.util.Locale.ROOT), n);
        }
      }
      if (byStatus.isEmpty()) {
        continue;
      }
      final Map<String, Object> o = new LinkedHashMap<>();
      o.put("replies", byStatus);
      o.put("lost_replies", lost.get(op.ordinal()));
      o.put("failed", failed.get(op.ordinal()));
      o.put("response_us", percentiles(response.get(op)));
      o.put("queued_us", percentiles(queued.get(op)));
      o.put("database_us", percentiles(database.get(op)));
      ops.put(op.name().toLowerCase(java.util.Locale.ROOT), o);
    }
    final Map<String, Object> rej = new LinkedHashMap<>();
    for (final Status s : Status.values()) {
      if (rejected.get(s.code) > 0) {
        rej.put(s.name().toLowerCase(java.util.Locale.ROOT), rejected.get(s.code));
      }
    }
    final Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("config", config);
    doc.put("operations", ops);
    doc.put("rejected", rej);
    final Map<String, Object> conn = new LinkedHashMap<>();
    conn.put("accepted", accepted.get());
    conn.put("refused", refused.get());
    conn.put("frame_timeouts", frameTimeouts.get());
    conn.put("read_pauses", readPauses.get());
    doc.put("connections", conn);
    final Map<String, Object> group = new LinkedHashMap<>();
    group.put("transactions", groups.get());
    group.put("requests", grouped.get());
    doc.put("group_commit", group);
    final Map<String, Object> waits = new LinkedHashMap<>();
    waits.put("parked", parked.get());
    waits.put("woken", woken.get());
    doc.put("waits", waits);
    synchronized (perWorker) {
      doc.put("requests_per_worker", java.util.Arrays.stream(perWorker).boxed().toList());
    }
    Files.writeString(dir.resolve("summary.json"), Json.indented(doc) + "\n",
        StandardCharsets.UTF_8);
  }

  private static Map<String, Object> percentiles(final Recorder r) {
    final org.HdrHistogram.Histogram h = r.getIntervalHistogram();
    final Map<String, Object> p = new LinkedHashMap<>();
    p.put("count", h.getTotalCount());
    if (h.getTotalCount() > 0) {
      p.put("mean", h.getMean());
      p.put("p50", h.getValueAtPercentile(50));
      p.put("p95", h.getValueAtPercentile(95));
      p.put("p99", h.getValueAtPercentile(99));
      p.put("max", h.getMaxValue());
    }
    return p;
  }
}
