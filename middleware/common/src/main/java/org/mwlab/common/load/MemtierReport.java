package org.mwlab.common.load;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * memtier_benchmark's {@code --json-out-file} layout ({@code ALL STATS}: one block per request
 * type, each with its whole-run HdrHistogram and its time series), which the analysis parses
 * for every load generator of the project.
 */
public final class MemtierReport {

  private MemtierReport() {}

  /** One request type's block: its name in the layout ("Sets", "Gets", "Pops"...). */
  public record Block(String name, TypeStats stats) {}

  /**
   * The {@code ALL STATS} object: the runtime, every block, an empty "Waits" and "Totals" (the
   * sum of the blocks).
   */
  public static Map<String, Object> allStats(
      final List<Block> blocks,
      final long startMs,
      final long finishMs,
      final List<Double> percentiles) {
    final long finish = Math.max(finishMs, startMs + 1);
    final double seconds = (finish - startMs) / 1000.0;
    final Map<String, Object> all = new LinkedHashMap<>();
    final Map<String, Object> runtime = new LinkedHashMap<>();
    runtime.put("Start time", startMs);
    runtime.put("Finish time", finish);
    runtime.put("Total duration", finish - startMs);
    runtime.put("Time unit", "MILLISECONDS");
    all.put("Runtime", runtime);
    int windows = 0;
    for (final Block b : blocks) {
      windows = Math.max(windows, b.stats().windows());
    }
    final int n = windows;
    final TypeStats total = new TypeStats();
    for (final Block b : blocks) {
      final TypeStats s = b.stats();
      all.put(b.name(), block(s.total(), s.hits(), s.misses(), s.bytes(), s::window, n, seconds,
          percentiles));
      total.add(s, 0);
    }
    all.put("Waits", block(TypeStats.newHistogram(), 0, 0, 0, i -> TypeStats.newWindowHistogram(), n,
        seconds, percentiles));
    all.put("Totals", block(total.total(), total.hits(), total.misses(), total.bytes(),
        total::window, n, seconds, percentiles));
    return all;
  }

  /** A histogram per window. */
  public interface PerWindow {
    Histogram at(int window);
  }

  /** One block: counts, rates, latencies in milliseconds, time series and percentiles. */
  public static Map<String, Object> block(
      final Histogram h,
      final long hits,
      final long misses,
      final long bytes,
      final PerWindow perWindow,
      final int nWindows,
      final double seconds,
      final List<Double> percentiles) {
    final boolean any = h.getTotalCount() > 0;
    final Map<String, Object> b = new LinkedHashMap<>();
    b.put("Count", h.getTotalCount());
    b.put("Ops/sec", h.getTotalCount() / seconds);
    b.put("Hits/sec", hits / seconds);
    b.put("Misses/sec", misses / seconds);
    b.put("Latency", any ? h.getMean() / 1000.0 : 0.0);
    b.put("Average Latency", any ? h.getMean() / 1000.0 : 0.0);
    b.put("Min Latency", any ? h.getMinValue() / 1000.0 : 0.0);
    b.put("Max Latency", any ? h.getMaxValue() / 1000.0 : 0.0);
    b.put("KB/sec", bytes / 1024.0 / seconds);
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

  /** memtier names a percentile by the first six characters of its printf rendering. */
  public static String percentileKey(final double p, final int decimals) {
    final String s = String.format(Locale.ROOT, "p%." + decimals + "f", p);
    return s.substring(0, Math.min(6, s.length()));
  }

  /** The histogram in HdrHistogram's compressed encoding, base64. */
  public static String compressed(final Histogram h) {
    final ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
    final int n = h.encodeIntoCompressedByteBuffer(buf);
    final byte[] bytes = new byte[n];
    buf.flip();
    buf.get(bytes);
    return Base64.getEncoder().encodeToString(bytes);
  }

  /** Bucket (highest equivalent value, µs) to count, for the "mwlab" section. */
  public static Map<String, Object> histogram(final Histogram h) {
    final Map<String, Object> m = new LinkedHashMap<>();
    for (final HistogramIterationValue v : h.recordedValues()) {
      m.put(Long.toString(h.highestEquivalentValue(v.getValueIteratedTo())),
          v.getCountAtValueIteratedTo());
    }
    return m;
  }
}
