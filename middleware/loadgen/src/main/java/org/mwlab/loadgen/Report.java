package org.mwlab.loadgen;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.mwlab.common.load.MemtierReport;
import org.mwlab.common.load.TypeStats;

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

    final TypeStats sets = stats.of(OpType.SET);
    final TypeStats gets = stats.of(OpType.GET);
    final Map<String, Object> all =
        MemtierReport.allStats(
            List.of(new MemtierReport.Block("Sets", sets), new MemtierReport.Block("Gets", gets)),
            startMs,
            finishMs,
            percentiles);
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
    hist.put("sets", MemtierReport.histogram(sets.total()));
    hist.put("gets", MemtierReport.histogram(gets.total()));
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

  /** The summary table memtier prints on stdout. */
  String table() {
    final StringBuilder sb = new StringBuilder();
    sb.append("\nALL STATS\n");
    sb.append(String.format(Locale.ROOT, "%-8s %12s %12s %12s %15s", "Type", "Ops/sec", "Hits/sec", "Misses/sec", "Avg. Latency"));
    for (final double p : percentiles) {
      sb.append(String.format(Locale.ROOT, " %15s", MemtierReport.percentileKey(p, 2) + " Latency"));
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
