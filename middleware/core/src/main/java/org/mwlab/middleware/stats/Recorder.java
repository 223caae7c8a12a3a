package org.mwlab.middleware.stats;

import org.HdrHistogram.WriterReaderPhaser;

/**
 * Per-thread statistics recorder. The owning thread records without locks (a wait-free
 * {@link WriterReaderPhaser} critical section); the collector swaps the accumulator out and merges
 * it off the request path.
 */
public final class Recorder {
  private final WriterReaderPhaser phaser = new WriterReaderPhaser();
  private final StatsClock clock;
  private final int worker;
  private final int workers;
  private final int servers;
  private volatile Accumulator active;

  Recorder(final StatsClock clock, final int worker, final int workers, final int servers) {
    this.clock = clock;
    this.worker = worker;
    this.workers = workers;
    this.servers = servers;
    this.active = new Accumulator(workers, servers);
  }

  /** A request answered by this worker. Times are {@link System#nanoTime()} values. */
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
      final boolean traced) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final Accumulator a = active;
      final long server = sent == 0 ? 0 : replied - sent;
      final WindowData w = a.window(clock.window(written));
      w.type(typeOrdinal, keys)
          .add(
              (enqueue - arrival) / 1e3,
              (dequeue - enqueue) / 1e3,
              (written - dequeue - server) / 1e3,
              server / 1e3,
              (written - arrival) / 1e3,
              keys,
              values,
              error);
      w.workerRequests[worker]++;
      spread(a, dequeue, written, true);
      spread(a, enqueue, dequeue, false);
      if (traced) {
        final long s = clock.startNs();
        a.trace.add(
            new long[] {
              typeOrdinal, keys, arrival - s, enqueue - s, dequeue - s, sent == 0 ? -1 : sent - s,
              sent == 0 ? -1 : replied - s, written - s
            });
      }
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** One request sent to server {@code server} with {@code keys} keys. */
  public void server(final int server, final int keys, final boolean error, final long now) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final WindowData w = active.window(clock.window(now));
      w.serverRequests[server]++;
      w.serverKeys[server] += keys;
      if (error) {
        w.serverErrors[server]++;
      }
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** Net-thread: one request enqueued; {@code queueLength} just after. */
  public void arrival(final long arrivalNs, final long queueLength) {
    final long c = phaser.writerCriticalSectionEnter();
    try {
      final WindowData w = active.window(clock.window(arrivalNs));
      w.arrivals++;
      if (queueLength > w.maxQueue) {
        w.maxQueue = queueLength;
      }
    } finally {
      phaser.writerCriticalSectionExit(c);
    }
  }

  /** Adds the interval's overlap with each window to worker busy time or queue time. */
  private void spread(final Accumulator a, final long from, final long to, final boolean busy) {
    if (to <= from) {
      return;
    }
    long w = clock.window(from);
    final long last = clock.window(to);
    long t = from;
    while (true) {
      final long end = w == last ? to : clock.windowStartNs(w + 1);
      final WindowData d = a.window(w);
      if (busy) {
        d.workerBusyNs[worker] += end - t;
      } else {
        d.queueNs += end - t;
      }
      if (w == last) {
        return;
      }
      t = end;
      w++;
    }
  }

  /** Collector: takes everything recorded so far. */
  Accumulator swap() {
    phaser.readerLock();
    try {
      final Accumulator old = active;
      active = new Accumulator(workers, servers);
      phaser.flipPhase();
      return old;
    } finally {
      phaser.readerUnlock();
    }
  }
}
