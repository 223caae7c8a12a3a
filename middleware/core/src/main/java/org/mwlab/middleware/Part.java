package org.mwlab.middleware;

import java.util.BitSet;

/**
 * Design 2016: what waits in one queue. A SET is one part (write queue of its key's primary); a
 * GET is one part per primary its keys have (read queues), plus one per failover.
 *
 * <p>Created by the net-thread (or by the read thread that fails over); owned by the thread that
 * takes it from the queue.
 */
final class Part {
  final Request request;
  /** The GET's shared state; null for a SET. */
  final Fanout fanout;
  final int server;
  /** Statistics pool of the queue it waits in. */
  final int pool;
  /** Client key positions of this part in the client's order; null = all of the request's keys. */
  final int[] positions;
  /** Servers this part's keys were already asked on (failover), this one included once taken. */
  final BitSet tried;

  long enqueueNs;
  long dequeueNs;
  long sentNs;
  long repliedNs;

  Part(final Request request, final Fanout fanout, final int server, final int pool,
      final int[] positions, final BitSet tried) {
    this.request = request;
    this.fanout = fanout;
    this.server = server;
    this.pool = pool;
    this.positions = positions;
    this.tried = tried;
  }

  int keys() {
    return positions == null ? request.keys.length : positions.length;
  }

  /** The client key position of this part's {@code i}-th key. */
  int position(final int i) {
    return positions == null ? i : positions[i];
  }
}
