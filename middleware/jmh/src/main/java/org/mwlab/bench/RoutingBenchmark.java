package org.mwlab.bench;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.mwlab.middleware.HashRing;
import org.mwlab.middleware.HostPort;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** Cost of finding a key's replica set on the consistent-hash ring. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class RoutingBenchmark {
  @Param({"3", "7"})
  public int servers;

  private HashRing ring;
  private byte[][] keys;
  private int next;

  @Setup
  public void setup() {
    final HostPort[] hosts = new HostPort[servers];
    for (int i = 0; i < servers; i++) {
      hosts[i] = new HostPort("10.0.0." + (i + 1), 11211);
    }
    ring = new HashRing(List.of(hosts), Math.max(1, servers / 2), 160);
    keys = new byte[1024][];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = ("memtier-" + i).getBytes(StandardCharsets.US_ASCII);
    }
  }

  @Benchmark
  public int[] replicas() {
    next = (next + 1) & 1023;
    return ring.replicas(keys[next]);
  }
}
