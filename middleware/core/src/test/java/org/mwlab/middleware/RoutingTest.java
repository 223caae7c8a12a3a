package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(60)
class RoutingTest {
  @TempDir Path dir;

  /**
   * The ring's algorithm written out independently: FNV-1a 64 of the bytes, the murmur3 64-bit
   * finaliser, 160 points per server named {@code host:port#i}, signed order; a key belongs to
   * the first point at or after its hash (wrapping), its replicas are the first distinct owners
   * clockwise from there. {@link #PINNED} checks it against values computed outside Java.
   */
  private static final class ReferenceRing {
    private final TreeMap<Long, Integer> points = new TreeMap<>();

    ReferenceRing(final List<String> servers, final int virtualNodes) {
      for (int s = 0; s < servers.size(); s++) {
        for (int v = 0; v < virtualNodes; v++) {
          points.putIfAbsent(hash(servers.get(s) + "#" + v), s);
        }
      }
    }

    static long hash(final String key) {
      long h = 0xcbf29ce484222325L; // FNV-1a 64 offset basis
      for (final byte b : key.getBytes(StandardCharsets.UTF_8)) {
        h = (h ^ (b & 0xff)) * 0x100000001b3L; // FNV 64 prime
      }
      h = (h ^ (h >>> 33)) * 0xff51afd7ed558ccdL; // murmur3 fmix64
      h = (h ^ (h >>> 33)) * 0xc4ceb9fe1a85ec53L;
      return h ^ (h >>> 33);
    }

    /** All servers in the key's clockwise order; the first R are its replica set. */
    List<Integer> order(final String key) {
      final long h = hash(key);
      final List<Integer> order = new ArrayList<>();
      for (final int s : points.tailMap(h, true).values()) {
        if (!order.contains(s)) {
          order.add(s);
        }
      }
      for (final int s : points.headMap(h, false).values()) {
        if (!order.contains(s)) {
          order.add(s);
        }
      }
      return order;
    }
  }

  private static final List<String> THREE =
      List.of("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211");
  private static final List<String> FOUR =
      List.of("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211", "10.0.0.4:11211");

  /**
   * Key, then the server indices in clockwise order for THREE and for FOUR (160 points each):
   * the replica set for R is the first R of them. Computed once with a separate Python
   * implementation of the same algorithm (and checked by {@link ReferenceRing}). {@code wrap-1129}
   * hashes above every point of THREE and wraps to the first one.
   */
  private static final String[][] PINNED = {
    {"key-0", "102", "3102"},
    {"key-1", "021", "3021"},
    {"key-2", "120", "1320"},
    {"key-3", "102", "1032"},
    {"key-4", "201", "2301"},
    {"key-5", "201", "2013"},
    {"key-6", "021", "0213"},
    {"key-7", "201", "2013"},
    {"key-8", "102", "1032"},
    {"key-9", "120", "1203"},
    {"key-10", "210", "2103"},
    {"key-11", "021", "3021"},
    {"memtier-0", "012", "3012"},
    {"memtier-1", "201", "2013"},
    {"memtier-99999", "210", "2130"},
    {"user:42", "012", "3012"},
    {"x", "210", "3210"},
    {"wrap-1129", "102", null},
  };

  private static List<Integer> digits(final String s) {
    return s.chars().map(c -> c - '0').boxed().toList();
  }

  private static List<Integer> replicas(final HashRing ring, final String key) {
    return Arrays.stream(ring.replicas(key.getBytes(StandardCharsets.UTF_8))).boxed().toList();
  }

  private static List<HostPort> hosts(final List<String> servers) {
    return servers.stream().map(HostPort::parse).toList();
  }

