package org.mwlab.middleware.stats;

import org.HdrHistogram.WriterReaderPhaser;

/**
 * Per-thread statistics recorder. The owning thread records without locks; the collector swaps
 * the accumulator out and merges it off the request path. Times are {@link System#nanoTime()}
 * values.
 *
 * <p>A request is recorded once ({@link #request}) by the thread that answered it; each part of it
 * (what waited in one queue) once by the thread that served it ({@link #partDone}) and once with
 * the request's outcome ({@link #part}).
 *
 * <p>Every record lands in the window of its own time, however late the thread records it. So
 * that the collector knows when a window is complete, the thread keeps a floor: no time it records
 * later is earlier. It raises the floor from idle ({@link #hold}) before it takes the times of a
 * turn and drops it ({@link #idle}) once the turn's records are made. Queue and in-flight times
 * are recorded as changes at the enqueue, dequeue and done times ({@link Level}), each by the
 * thread that took that time, so no thread records a time another thread took.
 *
 * <p>Within a turn the records only go into the thread's own log; {@link #idle} applies the whole
 * turn to the accumulator inside one wait-free {@link WriterReaderPhaser} critical section, before
 * the floor drops. A request served in a turn of its own thus costs one critical section, not one
 * per record (six for a design-2018 GET). Records made outside a turn are applied at once.
 */
public final class Recorder {
  private static final long FLIP_WAIT_NS = 100_000;

  // Log entries: the kind, then its arguments.
  private static final int REQUEST = 0;
  private static final int PART = 1;
  private static final int PART_DONE = 2;
  private static final int BUSY = 3;
  private static final int DEQUEUED = 4;
  private static final int BATCH = 5;
  private static final int SERVER = 6;
  private static final int ARRIVAL = 7;
  private static final int QUEUED = 8;
  private static final int ENQUEUED = 9;

  private final WriterReaderPhaser phaser = new WriterReaderPhaser();
  private final StatsClock clock;
  private final int worker;
  private final int workers;
  private final int servers;
  private final int pools;
  private volatile Accumulator active;
  /** Collector only: the accumulator the next {@link #swap} puts in place, already emptied. */
  private Accumulator spare;
  /** No time recorded from now on is earlier; {@link #IDLE}: none earlier than when it is read. */
  private volatile long floor = IDLE;

  // Owner thread only.
  /** Between {@link #hold} and {@link #idle}: records wait in the log. */
  private boolean inTurn;
  private long[] log = new long[256];
  private int logged;

  public static final long IDLE = Long.MAX_VALUE;

  Recorder(final StatsClock clock, final int worker, final int workers, final int servers,
      final int pools) {
    this.clock = clock;
    this.worker = worker;
    this.workers = workers;
    this.servers = servers;
    this.pools = pools;
    this.active = new Accumulator(workers, servers, pools);
    this.spare = new Accumulator(workers, servers, pools);
  }

  /**
   * The thread is about to take the times of a turn: from now on it records none earlier than
   * now. Keeps an earlier floor.
   */
  public void hold() {
    if (floor == IDLE) {
      // Published before the turn's first time is taken, so that time is at least the floor.
      floor = System.nanoTime();
    }
    inTurn = true;
  }

  /** Every time the thread took is recorded; the next turn starts with {@link #hold}. */
  public void idle() {
    idleFrom(IDLE);
  }

  /**
   * As {@link #idle}, but the thread still holds a time {@code oldestNs} to record later (a
   * request whose first bytes came in then); {@link #IDLE} if none.
   */
  public void idleFrom(final long oldestNs) {
    // The turn's records are in the accumulator before the floor can move past their times.
    commit();
    inTurn = false;
    floor = oldestNs;
  }

  /** Collector: the earliest time this thread may still record; {@link #IDLE} if it holds none. */
  long floor() {
    return floor;
  }

  /**
   * A request answered by this thread. For a request of several parts the dequeue, sent and
   * replied times are those of its critical part (the last whose replies came in), which waited
   * in {@code pool}.
   */
  public void request(
      final int typeOrdinal,
      final int keys,
      final long arrival,
      final long enqueue,
      final long dequeue,
      final long sent,
      final long replied,
      final long written,
      final int values,
      final boolean error,
      final boolean traced,
      final int pool,
      final int parts) {
    final long[] l = room(14);
    int i = logged;
    l[i++] = REQUEST;
    l[i++] = typeOrdinal;
    l[i++] = keys;
    l[i++] = arrival;
    l[i++] = enqueue;
    l[i++] = dequeue;
    l[i++] = sent;
    l[i++] = replied;
    l[i++] = written;
    l[i++] = values;
    l[i++] = error ? 1 : 0;
    l[i++] = traced ? 1 : 0;
    l[i++] = pool;
    l[i++] = parts;
    logged = i;
    commitOutsideTurn();
  }

