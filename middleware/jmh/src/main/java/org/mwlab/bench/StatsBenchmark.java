package org.mwlab.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.mwlab.middleware.stats.PoolSpec;
import org.mwlab.middleware.stats.Recorder;
import org.mwlab.middleware.stats.StatsClock;
import org.mwlab.middleware.stats.StatsCollector;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Cost a worker pays to record one request (the request, its one part, the pool's in-flight and
 * busy time, the server); the collector merges in the background.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class StatsBenchmark {
  private Path dir;
  private StatsCollector collector;
  private Recorder recorder;
  private StatsClock clock;
  private long n;

  @Setup(Level.Trial)
  public void setup() throws IOException {
    dir = Files.createTempDirectory("mw-stats-bench");
    clock = new StatsClock(1000);
    collector =
        new StatsCollector(clock, dir, List.of(new PoolSpec("shared", -1, null, 1, 0)),
            List.of("a:1", "b:1", "c:1"), false, Map.of(), "2018");
    recorder = collector.worker(0);
    collector.start();
    clock.arrival(System.nanoTime());
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    collector.finish(true);
    try (var files = Files.list(dir)) {
      for (final Path p : files.toList()) {
        Files.delete(p);
      }
    }
    Files.delete(dir);
  }

  @Benchmark
  public void recordGet() {
    final long t = System.nanoTime();
    n++;
    recorder.dequeued(0, 1, t - 60_000);
    recorder.request(1, 1, t - 90_000, t - 88_000, t - 60_000, t - 55_000, t - 5_000, t,
        1, false, false, 0, 1);
    recorder.part(0, 1, 1, 1, 28_000, 50_000, 90_000, false, t);
    recorder.partDone(0, t);
    recorder.busy(t - 60_000, t);
    recorder.server((int) (n % 3), 1, false, t);
  }
}