  @Test
  void hashIsFnv1aWithTheMurmurFinaliser() {
    // FNV-1a 64 test vectors ("" = offset basis, "a" = 0xaf63dc4c8601ec8c) through fmix64.
    final String[] keys = {"", "a", "key-0", "memtier-12345"};
    final long[] expected = {
      -1166397803181037274L, -9033471704281723301L, 1734865316076021129L, -7726623077114862145L
    };
    for (int i = 0; i < keys.length; i++) {
      final byte[] b = keys[i].getBytes(StandardCharsets.UTF_8);
      assertEquals(expected[i], HashRing.hash(b, 0, b.length), keys[i]);
      assertEquals(expected[i], ReferenceRing.hash(keys[i]), keys[i]);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void replicaSetsOfFixedServersArePinned(final int r) {
    final HashRing three = new HashRing(hosts(THREE), r, 160);
    final HashRing four = new HashRing(hosts(FOUR), r, 160);
    final ReferenceRing ref = new ReferenceRing(THREE, 160);
    for (final String[] row : PINNED) {
      final List<Integer> order = digits(row[1]);
      assertEquals(order, ref.order(row[0]), "reference ring, " + row[0]);
      assertEquals(order.subList(0, r), replicas(three, row[0]), "three servers, " + row[0]);
      if (row[2] != null) {
        assertEquals(digits(row[2]).subList(0, r), replicas(four, row[0]), "four, " + row[0]);
      }
    }
  }

  @Test
  void virtualNodeCountChangesThePlacement() {
    // The same keys with 40 points per server (also computed outside Java).
    final String[][] pinned = {
      {"key-0", "012"}, {"key-3", "210"}, {"key-7", "201"}, {"key-8", "102"},
      {"memtier-0", "021"}, {"memtier-1", "102"}, {"x", "021"},
    };
    final HashRing ring = new HashRing(hosts(THREE), 3, 40);
    final ReferenceRing ref = new ReferenceRing(THREE, 40);
    for (final String[] row : pinned) {
      assertEquals(digits(row[1]), replicas(ring, row[0]), row[0]);
      assertEquals(digits(row[1]), ref.order(row[0]), row[0]);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void setIsStoredOnExactlyTheKeysReplicaSet(final int r) {
    try (Cluster c = new Cluster(3, dir, "-t", "4", "--replication", Integer.toString(r));
        TextClient client = c.client()) {
      final List<String> names = c.servers.stream().map(m -> m.address().toString()).toList();
      final ReferenceRing ref = new ReferenceRing(names, 160);
      final Set<Integer> used = new HashSet<>();
      for (int i = 0; i < 30; i++) {
        final String key = "key-" + i;
        assertEquals("STORED", client.set(key, "value-" + i));
        final List<Integer> reps = ref.order(key).subList(0, r);
        for (int s = 0; s < 3; s++) {
          assertEquals(reps.contains(s), c.servers.get(s).has(key), key + " on server " + s);
        }
        used.addAll(reps);
      }
      assertEquals(3, used.size(), "keys spread over every server");
    }
  }

  @Test
  void defaultReplicationIsAllServers() {
    try (Cluster c = new Cluster(3, dir); TextClient client = c.client()) {
      assertEquals(3, c.config.replication());
      assertEquals("STORED", client.set("everywhere", "v"));
      for (final Memcached m : c.servers) {
        assertTrue(m.has("everywhere"));
      }
    }
  }

  @Test
  void getsRotateRoundRobinOverTheReplicas() {
    try (Cluster c = new Cluster(3, dir, "-t", "4"); TextClient client = c.client()) {
      // A different value on each replica shows which one answered.
      for (int s = 0; s < 3; s++) {
        try (TextClient direct = c.servers.get(s).client()) {
          assertEquals("STORED", direct.set("who", "server-" + s));
        }
      }
      final int[] seen = new int[3];
      for (int i = 0; i < 30; i++) {
        final List<String> r = client.get("who");
        seen[Integer.parseInt(r.get(1).substring("server-".length()))]++;
      }
      assertEquals(List.of(10, 10, 10), List.of(seen[0], seen[1], seen[2]));
    }
  }

  @Test
  void leastOutstandingSpreadsAnIdleLoadAndAnswersCorrectly() {
    try (Cluster c = new Cluster(3, dir, "-t", "4", "--read-balance", "least-outstanding");
        TextClient client = c.client()) {
      assertEquals("STORED", client.set("k", "v"));
      final long[] before = new long[3];
      for (int s = 0; s < 3; s++) {
        before[s] = c.servers.get(s).stat("get_hits");
      }
      for (int i = 0; i < 30; i++) {
        assertEquals(List.of("k", "v"), client.get("k"));
      }
      long total = 0;
      for (int s = 0; s < 3; s++) {
        final long d = c.servers.get(s).stat("get_hits") - before[s];
        assertTrue(d > 0, "server " + s + " got no reads");
        total += d;
      }
      assertEquals(30, total);
    }
  }

  @Test
  void ringMovesFewKeysWhenAServerIsAdded() {
    final List<HostPort> three =
        List.of(HostPort.parse("10.0.0.1:1"), HostPort.parse("10.0.0.2:1"),
            HostPort.parse("10.0.0.3:1"));
    final List<HostPort> four =
        List.of(three.get(0), three.get(1), three.get(2), HostPort.parse("10.0.0.4:1"));
    final HashRing a = new HashRing(three, 1, 160);
    final HashRing b = new HashRing(four, 1, 160);
    int moved = 0;
    final int[] load = new int[3];
    for (int i = 0; i < 10_000; i++) {
      final byte[] k = ("memtier-" + i).getBytes(StandardCharsets.US_ASCII);
      final int sa = a.replicas(k)[0];
      load[sa]++;
      final int sb = b.replicas(k)[0];
      if (sa != sb) {
        moved++;
        assertEquals(3, sb, "a key only moves to the new server");
      }
    }
    assertTrue(moved > 1500 && moved < 3500, "about a quarter of the keys move: " + moved);
    for (final int l : load) {
      assertTrue(l > 2500 && l < 4200, "balanced load: " + l);
    }
  }
}
