package org.mwlab.middleware;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Consistent-hash ring: each server owns {@code virtualNodes} points; a key's replica set is the
 * first {@code replication} distinct servers clockwise from the key's hash.
 */
public final class HashRing {
  private final long[] points;
  /** Replica set (server indices) starting at each ring point, precomputed. */
  private final int[][] replicasAt;
  private final int servers;
  private final int replication;

  public HashRing(final List<HostPort> servers, final int replication, final int virtualNodes) {
    if (replication < 1 || replication > servers.size()) {
      throw new IllegalArgumentException("replication out of range: " + replication);
    }
    this.servers = servers.size();
    this.replication = replication;
    final int n = servers.size() * virtualNodes;
    final long[][] pairs = new long[n][];
    int k = 0;
    for (int s = 0; s < servers.size(); s++) {
      for (int v = 0; v < virtualNodes; v++) {
        final byte[] name = (servers.get(s) + "#" + v).getBytes(StandardCharsets.UTF_8);
        pairs[k++] = new long[] {hash(name, 0, name.length), s};
      }
    }
    Arrays.sort(pairs, (a, b) -> Long.compare(a[0], b[0]));
    points = new long[n];
    final int[] owner = new int[n];
    for (int i = 0; i < n; i++) {
      points[i] = pairs[i][0];
      owner[i] = (int) pairs[i][1];
    }
    replicasAt = new int[n][];
    for (int i = 0; i < n; i++) {
      final List<Integer> set = new ArrayList<>(replication);
      for (int j = 0; j < n && set.size() < replication; j++) {
        final int s = owner[(i + j) % n];
        if (!set.contains(s)) {
          set.add(s);
        }
      }
      replicasAt[i] = set.stream().mapToInt(Integer::intValue).toArray();
    }
  }

  public int servers() {
    return servers;
  }

  public int replication() {
    return replication;
  }

  /** The replica set of a key; the returned array is shared and must not be modified. */
  public int[] replicas(final byte[] key) {
    final long h = hash(key, 0, key.length);
    int i = Arrays.binarySearch(points, h);
    if (i < 0) {
      i = -i - 1;
      if (i == points.length) {
        i = 0;
      }
    }
    return replicasAt[i];
  }

  /** 64-bit FNV-1a with a murmur3 finaliser, so that nearby keys spread over the ring. */
  public static long hash(final byte[] b, final int from, final int to) {
    long h = 0xcbf29ce484222325L;
    for (int i = from; i < to; i++) {
      h ^= b[i] & 0xff;
      h *= 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
