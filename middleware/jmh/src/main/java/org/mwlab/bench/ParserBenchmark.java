package org.mwlab.bench;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.mwlab.middleware.RequestDecoder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** Decoding cost of the requests of the study's workload. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ParserBenchmark {
  private final RequestDecoder decoder = new RequestDecoder(250, 1 << 20, 8192, 1024);
  private byte[] get;
  private byte[] multiGet;
  private byte[] set;

  @Setup
  public void setup() {
    get = "get memtier-4711\r\n".getBytes(StandardCharsets.US_ASCII);
    multiGet =
        "get memtier-1 memtier-22 memtier-333 memtier-4444 memtier-5555 memtier-6666\r\n"
            .getBytes(StandardCharsets.US_ASCII);
    set =
        ("set memtier-4711 0 0 4096\r\n" + "x".repeat(4096) + "\r\n")
            .getBytes(StandardCharsets.US_ASCII);
  }

  @Benchmark
  public Object decodeGet() {
    return decoder.decode(get, 0, get.length);
  }

  @Benchmark
  public Object decodeMultiGet6() {
    return decoder.decode(multiGet, 0, multiGet.length);
  }

  @Benchmark
  public Object decodeSet4096() {
    return decoder.decode(set, 0, set.length);
  }
}
