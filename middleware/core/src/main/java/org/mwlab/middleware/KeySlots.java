package org.mwlab.middleware;

import java.util.Arrays;
import java.util.function.IntPredicate;

/**
 * Where each key of a sharded multi-GET stands, by its position in the client's request, and
 * where its VALUE block landed in the values buffer. One per thread, reset per request.
 */
final class KeySlots implements GetExchange.Slots {
  /** A key's state in the request in progress. */
  enum State {
    /** Not answered yet: asked again, possibly elsewhere, until a server answers for it. */
    PENDING,
    /** The server that answered for the key does not have it: final, the reply leaves it out. */
    MISS,
    /** Its VALUE block is in the values buffer. */
    FOUND
  }

  private int n;
  private State[] state = new State[16];
  private int[] start = new int[16];
  private int[] end = new int[16];
  /** {@link #pending}, kept so that grouping the keys allocates nothing. */
  final IntPredicate isPending = this::pending;

  /** A request with {@code keys} keys begins: all pending. */
  void reset(final int keys) {
    n = keys;
    if (state.length < n) {
      state = new State[n];
      start = new int[n];
      end = new int[n];
    }
    Arrays.fill(state, 0, n, State.PENDING);
  }

  boolean pending(final int position) {
    return state[position] == State.PENDING;
  }

  @Override
  public void value(final int position, final int from, final int to) {
    state[position] = State.FOUND;
    start[position] = from;
    end[position] = to;
  }

  /** A part answered for the keys {@code order[from, to)}: those it did not return are misses. */
  void answered(final int[] order, final int from, final int to) {
    for (int j = from; j < to; j++) {
      if (state[order[j]] == State.PENDING) {
        state[order[j]] = State.MISS;
      }
    }
  }

  /**
   * A part failed for the keys {@code order[from, to)}: they are pending again, and what it
   * returned before it failed does not count.
   */
  void failed(final int[] order, final int from, final int to) {
    for (int j = from; j < to; j++) {
      state[order[j]] = State.PENDING;
    }
  }

  /** Appends the values found, in the client's key order, from {@code values} to {@code out}. */
  void appendFound(final ByteSink values, final ByteSink out) {
    final byte[] v = values.array();
    for (int i = 0; i < n; i++) {
      if (state[i] == State.FOUND) {
        out.append(v, start[i], end[i] - start[i]);
      }
    }
  }
}
