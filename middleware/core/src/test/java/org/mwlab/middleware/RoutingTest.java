package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(60)
class RoutingTest {
  @TempDir Path dir;

  private static boolean contains(final int[] a, final int x) {
    for (final int v : a) {
      if (v == x) {
        return true;
      }
    }
    return false;
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void setIsStoredOnExactlyTheKeysReplicaSet(final int r) {
    try (Cluster c = new Cluster(3, dir, "-t", "4", "--replication", Integer.toString(r));
        TextClient client = c.client()) {
      final HashRing ring = c.ring();
      final Set<Integer> used = new HashSet<>();
      for (int i = 0; i < 30; i++) {
        final String key = "key-" + i;
        assertEquals("STORED", client.set(key, "value-" + i));
        final int[] reps = ring.replicas(key.getBytes(StandardCharsets.US_ASCII));
        assertEquals(r, reps.length);
        for (int s = 0; s < 3; s++) {
          assertEquals(contains(reps, s), c.servers.get(s).has(key), key + " on server " + s);
          if (contains(reps, s)) {
            used.add(s);
          }
        }
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
