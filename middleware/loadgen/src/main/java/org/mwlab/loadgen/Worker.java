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
  private final RunStats stats = new RunStats();
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
  }

  RunStats stats() {
    return stats;
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
    for (final Connection c : connections) {
      if (c.hasRequestsLeft()) {
        c.sendNext();
      }
    }
    boolean stopping = false;
    long giveUp = Long.MAX_VALUE;
    while (true) {
      final long now = System.nanoTime();
      if (!stopping && now >= deadline) {
        stopping = true;
        giveUp = now + GRACE_NANOS;
      }
      if (now >= giveUp || connections.stream().noneMatch(Connection::awaiting)) {
        return;
      }
      final long wait = Math.min(Math.min(deadline, giveUp) - now, TimeUnit.MILLISECONDS.toNanos(100));
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
          final int second = (int) ((done - start) / 1_000_000_000L);
          stats
              .of(c.type())
              .record(
                  second,
                  (done - c.sentNanos()) / 1000,
                  c.bytes(),
                  c.type() == OpType.GET ? c.keysRequested() : 0,
                  c.type() == OpType.GET ? c.hits() : 0,
                  c.error());
          if (!stopping && done < deadline && c.hasRequestsLeft()) {
            c.sendNext();
          }
        } else if (key.isReadable() && !c.awaiting()) {
          // Unsolicited bytes or a close: read() surfaces a close as an error.
          c.read();
        }
      }
    }
  }
}
