package org.mwlab.loadgen;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.mwlab.common.load.RunClock;

/** One memtier "thread": a selector driving {@code --clients} closed-loop connections. */
final class Worker implements Runnable {

  /** How long to wait for outstanding replies once the test time is over. */
  private static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

  private final Config config;
  private final int index;
  private final RunClock clock;
  private final CyclicBarrier ready;
  private final ByteBuffer value;
  private final AtomicLong setSequence;
  private final AtomicLong getSequence;
  /** One per step, each window counted from its step's start. */
  private final RunStats[] stats;
  private final AtomicReference<String> abort;
  private volatile String failure;
  private volatile long finishedEpochMs;

  Worker(
      final Config config,
      final int index,
      final RunClock clock,
      final CyclicBarrier ready,
      final ByteBuffer value,
      final AtomicLong setSequence,
      final AtomicLong getSequence,
      final AtomicReference<String> abort) {
    this.config = config;
    this.index = index;
    this.clock = clock;
    this.ready = ready;
    this.value = value;
    this.setSequence = setSequence;
    this.getSequence = getSequence;
    this.abort = abort;
    this.stats = new RunStats[config.stepCount()];
    for (int s = 0; s < stats.length; s++) {
      stats[s] = new RunStats();
    }
  }

  /** Statistics of the requests whose replies arrived in step {@code step} (0-based). */
  RunStats stats(final int step) {
    return stats[step];
  }

  String failure() {
    return failure;
  }

  long finishedEpochMs() {
    return finishedEpochMs;
  }

  @Override
  public void run() {
    final List<Connection> connections = new ArrayList<>();
    try (Selector selector = Selector.open()) {
      try {
        final InetSocketAddress address = new InetSocketAddress(config.server(), config.port());
        for (int c = 0; c < config.clients(); c++) {
          final SocketChannel ch = SocketChannel.open(address);
          final SplittableRandom random = new SplittableRandom(config.seed() * 7919 + index * 1009L + c);
          final Connection conn =
              new Connection(
                  config,
                  c,
                  ch,
                  value,
                  new KeySource(config.setPattern(), config.keyMinimum(), config.keyMaximum(), setSequence, random),
                  new KeySource(config.getPattern(), config.keyMinimum(), config.keyMaximum(), getSequence, random),
                  random);
          conn.register(selector);
          connections.add(conn);
        }
      } catch (IOException e) {
        failure = "cannot connect to " + config.server() + ":" + config.port() + ": " + e.getMessage();
        abort.compareAndSet(null, failure);
      }
      // Every thread reaches the barrier, so one failed connect cannot leave the others waiting.
      ready.await();
      if (abort.get() == null) {
        loop(selector, connections);
      }
    } catch (IOException e) {
      failure = "connection error: " + e.getMessage();
    } catch (BrokenBarrierException e) {
      failure = "start barrier broken";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure = "interrupted";
    } finally {
      finishedEpochMs = System.currentTimeMillis();
      connections.forEach(Connection::close);
    }
  }

  private void loop(final Selector selector, final List<Connection> connections) throws IOException {
    final long start = clock.startNanos();
    final long deadline =
        config.byRequests() ? Long.MAX_VALUE : start + TimeUnit.SECONDS.toNanos(config.testTimeSeconds());
    final long stepNanos = config.stepNanos();
    final long windowNanos = config.windowNanos();
    int step = 0;
    activate(connections, step);
    boolean stopping = false;
    long giveUp = Long.MAX_VALUE;
    while (true) {
      final long now = System.nanoTime();
      if (!stopping && now >= deadline) {
        stopping = true;
        giveUp = now + GRACE_NANOS;
      }
      if (!stopping && stepAt(now - start) != step) {
        step = stepAt(now - start);
        activate(connections, step);
      }
      if (now >= giveUp || connections.stream().noneMatch(Connection::awaiting)) {
        return;
      }
      // Wake at the next step boundary too, so that connections it activates start on time.
      final long next = step + 1 < stats.length ? start + (step + 1) * stepNanos : deadline;
      final long wait = Math.min(Math.min(next, giveUp) - now, TimeUnit.MILLISECONDS.toNanos(100));
      selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
      final Iterator<SelectionKey> it = selector.selectedKeys().iterator();
      while (it.hasNext()) {
        final SelectionKey key = it.next();
        it.remove();
        final Connection c = (Connection) key.attachment();
        if (key.isWritable()) {
          c.write();
        }
        if (key.isReadable() && c.awaiting() && c.read()) {
          final long done = System.nanoTime();
          // A request belongs to the step in which its reply arrives (the last one in the grace).
          final int doneStep = stepAt(done - start);
          final int window = (int) ((done - start - doneStep * stepNanos) / windowNanos);
          stats[doneStep]
              .of(c.type())
              .record(
                  window,
                  (done - c.sentNanos()) / 1000,
                  c.bytes(),
                  c.type() == OpType.GET ? c.keysRequested() : 0,
                  c.type() == OpType.GET ? c.hits() : 0,
                  c.error());
          if (!stopping && done < deadline && c.hasRequestsLeft() && c.slot() < config.activeClients(doneStep)) {
            c.sendNext();
          }
        } else if (key.isReadable() && !c.awaiting()) {
          // Unsolicited bytes or a close: read() surfaces a close as an error.
          c.read();
        }
      }
    }
  }

  /** Step (0-based) at {@code elapsed} nanoseconds since the start; 0 for an unstepped run. */
  private int stepAt(final long elapsed) {
    return (int) Math.min(stats.length - 1, Math.max(0, elapsed) / config.stepNanos());
  }

  /** Starts the idle connections that {@code step} makes active; the others stay connected, idle. */
  private void activate(final List<Connection> connections, final int step) throws IOException {
    for (final Connection c : connections) {
      if (c.slot() < config.activeClients(step) && !c.awaiting() && c.hasRequestsLeft()) {
        c.sendNext();
      }
    }
  }
}
