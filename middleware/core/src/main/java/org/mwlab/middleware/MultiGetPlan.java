package org.mwlab.middleware;

import java.util.Arrays;
import java.util.function.IntPredicate;

/**
 * How the keys of a multi-key GET are split over the servers: a server for each key position,
 * and the positions grouped by server in the client's key order (memcached answers a part's keys
 * in the order asked). Reusable: one plan per thread, reset per request.
 */
final class MultiGetPlan {
  private final int servers;
  private int n;
  private int[] assign = new int[16];
  private int[] order = new int[16];
  private final int[] groupStart;

  MultiGetPlan(final int servers) {
    this.servers = servers;
    this.groupStart = new int[servers + 1];
  }

  /** Every key to its primary (design 2016). */
  void byPrimary(final ReplicaSelector selector, final byte[][] keys) {
    reset(keys.length);
    for (int i = 0; i < n; i++) {
      assign[i] = selector.primary(keys[i]);
    }
    group(i -> true);
  }

  /** The keys spread evenly over their replicas (design 2018, sharded). */
  void balanced(final ReplicaSelector selector, final byte[][] keys, final long ticket) {
    reset(keys.length);
    final int[] perServer = new int[servers];
    for (int i = 0; i < n; i++) {
      assign[i] = selector.forKey(keys[i], ticket, i, perServer);
      perServer[assign[i]]++;
    }
    group(i -> true);
  }

  private void reset(final int keys) {
    n = keys;
    if (assign.length < n) {
      assign = new int[n];
      order = new int[n];
    }
  }

  /** The key positions for which {@code include} holds, grouped by assigned server. */
  void group(final IntPredicate include) {
    int k = 0;
    for (int s = 0; s < servers; s++) {
      groupStart[s] = k;
      for (int i = 0; i < n; i++) {
        if (assign[i] == s && include.test(i)) {
          order[k++] = i;
        }
      }
    }
    groupStart[servers] = k;
  }

  int assigned(final int position) {
    return assign[position];
  }

  void reassign(final int position, final int server) {
    assign[position] = server;
  }

  /** Key positions, grouped: server {@code s}'s are {@code order()[from(s) .. to(s))}. */
  int[] order() {
    return order;
  }

  int from(final int server) {
    return groupStart[server];
  }

  int to(final int server) {
    return groupStart[server + 1];
  }

  /** Servers with at least one key in the current grouping. */
  int groups() {
    int g = 0;
    for (int s = 0; s < servers; s++) {
      if (to(s) > from(s)) {
        g++;
      }
    }
    return g;
  }

  /** The key positions of server {@code s}'s group, as a new array. */
  int[] positions(final int server) {
    return Arrays.copyOfRange(order, from(server), to(server));
  }
}
