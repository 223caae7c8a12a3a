package org.mwlab.middleware;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.mwlab.common.Ascii;
import org.mwlab.common.nio.ReadyKeys;
import org.mwlab.middleware.stats.Recorder;
import org.mwlab.middleware.stats.StatsClock;
import org.mwlab.middleware.stats.StatsCollector;

/**
 * The single network thread: accepts clients, reads and decodes their requests, timestamps them
 * and hands them to the design's {@link Dispatcher}, which queues them. When a queue is full it
 * waits, so it stops reading and the clients feel the backpressure.
 */
final class NetThread implements Runnable {
  private static final byte[] TOO_MANY =
      Ascii.bytes("SERVER_ERROR too many open connections\r\n");

  private final Config config;
  private final Selector selector;
  private final ServerSocketChannel server;
  private final Dispatcher dispatcher;
  private final StatsClock clock;
  private final StatsCollector collector;
  private final Recorder net;
  /**
   * Connections with bytes read but not yet decoded into requests: their arrivals, at the first
   * such byte, are still to be recorded.
   */
  private final Set<ClientConnection> partial = new HashSet<>();
  /**
   * Longest the net-thread holds the statistics back for a request still coming in; a request
   * whose bytes take longer counts as a late record.
   */
  private final long partialHoldNs;
  private final AtomicInteger connections = new AtomicInteger();
  private final ConcurrentLinkedQueue<ClientConnection> resumes = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Request> dispatches = new ConcurrentLinkedQueue<>();
  private final int initialBuffer;
  private final ReadyKeys<ClientConnection, RuntimeException> readyKeys;
  private volatile boolean running = true;
  private long ticket;
  private long nextId;

  NetThread(
      final Config config,
      final Dispatcher dispatcher,
      final StatsClock clock,
      final StatsCollector collector)
      throws IOException {
    this.config = config;
    this.dispatcher = dispatcher;
    this.clock = clock;
    this.collector = collector;
    this.net = collector.net();
    this.partialHoldNs = 10 * clock.windowNs();
    this.initialBuffer = Math.max(16 * 1024, config.maxLineLength() + 4);
    selector = Selector.open();
    server = ServerSocketChannel.open();
    server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
    server.bind(new InetSocketAddress(config.listenAddress(), config.port()), 1024);
    server.configureBlocking(false);
    server.register(selector, SelectionKey.OP_ACCEPT);
    readyKeys = new ReadyKeys<>(selector, ClientConnection.class, () -> running, this::accept,
        this::onReady);
  }

  int localPort() {
    return server.socket().getLocalPort();
  }

  void stop() {
    running = false;
    selector.wakeup();
  }

  void wakeup() {
    selector.wakeup();
  }

  /** A worker freed room on a paused connection. */
  void resume(final ClientConnection c) {
    resumes.add(c);
    selector.wakeup();
  }

  /** A request whose predecessor on its connection was just answered. */
  void dispatch(final Request r) {
    dispatches.add(r);
    selector.wakeup();
  }

  void connectionClosed() {
    connections.decrementAndGet();
  }

  private void onReady(final SelectionKey key, final ClientConnection c) {
    if (key.isValid() && key.isWritable()) {
      c.onWritable();
    }
    if (key.isValid() && key.isReadable()) {
      read(c);
      track(c);
    }
  }

  @Override
  public void run() {
    try {
      while (running) {
        net.idleFrom(oldestPartial());
        selector.select(100);
        net.hold();
        readyKeys.handle();
        Request next;
        while ((next = dispatches.poll()) != null) {
          enqueue(next);
        }
        ClientConnection c;
        while ((c = resumes.poll()) != null) {
          if (!c.isClosed()) {
            decodeBuffered(c, c.leftoverArrivalNs);
            c.restoreReadInterest();
          }
          track(c);
        }
        // Everything this round decoded goes to the workers together.
        dispatcher.flush();
      }
      drain();
    } catch (IOException e) {
      System.err.println("middleware: network thread failed: " + e);
    } finally {
      net.idle();
      try {
        server.close();
      } catch (IOException e) {
        // shutting down
      }
    }
  }

  /**
   * After {@link #stop}: accepts and reads nothing more, but every request already read is still
   * answered. Requests waiting behind a predecessor on their connection are queued when their
   * turn comes, and replies a socket did not take at once are written. Gives up only when nothing
   * was answered or written for longer than a request can take (a client that stopped reading).
   */
  private void drain() throws IOException {
    server.close();
    for (final SelectionKey k : selector.keys()) {
      if (k.attachment() instanceof ClientConnection c) {
        c.stopReading();
      }
    }
    final long stallNs =
        ((config.servers().size() + 1L) * config.serverTimeoutMs() + 1000L) * 1_000_000L;
    long owedBefore = Long.MAX_VALUE;
    long progressNs = System.nanoTime();
    while (true) {
      Request next;
      while ((next = dispatches.poll()) != null) {
        enqueue(next);
      }
      dispatcher.flush();
      long owed = 0;
      for (final SelectionKey k : selector.keys()) {
        if (k.attachment() instanceof ClientConnection c) {
          owed += c.owed();
        }
      }
      if (owed == 0 && dispatches.isEmpty()) {
        return;
      }
      final long now = System.nanoTime();
      if (owed < owedBefore) {
        owedBefore = owed;
        progressNs = now;
      } else if (now - progressNs > stallNs) {
        System.err.println("middleware: shutdown: " + owed + " replies still owed; giving up");
        return;
      }
      net.idle();
      selector.select(10);
      net.hold();
      final Iterator<SelectionKey> it = selector.selectedKeys().iterator();
      while (it.hasNext()) {
        final SelectionKey key = it.next();
        it.remove();
        if (key.isValid() && key.isWritable()
            && key.attachment() instanceof ClientConnection c) {
          c.onWritable();
        }
      }
    }
  }

