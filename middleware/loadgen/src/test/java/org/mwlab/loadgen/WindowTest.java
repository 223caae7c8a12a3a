package org.mwlab.loadgen;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
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

/** --window-ms against a real memcached: the time series' keys are window indices. */
@Timeout(value = 120, unit = TimeUnit.SECONDS) // a hang guard only
class WindowTest {

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

  private static Map<String, Object> series(final Map<String, Object> report, final String block) {
    return at(report, "ALL STATS", block, "Time-Serie");
  }

  /** The series' keys as numbers, checking that they run 0, 1, 2, ... without a gap. */
  private static int windows(final Map<String, Object> series) {
    final List<String> keys = new ArrayList<>(series.keySet());
    for (int i = 0; i < keys.size(); i++) {
      assertEquals(Integer.toString(i), keys.get(i), "window keys in order: " + keys);
    }
    return keys.size();
  }

  /** Requests of the series in windows {@code from} and later. */
  private static long countFrom(final Map<String, Object> series, final int from) {
    long n = 0;
    for (final var e : series.entrySet()) {
      if (Integer.parseInt(e.getKey()) >= from) {
        n += num(map(e.getValue()), "Count");
      }
    }
    return n;
  }

  @Test
  void quarterSecondWindowsCoverTheRunAndCountEveryRequest() throws IOException {
    final Path json = dir.resolve("w.json");
    final Run r =
        run(base("-c", "3", "-t", "1", "--test-time", "2", "--window-ms", "250", "--json-out-file", json.toString()));
    assertEquals(0, r.status(), r.err());
    final Map<String, Object> m = read(json);
    assertEquals(250L, num(at(m, "mwlab"), "window_ms"));
    for (final String block : List.of("Sets", "Gets", "Totals")) {
      final Map<String, Object> s = series(m, block);
      // Two seconds are windows 0..7; the replies that arrive after the end lie beyond them.
      assertTrue(windows(s) > 8, block + ": " + s.keySet());
      assertEquals(num(at(m, "ALL STATS", block), "Count"), countFrom(s, 0), block);
    }
    // In a closed loop each connection has one request outstanding at the end, answered in the
    // grace: exactly those land at window 8 or later.
    assertEquals(3L, countFrom(series(m, "Totals"), 8));
    final long during = countFrom(series(m, "Totals"), 0) - 3;
    assertTrue(during > 0, "requests during the run");
  }

  @Test
  void theDefaultWindowIsMemtiersSecond() throws IOException {
    final Path json = dir.resolve("d.json");
    final Run r = run(base("-c", "2", "-t", "1", "--test-time", "1", "--json-out-file", json.toString()));
    assertEquals(0, r.status(), r.err());
    final Map<String, Object> m = read(json);
    assertEquals(1000L, num(at(m, "mwlab"), "window_ms"));
    final Map<String, Object> s = series(m, "Totals");
    // Second 0 holds the run, second 1 and later the two replies of the grace.
    assertTrue(windows(s) >= 2, s.keySet().toString());
    assertEquals(2L, countFrom(s, 1));
    assertEquals(num(at(m, "ALL STATS", "Totals"), "Count"), countFrom(s, 0));
  }

  @Test
  void eachStepHasItsOwnWindows() throws IOException {
    final Path json = dir.resolve("s.json");
    final Run r =
        run(
            base(
                "-c", "2", "-t", "1", "--steps", "1,2", "--step-time", "1", "--window-ms", "500",
                "--json-out-file", json.toString()));
    assertEquals(0, r.status(), r.err());
    final Map<String, Object> whole = read(json);
    final Map<String, Object> s1 = read(dir.resolve("s.step1.json"));
    final Map<String, Object> s2 = read(dir.resolve("s.step2.json"));
    for (final Map<String, Object> m : List.of(whole, s1, s2)) {
      assertEquals(500L, num(at(m, "mwlab"), "window_ms"));
    }
    final Map<String, Object> series1 = series(s1, "Totals");
    final Map<String, Object> series2 = series(s2, "Totals");
    // Step 1 ends where step 2 begins: its replies all lie in its two windows.
    assertTrue(windows(series1) <= 2, series1.keySet().toString());
    assertEquals(num(at(s1, "ALL STATS", "Totals"), "Count"), countFrom(series1, 0));
    // Step 2 has two windows, then its two connections' last replies in the grace.
    assertTrue(windows(series2) > 2, series2.keySet().toString());
    assertEquals(2L, countFrom(series2, 2));
    // The run's window k is step k / 2's window k % 2; step 2's grace follows at 4 and later.
    final Map<String, Object> all = series(whole, "Totals");
    windows(all);
    for (final var e : all.entrySet()) {
      final int k = Integer.parseInt(e.getKey());
      final Map<String, Object> step = k < 2 ? series1 : series2;
      final String key = Integer.toString(k < 2 ? k : k - 2);
      final long inStep = step.containsKey(key) ? num(map(step.get(key)), "Count") : 0;
      assertEquals(inStep, num(map(e.getValue()), "Count"), "window " + k);
    }
    assertEquals(2L, countFrom(all, 4));
  }

  @Test
  void badWindowsAreRejectedBeforeConnecting() {
    final List<Executable> cases = new ArrayList<>();
    final Object[][] table = {
      {List.of("--test-time", "1", "--window-ms", "49"), "--window-ms must be in 50..60000, got 49"},
      {List.of("--test-time", "1", "--window-ms", "0"), "--window-ms must be in 50..60000, got 0"},
      {List.of("--test-time", "1", "--window-ms", "-250"), "--window-ms must be in 50..60000, got -250"},
      {List.of("--test-time", "1", "--window-ms", "60001"), "--window-ms must be in 50..60000, got 60001"},
      {List.of("--test-time", "1", "--window-ms", "x"), "--window-ms"},
      {List.of("--test-time", "1", "--window-ms", "2.5"), "--window-ms"},
      {
        List.of("--steps", "1", "--step-time", "1", "--window-ms", "300"),
        "--step-time (1 s) must be a whole number of --window-ms (300 ms)"
      },
      {
        List.of("--steps", "1,2", "--step-time", "3", "--window-ms", "2000"),
        "--step-time (3 s) must be a whole number of --window-ms (2000 ms)"
      },
    };
    for (final Object[] row : table) {
      @SuppressWarnings("unchecked")
      final List<String> flags = (List<String>) row[0];
      final String message = (String) row[1];
      cases.add(
          () -> {
            final List<String> args = base("-c", "2", "-t", "1");
            args.addAll(flags);
            final Run r = run(args);
            assertEquals(2, r.status(), flags + ": " + r.err());
            assertTrue(r.err().contains(message), flags + " should say '" + message + "': " + r.err());
          });
    }
    assertAll(cases);
  }
}
