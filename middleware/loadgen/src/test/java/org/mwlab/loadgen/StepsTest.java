package org.mwlab.loadgen;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/** --steps against a real memcached: the step files, their times and counts, and bad flags. */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a hang guard only
class StepsTest {

  private static Memcached memcached;

  @TempDir Path dir;

  @BeforeAll
  static void startMemcached() throws IOException, InterruptedException {
    memcached = Memcached.start();
  }

  @AfterAll
  static void stopMemcached() {
    if (memcached != null) {
      memcached.close();
    }
  }

  /** The outcome of one in-process run. */
  private record Run(int status, String out, String err) {}

  private static Run run(final List<String> args) {
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();
    final int status = Main.run(args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true));
    return new Run(status, out.toString(), err.toString());
  }

  private static List<String> base(final String... more) {
    final List<String> a =
        new ArrayList<>(List.of("-s", "127.0.0.1", "-p", Integer.toString(memcached.port), "--key-maximum", "1000"));
    a.addAll(List.of(more));
    return a;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(final Object o) {
    return (Map<String, Object>) o;
  }

  private static Map<String, Object> read(final Path p) throws IOException {
    return map(JsonReader.parse(Files.readString(p)));
  }

  private static Map<String, Object> at(final Map<String, Object> m, final String... path) {
    Map<String, Object> cur = m;
    for (final String k : path) {
      cur = map(cur.get(k));
    }
    return cur;
  }

  private static long num(final Map<String, Object> m, final String key) {
    return ((Number) m.get(key)).longValue();
  }

  private static long count(final Map<String, Object> report, final String block) {
    return num(at(report, "ALL STATS", block), "Count");
  }

  @Test
  void allConnectionsOpenBeforeTheFirstStepAndEachStepIsAReportOfItsOwn() throws Exception {
    final Path json = dir.resolve("result.json");
    final Path gate = dir.resolve("gate");
    final long total0 = Long.parseLong(memcached.stats().get("total_connections"));
    final Run[] result = new Run[1];
    final Thread runner =
        new Thread(
            () ->
                result[0] =
                    run(
                        base(
                            "-c", "4", "-t", "1", "--steps", "1,4", "--step-time", "2",
                            "--json-out-file", json.toString(),
                            "--start-gate", gate.toString(), "--start-gate-timeout", "100")));
    runner.start();
    final Path ready = gate.resolveSibling("gate.ready");
    while (!Files.exists(ready)) {
      assertTrue(runner.isAlive(), () -> "the run ended before the gate: " + result[0]);
      Thread.sleep(10);
    }
    // The gate is still closed, so step 1 (one connection) has not begun: memcached must already
    // have accepted all four. total_connections counts our own stats connections too.
    int probes = 0;
    long opened;
    Map<String, String> stats;
    do {
      Thread.sleep(10);
      stats = memcached.stats();
      probes++;
      opened = Long.parseLong(stats.get("total_connections")) - total0 - probes;
    } while (opened < 4);
    assertEquals(4, opened, "connections the generator opened before its first step");
    final long current = Long.parseLong(stats.get("curr_connections"));
    assertTrue(current >= 4 + 1, "memcached's curr_connections, with our stats connection: " + current);
    Files.createFile(gate);
    runner.join();
    assertEquals(0, result[0].status(), result[0].err());
    assertTrue(result[0].out().contains("Step 2 of 2: 4 Connections per thread, 2 Seconds"), result[0].out());

    final Map<String, Object> whole = read(json);
    final Map<String, Object> s1 = read(dir.resolve("result.step1.json"));
    final Map<String, Object> s2 = read(dir.resolve("result.step2.json"));
    assertFalse(Files.exists(dir.resolve("result.step3.json")));

    assertEquals(4L, num(at(whole, "run information"), "Connections per thread"));
    assertEquals(4L, num(at(whole, "run information"), "Seconds"));
    assertEquals(List.of(1L, 4L), at(whole, "configuration").get("steps"));
    assertEquals(2L, num(at(whole, "configuration"), "step_time"));
    assertFalse(at(whole, "mwlab").containsKey("step"));
    final List<Map<String, Object>> steps = List.of(s1, s2);
    final long[] clients = {1, 4};
    for (int i = 0; i < 2; i++) {
      final Map<String, Object> s = steps.get(i);
      assertEquals(clients[i], num(at(s, "run information"), "Connections per thread"), "step " + (i + 1));
      assertEquals(2L, num(at(s, "run information"), "Seconds"));
      assertEquals(clients[i], num(at(s, "configuration"), "clients"));
      assertEquals(2L, num(at(s, "configuration"), "test_time"));
      assertEquals(i + 1L, num(at(s, "mwlab"), "step"));
      assertEquals(2L, num(at(s, "mwlab"), "steps"));
      assertEquals(clients[i], num(at(s, "mwlab"), "connections"));
      assertEquals(null, at(s, "mwlab").get("failure"));
      assertTrue(count(s, "Totals") > 0, "step " + (i + 1) + " has requests");
    }
    for (final String block : List.of("Sets", "Gets", "Totals")) {
      assertEquals(count(whole, block), count(s1, block) + count(s2, block), block);
    }
    assertEquals(
        num(at(whole, "mwlab", "counts"), "hits"),
        num(at(s1, "mwlab", "counts"), "hits") + num(at(s2, "mwlab", "counts"), "hits"));

    // Each step's seconds count from its own start: step 1's lie within it, step 2's second j is
    // the run's second 2 + j, and together they are the run's whole time series.
    final Map<String, Object> wholeSeries = at(whole, "ALL STATS", "Totals", "Time-Serie");
    final Map<String, Object> series1 = at(s1, "ALL STATS", "Totals", "Time-Serie");
    final Map<String, Object> series2 = at(s2, "ALL STATS", "Totals", "Time-Serie");
    assertTrue(series1.keySet().stream().allMatch(k -> Integer.parseInt(k) < 2), series1.keySet().toString());
    assertEquals(4, lateReplies(s2, 2), "all four connections send in step 2");
    long perSecondSum = 0;
    for (final var e : wholeSeries.entrySet()) {
      final int second = Integer.parseInt(e.getKey());
      final long n = num(map(e.getValue()), "Count");
      perSecondSum += n;
      final Map<String, Object> stepSeries = second < 2 ? series1 : series2;
      final String key = Integer.toString(second < 2 ? second : second - 2);
      final long inStep = stepSeries.containsKey(key) ? num(map(stepSeries.get(key)), "Count") : 0;
      assertEquals(n, inStep, "second " + second);
    }
    assertEquals(count(whole, "Totals"), perSecondSum);
  }

  /**
   * Replies of the last step that arrived after its end. In a closed loop each connection that
   * sends in that step has exactly one request outstanding when it ends, answered in the grace.
   */
  private static long lateReplies(final Map<String, Object> lastStep, final int stepSeconds) {
    long late = 0;
    for (final var e : at(lastStep, "ALL STATS", "Totals", "Time-Serie").entrySet()) {
      if (Integer.parseInt(e.getKey()) >= stepSeconds) {
        late += num(map(e.getValue()), "Count");
      }
    }
    return late;
  }

  @Test
  void stepsMayShrinkAndCountPerThread() throws IOException {
    final Path json = dir.resolve("out.json");
    final Run r = run(base("-c", "3", "-t", "2", "--steps", "3,1", "--step-time", "1", "--json-out-file", json.toString()));
    assertEquals(0, r.status(), r.err());
    final Map<String, Object> s1 = read(dir.resolve("out.step1.json"));
    final Map<String, Object> s2 = read(dir.resolve("out.step2.json"));
    assertEquals(6L, num(at(s1, "mwlab"), "connections"));
    assertEquals(2L, num(at(s2, "mwlab"), "connections"));
    assertEquals(1L, num(at(s2, "run information"), "Connections per thread"));
    // Two threads, one connection each still sending: the others went idle after step 1.
    assertEquals(2, lateReplies(s2, 1), "connections sending at the end");
    assertEquals(2L, num(at(s2, "run information"), "Threads"));
    assertTrue(count(s1, "Totals") > 0 && count(s2, "Totals") > 0);
    assertEquals(count(read(json), "Totals"), count(s1, "Totals") + count(s2, "Totals"));
  }

  @Test
  void withoutStepsThereAreNoStepFilesOrKeys() throws IOException {
    final Path json = dir.resolve("plain.json");
    final Run r = run(base("-c", "2", "-t", "1", "-n", "100", "--json-out-file", json.toString()));
    assertEquals(0, r.status(), r.err());
    try (var files = Files.list(dir)) {
      assertEquals(List.of(json), files.toList());
    }
    final Map<String, Object> m = read(json);
    assertFalse(at(m, "configuration").containsKey("steps"));
    assertFalse(at(m, "configuration").containsKey("step_time"));
    assertFalse(at(m, "mwlab").containsKey("step"));
    assertFalse(at(m, "mwlab").containsKey("steps"));
    assertEquals(200L, count(m, "Totals"));
    assertFalse(r.out().contains("Step "), r.out());
  }

  @Test
  void badStepFlagsAreRejectedBeforeConnecting() {
    final List<Executable> cases = new ArrayList<>();
    final Object[][] table = {
      {List.of("--steps", "1,4"), "--steps needs --step-time"},
      {List.of("--step-time", "2"), "--step-time needs --steps"},
      {List.of("--steps", "1", "--step-time", "0"), "--step-time must be > 0"},
      {List.of("--steps", "1", "--step-time", "-3"), "--step-time must be > 0"},
      {List.of("--steps", "1,5", "--step-time", "1"), "--steps values must be in 1..--clients (4), got 5"},
      {List.of("--steps", "0,2", "--step-time", "1"), "--steps values must be in 1..--clients (4), got 0"},
      {List.of("--steps", "1", "--step-time", "1", "--test-time", "3"), "--steps excludes --test-time"},
      {List.of("--steps", "1", "--step-time", "1", "--test-time", "0"), "--steps excludes --test-time"},
      {List.of("--steps", "1", "--step-time", "1", "-n", "10"), "--steps excludes --requests"},
      {List.of("--steps", "1", "--step-time", "1", "-n", "allkeys"), "--steps excludes --requests"},
      {List.of("--steps", "1,x", "--step-time", "1"), "--steps"},
      {List.of("--steps", "1", "--step-time", "x"), "--step-time"},
      {List.of("--steps", "2", "--step-time", "2147483647", "--steps", "3"), "too long"},
    };
    for (final Object[] row : table) {
      @SuppressWarnings("unchecked")
      final List<String> flags = (List<String>) row[0];
      final String message = (String) row[1];
      cases.add(
          () -> {
            final List<String> args = base("-c", "4", "-t", "1");
            args.addAll(flags);
            final Run r = run(args);
            assertEquals(2, r.status(), flags + ": " + r.err());
            assertTrue(r.err().contains(message), flags + " should say '" + message + "': " + r.err());
          });
    }
    assertAll(cases);
  }
}