  /** Closes every client connection (after the workers finished). */
  void closeAll() {
    for (final SelectionKey k : selector.keys()) {
      if (k.attachment() instanceof ClientConnection c) {
        c.close();
      }
    }
    try {
      selector.close();
    } catch (IOException e) {
      // shutting down
    }
  }

  private void accept() throws IOException {
    SocketChannel ch;
    while ((ch = server.accept()) != null) {
      if (connections.get() >= config.maxConnections()) {
        try (SocketChannel refused = ch) {
          refused.configureBlocking(false);
          refused.write(ByteBuffer.wrap(TOO_MANY));
        } catch (IOException e) {
          // the client is gone already
        }
        continue;
      }
      connections.incrementAndGet();
      ch.configureBlocking(false);
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      final ClientConnection c =
          new ClientConnection(ch, RequestDecoder.of(config), this, initialBuffer,
              config.maxPipeline());
      c.key = ch.register(selector, SelectionKey.OP_READ, c);
    }
  }

  private void read(final ClientConnection c) {
    if (c.readPaused()) {
      return;
    }
    final ByteBuffer in = c.in;
    final int before = in.position();
    final int n;
    try {
      n = c.channel.read(in);
    } catch (IOException e) {
      c.close();
      return;
    }
    final long now = System.nanoTime();
    if (before == 0) {
      c.leftoverArrivalNs = now;
    }
    if (n > 0) {
      decodeBuffered(c, now);
    }
    if (n < 0) {
      c.inputEnded();
    }
  }

  /** Decodes every complete request in the connection's buffer. */
  private void decodeBuffered(final ClientConnection c, final long readNs) {
    ByteBuffer in = c.in;
    final byte[] a = in.array();
    final int end = in.position();
    int p = 0;
    boolean first = true;
    int needed = 0;
    boolean needMore = false;
    while (!c.readPaused()) {
      final RequestDecoder.Result res = c.decoder.decode(a, p, end);
      final long arrival = first ? c.leftoverArrivalNs : readNs;
      p += res.consumed();
      if (res instanceof RequestDecoder.NeedMore m) {
        needed = m.needed();
        needMore = true;
        break;
      }
      first = false;
      if (res instanceof RequestDecoder.Command cmd) {
        final Request r = new Request(cmd.type(), cmd.keys(), cmd.payload(), cmd.noreply(), c);
        r.arrivalNs = arrival;
        r.id = nextId++;
        if (r.type != RequestType.SET) {
          r.ticket = ticket++;
        }
        clock.arrival(arrival);
        net.arrival(arrival);
        if (c.add(r) && c.dispatchOrWait(r)) {
          enqueue(r);
        }
      } else if (res instanceof RequestDecoder.Reply rep) {
        collector.localReply();
        final Request r = Request.local(c, null, rep.close());
        if (c.add(r)) {
          c.complete(r, rep.reply());
        }
        if (rep.close()) {
          break;
        }
      }
    }
    final int left = end - p;
    if (p > 0) {
      System.arraycopy(a, p, a, 0, left);
      in.position(left);
      if (left > 0 && !first) {
        c.leftoverArrivalNs = readNs;
      }
    }
    if (needMore && (needed > in.capacity() || in.position() == in.capacity())) {
      final int size =
          Math.min(Math.max(needed, in.capacity() * 2), c.decoder.maxRequestBytes() + 1024);
      if (size > in.capacity()) {
        final ByteBuffer bigger = ByteBuffer.allocate(size);
        bigger.put(a, 0, left);
        c.in = bigger;
      }
    } else if (left == 0 && in.capacity() > 4 * initialBuffer) {
      c.in = ByteBuffer.allocate(initialBuffer);
    }
  }

  /** Notes whether the connection has bytes of a request still to come. */
  private void track(final ClientConnection c) {
    if (!c.isClosed() && c.in.position() > 0) {
      partial.add(c);
    } else {
      partial.remove(c);
    }
  }

  /**
   * When the first bytes of the oldest request still coming in arrived ({@link Recorder#IDLE} if
   * none); a request stuck for longer than {@link #partialHoldNs} does not hold the floor.
   */
  private long oldestPartial() {
    if (partial.isEmpty()) {
      return Recorder.IDLE;
    }
    final long now = System.nanoTime();
    long oldest = Recorder.IDLE;
    final Iterator<ClientConnection> it = partial.iterator();
    while (it.hasNext()) {
      final ClientConnection c = it.next();
      if (c.isClosed()) {
        it.remove();
      } else if (now - c.leftoverArrivalNs < partialHoldNs) {
        oldest = Math.min(oldest, c.leftoverArrivalNs);
      }
    }
    return oldest;
  }

  private void enqueue(final Request r) {
    dispatcher.dispatch(r);
  }
}
