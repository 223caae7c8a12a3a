package org.mwlab.simplemq.server;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.mwlab.common.stats.Welford;
import org.mwlab.simplemq.protocol.Op;
import org.mwlab.simplemq.protocol.Status;

/**
 * The middleware's time series, in the memcached middleware's file layout so that the analysis
 * reads both with one parser: per window and operation {@code windows.csv} (each stage's mean
 * and variance: read to handed out ("net"), handed out to worker start ("queue"), worker start
 * to database call, the database call ("server"), and the whole response) and {@code
 * histogram.csv}; per window {@code queue.csv} (requests waiting for a worker, busy workers)
 * and {@code workers.csv}. A record lands in the window it was answered in; a window is written
 * once it is two windows old, and the rest at {@link #close}.
 */
final class WindowStats implements AutoCloseable {

  /** One operation's numbers in one window. */
  private static final class Cell {
    final Welford net = new Welford();
    final Welford queue = new Welford();
    final Welford worker = new Welford();
    final Welford server = new Welford();
    final Welford response = new Welford();
    final Histogram histogram = new Histogram(60_000_000L, 2);
    long delivered;
    long empty;
    long errors;
  }

  /** One window: its cells, and the samples of the queue and of the busy workers. */
  private static final class Window {
    final Map<Op, Cell> cells = new TreeMap<>();
    final long[] workerRequests;
    final long[] workerBusyNs;
    long arrivals;
    long samples;
    long waitingSum;
    long waitingMax;
    long busySum;

    Window(final int workers) {
      workerRequests = new long[workers];
      workerBusyNs = new long[workers];
    }
  }

  private final long startMs;
  private final long startNs;
  private final int windowMs;
  private final int workers;
  private final TreeMap<Long, Window> open = new TreeMap<>();
  private final BufferedWriter windows;
  private final BufferedWriter queue;
  private final BufferedWriter workersCsv;
  private final BufferedWriter histogram;
  /** Requests read and not yet at a worker; workers running a request. */
  final AtomicInteger waiting = new AtomicInteger();

  final AtomicInteger busy = new AtomicInteger();
  private final Thread sampler;
  private volatile boolean running = true;

  WindowStats(final Path dir, final int windowMs, final int workers) throws IOException {
    Files.createDirectories(dir);
    this.startMs = System.currentTimeMillis();
    this.startNs = System.nanoTime();
    this.windowMs = windowMs;
    this.workers = workers;
    windows = open(dir, "windows.csv", "window,start_ms,end_ms,type,keys,count,throughput_ops,"
        + "net_us_mean,net_us_var,queue_us_mean,queue_us_var,worker_us_mean,worker_us_var,"
        + "server_us_mean,server_us_var,response_us_mean,response_us_var,response_us_p50,"
        + "response_us_p90,response_us_p99,keys_requested,values_returned,misses,errors");
    queue = open(dir, "queue.csv", "window,start_ms,end_ms,arrivals,arrival_rate_ops,"
        + "queue_length_mean,queue_length_max,workers_busy_mean");
    workersCsv = open(dir, "workers.csv", "window,worker,requests,busy_fraction");
    histogram = open(dir, "histogram.csv", "window,type,keys,bucket_us,count");
    sampler = new Thread(this::sample, "stats-collector");
    sampler.setDaemon(true);
    sampler.start();
  }

  private static BufferedWriter open(final Path dir, final String name, final String header)
      throws IOException {
    final BufferedWriter w = Files.newBufferedWriter(dir.resolve(name), StandardCharsets.UTF_8);
    w.write(header);
    w.newLine();
    return w;
  }

  private long windowOf(final long ns) {
    return Math.max(0, (ns - startNs) / 1_000_000L / windowMs);
  }

  private Window window(final long index) {
    return open.computeIfAbsent(index, i -> new Window(workers));
  }

  /** A request read from a client. */
  synchronized void arrival(final long ns) {
    window(windowOf(ns)).arrivals++;
  }

