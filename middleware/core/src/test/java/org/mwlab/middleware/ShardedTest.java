package org.mwlab.middleware;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class ShardedTest {
  @TempDir Path dir;

  private static long[] hits(final Cluster c) {
    final long[] h = new long[c.servers.size()];
    for (int i = 0; i < h.length; i++) {
      h[i] = c.servers.get(i).stat("get_hits") + c.servers.get(i).stat("get_misses");
    }
    return h;
  }

  @BothDesigns
  void shardedMultiGetIsSplitEvenlyAndReassembledInKeyOrder(final String design) {
    try (Cluster c = new Cluster(3, dir, "--design", design, "-t", "4", "-s", "true");
        TextClient client = c.client()) {
      for (int i = 0; i < 9; i++) {
        assertEquals("STORED", client.set("k" + i, "value-" + i));
      }
      final long[] before = hits(c);
      final List<String> r = client.get("k5", "k1", "k8", "k0", "k7", "k2", "k3", "k6", "k4");
      final List<String> expected = new ArrayList<>();
      for (final String k : List.of("k5", "k1", "k8", "k0", "k7", "k2", "k3", "k6", "k4")) {
        expected.add(k);
        expected.add("value-" + k.substring(1));
      }
      assertEquals(expected, r);
      final long[] after = hits(c);
      // 2018 spreads the keys evenly over their replicas; 2016 asks each key's primary.
      final long[] perServer = new long[3];
      for (int i = 0; i < 9; i++) {
        if (design.equals("2016")) {
          perServer[c.primary("k" + i)]++;
        } else {
          perServer[i % 3]++;
        }
      }
      for (int s = 0; s < 3; s++) {
        assertEquals(perServer[s], after[s] - before[s], "keys looked up on server " + s);
      }
    }
  }

  @BothDesigns
  void shardedReplySkipsMissesAndKeepsDuplicatesInOrder(final String design) {
    try (Cluster c = new Cluster(3, dir, "--design", design, "-s", "true");
        TextClient client = c.client()) {
      assertEquals("STORED", client.set("a", "1"));
      assertEquals("STORED", client.set("b", "22"));
      assertEquals("STORED", client.set("c", "333"));
      assertEquals(
          List.of("c", "333", "a", "1", "c", "333", "b", "22"),
          client.get("c", "nope", "a", "c", "missing", "b"));
      assertEquals(List.of(), client.get("x", "y", "z", "w"));
    }
  }

  @BothDesigns
  void shardingWithOneReplicaFetchesEachKeyFromItsOwner(final String design) {
    try (Cluster c = new Cluster(3, dir, "--design", design, "-s", "true", "--replication", "1");
        TextClient client = c.client()) {
      final List<String> keys = new ArrayList<>();
      final List<String> expected = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        keys.add("item:" + i);
        expected.add("item:" + i);
        expected.add("v" + i);
        assertEquals("STORED", client.set("item:" + i, "v" + i));
      }
      assertEquals(expected, client.get(keys.toArray(String[]::new)));
    }
  }

  @BothDesigns
  void aFailedPartIsRetriedOnTheKeysOtherReplica(final String design) throws Exception {
    final Path stats = dir.resolve("stats");
    final String victimName;
    try (Cluster c = new Cluster(3, stats, "--design", design, "-t", "2", "-s", "true",
            "--replication", "2", "--server-timeout-ms", "30000");
        TextClient client = c.client()) {
      final Memcached victim = c.servers.get(1);
      victimName = victim.address().toString();
      // Six keys the victim holds and six it does not. With six of its keys, the
      // least-loaded choice (2018) gives the victim a part in every request; in 2016 the six are
      // keys whose primary it is.
      final List<String> keys = new ArrayList<>();
      final List<String> expected = new ArrayList<>();
      final int[] taken = new int[2];
      for (int i = 0; keys.size() < 12; i++) {
        final String key = "part:" + i;
        assertEquals("STORED", client.set(key, "v" + i));
        final int on = (design.equals("2016") ? c.primary(key) == 1 : victim.has(key)) ? 1 : 0;
        if (taken[on] < 6) {
          taken[on]++;
          keys.add(key);
          expected.add(key);
          expected.add("v" + i);
        }
      }
      victim.kill();
      final List<Memcached> live = List.of(c.servers.get(0), c.servers.get(2));
      // The first get finds the connections to the killed server closed, the later ones find
      // it unavailable; either way its part goes to the keys' other replica.
      for (int round = 0; round < 3; round++) {
        long before = 0;
        for (final Memcached m : live) {
          before += m.stat("get_hits") + m.stat("get_misses");
        }
        assertEquals(expected, client.get(keys.toArray(String[]::new)), "round " + round);
        long after = 0;
        for (final Memcached m : live) {
          after += m.stat("get_hits") + m.stat("get_misses");
        }
        assertEquals(12, after - before, "every key looked up once on a live replica");
      }
    }
    // The victim was given a part (and failed it) in each round.
    long victimErrors = 0;
    for (final String row : Files.readAllLines(stats.resolve("servers.csv"))) {
      final String[] f = row.split(",");
      if (f[1].equals(victimName)) {
        victimErrors += Long.parseLong(f[4]);
      }
    }
    assertTrue(victimErrors >= 3, "errors on the victim: " + victimErrors);
  }

  @Test
  void nonShardedMultiGetGoesToOneServer() {
    try (Cluster c = new Cluster(3, dir, "-s", "false"); TextClient client = c.client()) {
      for (int i = 0; i < 6; i++) {
        assertEquals("STORED", client.set("m" + i, "x" + i));
      }
      for (int round = 0; round < 3; round++) {
        final long[] before = hits(c);
        assertEquals(12, client.get("m0", "m1", "m2", "m3", "m4", "m5").size());
        final long[] after = hits(c);
        int servers = 0;
        for (int s = 0; s < 3; s++) {
          final long d = after[s] - before[s];
          if (d > 0) {
            servers++;
            assertEquals(6, d);
          }
        }
        assertEquals(1, servers);
      }
    }
  }

  @BothDesigns
  void nonShardedMultiGetWithoutACommonReplicaStillReturnsEveryKey(final String design) {
    try (Cluster c = new Cluster(3, dir, "--design", design, "-s", "false", "--replication", "1");
        TextClient client = c.client()) {
      final List<String> expected = new ArrayList<>();
      final String[] keys = new String[10];
      for (int i = 0; i < 10; i++) {
        keys[i] = "spread" + i;
        expected.add(keys[i]);
        expected.add("v" + i);
        assertEquals("STORED", client.set(keys[i], "v" + i));
      }
      assertEquals(expected, client.get(keys));
    }
  }
}
