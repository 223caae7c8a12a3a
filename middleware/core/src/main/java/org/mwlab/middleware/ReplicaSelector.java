package org.mwlab.middleware;

import java.util.Arrays;
import java.util.BitSet;
import java.util.function.IntPredicate;

/**
 * Which server of a key's replica set serves a read. Design 2018 balances over the replica set
 * (round-robin by the ticket the net-thread drew, or fewest outstanding requests); design 2016
 * reads the primary and fails over to the next replica not yet tried.
 */
final class ReplicaSelector {
  private final HashRing ring;
  private final ReadBalance balance;
  private final ServerPool servers;
  private final int[] all;

  ReplicaSelector(final HashRing ring, final ReadBalance balance, final ServerPool servers) {
    this.ring = ring;
    this.balance = balance;
    this.servers = servers;
    all = new int[ring.servers()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
  }

  /** The replica set of a key, primary first; shared, not to be modified. */
  int[] replicas(final byte[] key) {
    return ring.replicas(key);
  }

  /** Design 2016: the server a key's reads and writes go to first. */
  int primary(final byte[] key) {
    return ring.replicas(key)[0];
  }

  /**
   * Failover (design 2016) and reassignment of a sharded multi-GET's keys (design 2018): the
   * key's first replica not in {@code tried}, or -1.
   */
  int untried(final byte[] key, final BitSet tried) {
    for (final int s : ring.replicas(key)) {
      if (!tried.get(s)) {
        return s;
      }
    }
    return -1;
  }

  /**
   * Index into {@code candidates} of the server to ask first: round-robin by {@code ticket}, or
   * the one with the fewest outstanding requests among those {@code connected} (ties
   * round-robin).
   */
  int first(final int[] candidates, final long ticket, final IntPredicate connected) {
    final int n = candidates.length;
    final int rr = (int) Math.floorMod(ticket, (long) n);
    if (balance == ReadBalance.ROUND_ROBIN || n == 1) {
      return rr;
    }
    int best = rr;
    int bestLoad = Integer.MAX_VALUE;
    for (int k = 0; k < n; k++) {
      final int i = (rr + k) % n;
      final int s = candidates[i];
      final int load = connected.test(s) ? servers.outstanding(s) : 1 << 20;
      if (load < bestLoad) {
        bestLoad = load;
        best = i;
      }
    }
    return best;
  }

  /**
   * A sharded multi-GET's choice for its key {@code i}: the replica with the fewest of this
   * request's keys so far ({@code perServer}), then the fewest outstanding requests
   * (least-outstanding), then round-robin from {@code ticket + i}.
   */
  int forKey(final byte[] key, final long ticket, final int i, final int[] perServer) {
    final int[] reps = ring.replicas(key);
    int best = -1;
    int bestLoad = Integer.MAX_VALUE;
    for (int k = 0; k < reps.length; k++) {
      final int s = reps[(int) Math.floorMod(ticket + i + k, (long) reps.length)];
      int load = perServer[s] << 16;
      if (balance == ReadBalance.LEAST_OUTSTANDING) {
        load += Math.min(servers.outstanding(s), 0xffff);
      }
      if (load < bestLoad) {
        bestLoad = load;
        best = s;
      }
    }
    return best;
  }

  /** Servers that are replicas of every key, in ring order of the first key (may be empty). */
  int[] commonReplicas(final byte[][] keys) {
    if (ring.replication() == ring.servers()) {
      return all;
    }
    final int[] common = ring.replicas(keys[0]).clone();
    int n = common.length;
    for (int i = 1; i < keys.length && n > 0; i++) {
      final int[] reps = ring.replicas(keys[i]);
      int m = 0;
      for (int j = 0; j < n; j++) {
        for (final int s : reps) {
          if (s == common[j]) {
            common[m++] = common[j];
            break;
          }
        }
      }
      n = m;
    }
    return n == common.length ? common : Arrays.copyOf(common, n);
  }
}