  /** A request a worker answered. */
  synchronized void record(final int worker, final Op op, final Status status, final Timing t) {
    final Window w = window(windowOf(t.repliedNs()));
    final Cell c = w.cells.computeIfAbsent(op, o -> new Cell());
    c.net.add((t.dispatchedNs() - t.arrivalNs()) / 1000.0);
    c.queue.add((t.startNs() - t.dispatchedNs()) / 1000.0);
    c.worker.add(0.0); // the worker calls the database as soon as it starts
    c.server.add((t.dbEndNs() - t.startNs()) / 1000.0);
    final long response = Math.max(0, t.responseNs() / 1000);
    c.response.add(response);
    c.histogram.recordValue(Math.min(response, 60_000_000L));
    if (status == Status.EMPTY) {
      c.empty++;
    } else if (status.isError()) {
      c.errors++;
    } else if (op == Op.PEEK_QUEUE || op == Op.POP_QUEUE || op == Op.POP_FROM_SENDER) {
      c.delivered++;
    }
    w.workerRequests[worker]++;
    w.workerBusyNs[worker] += t.repliedNs() - t.startNs();
  }

  /** Samples the queue and the busy workers every millisecond; writes the windows done. */
  private void sample() {
    while (running) {
      final long now = System.nanoTime();
      synchronized (this) {
        final Window w = window(windowOf(now));
        final int queued = waiting.get();
        w.samples++;
        w.waitingSum += queued;
        w.waitingMax = Math.max(w.waitingMax, queued);
        w.busySum += busy.get();
        try {
          flush(windowOf(now) - 2);
        } catch (final IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      try {
        Thread.sleep(1);
      } catch (final InterruptedException e) {
        return;
      }
    }
  }

  /** Writes and forgets every window up to {@code last}. */
  private void flush(final long last) throws IOException {
    while (!open.isEmpty() && open.firstKey() <= last) {
      final Map.Entry<Long, Window> e = open.pollFirstEntry();
      write(e.getKey(), e.getValue());
    }
  }

  private void write(final long index, final Window w) throws IOException {
    final long from = startMs + index * windowMs;
    final long to = from + windowMs;
    final double seconds = windowMs / 1000.0;
    for (final Map.Entry<Op, Cell> e : w.cells.entrySet()) {
      final Cell c = e.getValue();
      final String type = e.getKey().name().toLowerCase(Locale.ROOT);
      final long n = c.response.count();
      windows.write(String.join(",", Long.toString(index), Long.toString(from),
          Long.toString(to), type, "1", Long.toString(n), f(n / seconds),
          f(c.net.mean()), f(c.net.variance()), f(c.queue.mean()), f(c.queue.variance()),
          f(c.worker.mean()), f(c.worker.variance()), f(c.server.mean()),
          f(c.server.variance()), f(c.response.mean()), f(c.response.variance()),
          Long.toString(c.histogram.getValueAtPercentile(50)),
          Long.toString(c.histogram.getValueAtPercentile(90)),
          Long.toString(c.histogram.getValueAtPercentile(99)), Long.toString(n),
          Long.toString(c.delivered), Long.toString(c.empty), Long.toString(c.errors)));
      windows.newLine();
      for (final HistogramIterationValue v : c.histogram.recordedValues()) {
        histogram.write(index + "," + type + ",1,"
            + c.histogram.highestEquivalentValue(v.getValueIteratedTo()) + ","
            + v.getCountAtValueIteratedTo());
        histogram.newLine();
      }
    }
    final double samples = Math.max(1, w.samples);
    queue.write(String.join(",", Long.toString(index), Long.toString(from), Long.toString(to),
        Long.toString(w.arrivals), f(w.arrivals / seconds), f(w.waitingSum / samples),
        Long.toString(w.waitingMax), f(w.busySum / samples)));
    queue.newLine();
    for (int i = 0; i < workers; i++) {
      workersCsv.write(index + "," + i + "," + w.workerRequests[i] + ","
          + f(w.workerBusyNs[i] / 1e6 / windowMs));
      workersCsv.newLine();
    }
  }

  private static String f(final double v) {
    return String.format(Locale.ROOT, "%.3f", v);
  }

  /** Stops sampling and writes every window left. */
  @Override
  public void close() throws IOException {
    running = false;
    sampler.interrupt();
    try {
      sampler.join(1000);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      flush(Long.MAX_VALUE);
      for (final BufferedWriter w : new BufferedWriter[] {windows, queue, workersCsv, histogram}) {
        w.close();
      }
    }
  }
}