  /**
   * One part of a request that was answered at {@code written}: it waited {@code queueNs} in
   * {@code pool}, its servers took {@code serverNs}, the whole request {@code responseNs}.
   */
  public void part(
      final int pool,
      final int typeOrdinal,
      final int keys,
      final int partKeys,
      final long queueNs,
      final long serverNs,
      final long responseNs,
      final boolean error,
      final long written) {
    final long[] l = room(10);
    int i = logged;
    l[i++] = PART;
    l[i++] = pool;
    l[i++] = typeOrdinal;
    l[i++] = keys;
    l[i++] = partKeys;
    l[i++] = queueNs;
    l[i++] = serverNs;
    l[i++] = responseNs;
    l[i++] = error ? 1 : 0;
    l[i++] = written;
    logged = i;
    commitOutsideTurn();
  }

  /** Done at {@code done} with a part of {@code pool} this thread took ({@link #dequeued}). */
  public void partDone(final int pool, final long done) {
    log3(PART_DONE, pool, done);
  }

  /** This thread was busy from {@code from} to {@code to} (both times of its turn). */
  public void busy(final long from, final long to) {
    log3(BUSY, from, to);
  }

  /** A part was taken from {@code pool}'s queue; {@code inFlight} of the pool's parts are now. */
  public void dequeued(final int pool, final long inFlight, final long now) {
    log4(DEQUEUED, pool, inFlight, now);
  }

  /** A worker turn that took {@code size} requests from the queue. */
  public void batch(final int size) {
    log3(BATCH, size, 0);
  }

  /** One request sent to server {@code server} with {@code keys} keys. */
  public void server(final int server, final int keys, final boolean error, final long now) {
    final long[] l = room(5);
    int i = logged;
    l[i++] = SERVER;
    l[i++] = server;
    l[i++] = keys;
    l[i++] = error ? 1 : 0;
    l[i++] = now;
    logged = i;
    commitOutsideTurn();
  }

  /** Net-thread: one request read; its first bytes came in at {@code arrivalNs}. */
  public void arrival(final long arrivalNs) {
    log3(ARRIVAL, arrivalNs, 0);
  }

  /** Net-thread: a request was queued at {@code now}; {@code queueLength} parts wait in all. */
  public void queued(final long now, final long queueLength) {
    log3(QUEUED, now, queueLength);
  }

  /** One part put into {@code pool}'s queue; {@code queueLength} wait there just after. */
  public void enqueued(final int pool, final long enqueueNs, final long queueLength) {
    log4(ENQUEUED, pool, enqueueNs, queueLength);
  }

  private void log3(final int kind, final long a, final long b) {
    final long[] l = room(3);
    final int i = logged;
    l[i] = kind;
    l[i + 1] = a;
    l[i + 2] = b;
    logged = i + 3;
    commitOutsideTurn();
  }

  private void log4(final int kind, final long a, final long b, final long c) {
    final long[] l = room(4);
    final int i = logged;
    l[i] = kind;
    l[i + 1] = a;
    l[i + 2] = b;
    l[i + 3] = c;
    logged = i + 4;
    commitOutsideTurn();
  }

  /** The log, with room for {@code n} more entries. */
  private long[] room(final int n) {
    if (logged + n > log.length) {
      log = java.util.Arrays.copyOf(log, Math.max(logged + n, 2 * log.length));
    }
    return log;
  }

  private void commitOutsideTurn() {
    if (!inTurn) {
      commit();
    }
  }

  /** Applies the log to the accumulator in one critical section and empties it. */
  private void commit() {
    if (logged == 0) {
      return;
    }
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final Accumulator a = active;
      final long[] l = log;
      int i = 0;
      while (i < logged) {
        switch ((int) l[i]) {
          case REQUEST -> {
            applyRequest(a, l, i + 1);
            i += 14;
          }
          case PART -> {
            a.window(clock.window(l[i + 9]))
                .part((int) l[i + 1], (int) l[i + 2], (int) l[i + 3])
                .add((int) l[i + 4], l[i + 5], l[i + 6], l[i + 7], l[i + 8] != 0);
            i += 10;
          }
          case PART_DONE -> {
            applyPartDone(a, (int) l[i + 1], l[i + 2]);
            i += 3;
          }
          case BUSY -> {
            spread(a, l[i + 1], l[i + 2]);
            i += 3;
          }
          case DEQUEUED -> {
            applyDequeued(a, (int) l[i + 1], l[i + 2], l[i + 3]);
            i += 4;
          }
          case BATCH -> {
            a.batch((int) l[i + 1]);
            i += 3;
          }
          case SERVER -> {
            final WindowData w = a.window(clock.window(l[i + 4]));
            final int s = (int) l[i + 1];
            w.serverRequests[s]++;
            w.serverKeys[s] += l[i + 2];
            w.serverErrors[s] += l[i + 3];
            i += 5;
          }
          case ARRIVAL -> {
            a.window(clock.window(l[i + 1])).arrivals++;
            i += 3;
          }
          case QUEUED -> {
            final WindowData w = a.window(clock.window(l[i + 1]));
            w.maxQueue = Math.max(w.maxQueue, l[i + 2]);
            i += 3;
          }
          case ENQUEUED -> {
            applyEnqueued(a, (int) l[i + 1], l[i + 2], l[i + 3]);
            i += 4;
          }
          default -> throw new IllegalStateException("log entry " + l[i]);
        }
      }
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
    logged = 0;
  }

