package org.mwlab.loadgen;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/** memtier_benchmark's --json-out-file layout, plus the "mwlab" section. */
final class Report {

  private final Config config;
  private final RunStats stats;
  private final List<Double> percentiles;
  private final long startMs;
  private final long finishMs;

  Report(
      final Config config,
      final RunStats stats,
      final List<Double> percentiles,
      final long startMs,
      final long finishMs) {
    this.config = config;
    this.stats = stats;
    this.percentiles = percentiles;
    this.startMs = startMs;
    this.finishMs = Math.max(finishMs, startMs + 1);
  }

  double seconds() {
    return (finishMs - startMs) / 1000.0;
  }

  /** memtier names a percentile by the first six characters of its printf rendering. */
  static String percentileKey(final double p, final int decimals) {
    final String s = String.format(Locale.ROOT, "p%." + decimals + "f", p);
    return s.substring(0, Math.min(6, s.length()));
  }

  /** Which step of a stepped run a report covers (1-based), for its "mwlab" section. */
  record StepLabel(int step, int steps) {}

  Map<String, Object> toMap(final Map<String, Object> configuration, final String failure) {
    return toMap(configuration, failure, null);
  }

  /** The report; {@code step} null for a whole run. */
  Map<String, Object> toMap(
      final Map<String, Object> configuration, final String failure, final StepLabel step) {
    final Map<String, Object> root = new LinkedHashMap<>();
    root.put("configuration", configuration);
    final Map<String, Object> info = new LinkedHashMap<>();
    info.put("Threads", config.threads());
    info.put("Connections per thread", config.clients());
    if (config.byRequests()) {
      info.put("Requests per client", config.requests());
    } else {
      info.put("Seconds", config.testTimeSeconds());
    }
    info.put("Format version", 2);
    root.put("run information", info);

    final Map<String, Object> all = new LinkedHashMap<>();
    final Map<String, Object> runtime = new LinkedHashMap<>();
    runtime.put("Start time", startMs);
    runtime.put("Finish time", finishMs);
    runtime.put("Total duration", finishMs - startMs);
    runtime.put("Time unit", "MILLISECONDS");
    all.put("Runtime", runtime);

    final TypeStats sets = stats.of(OpType.SET);
    final TypeStats gets = stats.of(OpType.GET);
    final int nWindows = Math.max(sets.windows(), gets.windows());
    all.put("Sets", block(sets.total(), 0, 0, sets.bytes(), sets::window, nWindows));
    all.put("Gets", block(gets.total(), gets.hits(), gets.misses(), gets.bytes(), gets::window, nWindows));
    all.put("Waits", block(TypeStats.newHistogram(), 0, 0, 0, i -> TypeStats.newHistogram(), nWindows));
    final Histogram total = sets.total().copy();
    total.add(gets.total());
    all.put(
        "Totals",
        block(
            total,
            gets.hits(),
            gets.misses(),
            sets.bytes() + gets.bytes(),
            i -> {
              final Histogram h = sets.window(i).copy();
              h.add(gets.window(i));
              return h;
            },
            nWindows));
    root.put("ALL STATS", all);

    final Map<String, Object> mwlab = new LinkedHashMap<>();
    mwlab.put("generator", "mwlab loadgen " + Main.VERSION);
    mwlab.put("failure", failure);
    mwlab.put("connections", config.threads() * config.clients());
    if (step != null) {
      mwlab.put("step", step.step());
      mwlab.put("steps", step.steps());
    }
    // The "Time-Serie" keys count windows of this length (memtier's are seconds).
    mwlab.put("window_ms", config.windowMs());
    final Map<String, Object> hist = new LinkedHashMap<>();
    hist.put("sets", histogram(sets.total()));
    hist.put("gets", histogram(gets.total()));
    mwlab.put("histogram_us", hist);
    mwlab.put("histogram_digits", TypeStats.DIGITS);
    final Map<String, Object> counts = new LinkedHashMap<>();
    counts.put("sets", sets.total().getTotalCount());
    counts.put("gets", gets.total().getTotalCount());
    counts.put("keys_requested", gets.keys());
    counts.put("hits", gets.hits());
    counts.put("misses", gets.misses());
    counts.put("set_errors", sets.errors());
    counts.put("get_errors", gets.errors());
    mwlab.put("counts", counts);
    mwlab.put("config", configuration);
    root.put("mwlab", mwlab);
    return root;
  }

  private interface PerWindow {
    Histogram at(int window);
  }

