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
 * Cost a thread pays to record one request; the collector merges in the background. A worker
 * records the request, its one part, the pool's in-flight and busy time and the server: {@link
 * #recordGet} as six records made outside a turn, {@link #recordGetTurn} as a worker makes them,
 * within the turn ({@link Recorder#hold} to {@link Recorder#idle}). The net-thread records the
 * arrival and the enqueue ({@link #recordArrival}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class StatsBenchmark {
  private Path dir;
  private StatsCollector collector;
  private Recorder recorder;
  private Recorder net;
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
    net = collector.net();
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
    record(System.nanoTime());
  }

  @Benchmark
  public void recordGetTurn() {
    recorder.hold();
    record(System.nanoTime());
    recorder.idle();
  }

  @Benchmark
  public void recordArrival() {
    net.hold();
    final long t = System.nanoTime();
    net.arrival(t - 2_000);
    net.queued(t, 1);
    net.enqueued(0, t, 1);
    net.idle();
  }

  private void record(final long t) {
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