  private void applyRequest(final Accumulator a, final long[] l, final int i) {
    final int typeOrdinal = (int) l[i];
    final int keys = (int) l[i + 1];
    final long arrival = l[i + 2];
    final long enqueue = l[i + 3];
    final long dequeue = l[i + 4];
    final long sent = l[i + 5];
    final long replied = l[i + 6];
    final long written = l[i + 7];
    final long server = sent == 0 ? 0 : replied - sent;
    a.window(clock.window(written))
        .type(typeOrdinal, keys)
        .add(
            (enqueue - arrival) / 1e3,
            (dequeue - enqueue) / 1e3,
            (written - dequeue - server) / 1e3,
            server / 1e3,
            (written - arrival) / 1e3,
            keys,
            (int) l[i + 8],
            l[i + 9] != 0);
    if (l[i + 10] != 0) {
      final long s = clock.startNs();
      a.trace.add(
          new long[] {
            typeOrdinal, keys, arrival - s, enqueue - s, dequeue - s, sent == 0 ? -1 : sent - s,
            sent == 0 ? -1 : replied - s, written - s, l[i + 11], l[i + 12]
          });
    }
  }

  private void applyPartDone(final Accumulator a, final int pool, final long done) {
    final long w = clock.window(done);
    final WindowData d = a.window(w);
    d.poolCompleted[pool]++;
    d.workerRequests[worker]++;
    d.poolInFlight[pool].change(-1, done, clock.windowStartNs(w + 1));
  }

  private void applyDequeued(final Accumulator a, final int pool, final long inFlight,
      final long now) {
    final long i = clock.window(now);
    final WindowData w = a.window(i);
    final long end = clock.windowStartNs(i + 1);
    w.queue.change(-1, now, end);
    w.poolQueue[pool].change(-1, now, end);
    w.poolInFlight[pool].change(1, now, end);
    if (inFlight > w.poolInFlightMax[pool]) {
      w.poolInFlightMax[pool] = inFlight;
    }
  }

  private void applyEnqueued(final Accumulator a, final int pool, final long enqueueNs,
      final long queueLength) {
    final long i = clock.window(enqueueNs);
    final WindowData w = a.window(i);
    final long end = clock.windowStartNs(i + 1);
    w.queue.change(1, enqueueNs, end);
    w.poolQueue[pool].change(1, enqueueNs, end);
    w.poolEnqueued[pool]++;
    if (queueLength > w.poolMaxQueue[pool]) {
      w.poolMaxQueue[pool] = queueLength;
    }
  }

  /** Adds the busy interval's overlap with each window to the window's busy time. */
  private void spread(final Accumulator a, final long from, final long to) {
    if (to <= from) {
      return;
    }
    long w = clock.window(from);
    final long last = clock.window(to);
    long t = from;
    while (true) {
      final long end = w == last ? to : clock.windowStartNs(w + 1);
      a.window(w).workerBusyNs[worker] += end - t;
      if (w == last) {
        return;
      }
      t = end;
      w++;
    }
  }

  /** Collector: takes everything recorded so far; hand it back with {@link #recycle}. */
  Accumulator swap() {
    phaser.readerLock();
    try {
      final Accumulator old = active;
      active = spare != null ? spare : new Accumulator(workers, servers, pools);
      spare = null;
      // A writer may be inside its critical section when its CPU quota runs out, and stay there
      // for the rest of the period: wait for it asleep, not spinning.
      phaser.flipPhase(FLIP_WAIT_NS);
      return old;
    } finally {
      phaser.readerUnlock();
    }
  }

  /**
   * Collector: {@code a}, the last {@link #swap}'s and merged since, is emptied and put in place
   * by the next swap, so that recording does not start over with empty arrays every pass.
   */
  void recycle(final Accumulator a) {
    a.reset();
    spare = a;
  }
}