  private Map<String, Object> block(
      final Histogram h,
      final long hits,
      final long misses,
      final long bytes,
      final PerWindow perWindow,
      final int nWindows) {
    final double s = seconds();
    final boolean any = h.getTotalCount() > 0;
    final Map<String, Object> b = new LinkedHashMap<>();
    b.put("Count", h.getTotalCount());
    b.put("Ops/sec", h.getTotalCount() / s);
    b.put("Hits/sec", hits / s);
    b.put("Misses/sec", misses / s);
    b.put("Latency", any ? h.getMean() / 1000.0 : 0.0);
    b.put("Average Latency", any ? h.getMean() / 1000.0 : 0.0);
    b.put("Min Latency", any ? h.getMinValue() / 1000.0 : 0.0);
    b.put("Max Latency", any ? h.getMaxValue() / 1000.0 : 0.0);
    b.put("KB/sec", bytes / 1024.0 / s);
    final Map<String, Object> series = new LinkedHashMap<>();
    // Each entry holds counts and latencies of its window, no rates, so the window length
    // changes no entry's meaning.
    for (int i = 0; i < nWindows; i++) {
      final Histogram sh = perWindow.at(i);
      final boolean has = sh.getTotalCount() > 0;
      final Map<String, Object> one = new LinkedHashMap<>();
      one.put("Count", sh.getTotalCount());
      one.put("Average Latency", has ? sh.getMean() / 1000.0 : 0.0);
      one.put("Min Latency", has ? sh.getMinValue() / 1000.0 : 0.0);
      one.put("Max Latency", has ? sh.getMaxValue() / 1000.0 : 0.0);
      for (final double p : percentiles) {
        one.put(percentileKey(p, 2), has ? sh.getValueAtPercentile(p) / 1000.0 : 0.0);
      }
      series.put(Integer.toString(i), one);
    }
    b.put("Time-Serie", series);
    final Map<String, Object> pct = new LinkedHashMap<>();
    for (final double p : percentiles) {
      pct.put(percentileKey(p, 3), any ? h.getValueAtPercentile(p) / 1000.0 : 0.0);
    }
    final Map<String, Object> log = new LinkedHashMap<>();
    log.put("Compressed Histogram", compressed(h));
    pct.put("Histogram log format", log);
    b.put("Percentile Latencies", pct);
    return b;
  }

  private static String compressed(final Histogram h) {
    final ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
    final int n = h.encodeIntoCompressedByteBuffer(buf);
    final byte[] bytes = new byte[n];
    buf.flip();
    buf.get(bytes);
    return Base64.getEncoder().encodeToString(bytes);
  }

  private static Map<String, Object> histogram(final Histogram h) {
    final Map<String, Object> m = new LinkedHashMap<>();
    for (final HistogramIterationValue v : h.recordedValues()) {
      m.put(Long.toString(h.highestEquivalentValue(v.getValueIteratedTo())), v.getCountAtValueIteratedTo());
    }
    return m;
  }

  /** The summary table memtier prints on stdout. */
  String table() {
    final StringBuilder sb = new StringBuilder();
    sb.append("\nALL STATS\n");
    sb.append(String.format(Locale.ROOT, "%-8s %12s %12s %12s %15s", "Type", "Ops/sec", "Hits/sec", "Misses/sec", "Avg. Latency"));
    for (final double p : percentiles) {
      sb.append(String.format(Locale.ROOT, " %15s", percentileKey(p, 2) + " Latency"));
    }
    sb.append(String.format(Locale.ROOT, " %12s%n", "KB/sec"));
    final TypeStats sets = stats.of(OpType.SET);
    final TypeStats gets = stats.of(OpType.GET);
    final Histogram total = sets.total().copy();
    total.add(gets.total());
    row(sb, "Sets", sets.total(), 0, 0, sets.bytes());
    row(sb, "Gets", gets.total(), gets.hits(), gets.misses(), gets.bytes());
    row(sb, "Totals", total, gets.hits(), gets.misses(), sets.bytes() + gets.bytes());
    return sb.toString();
  }

  private void row(
      final StringBuilder sb, final String name, final Histogram h, final long hits, final long misses, final long bytes) {
    final double s = seconds();
    final boolean any = h.getTotalCount() > 0;
    sb.append(
        String.format(
            Locale.ROOT,
            "%-8s %12.2f %12.2f %12.2f %15.5f",
            name,
            h.getTotalCount() / s,
            hits / s,
            misses / s,
            any ? h.getMean() / 1000.0 : 0.0));
    for (final double p : percentiles) {
      sb.append(String.format(Locale.ROOT, " %15.5f", any ? h.getValueAtPercentile(p) / 1000.0 : 0.0));
    }
    sb.append(String.format(Locale.ROOT, " %12.2f%n", bytes / 1024.0 / s));
  }
}
