package org.mwlab.simplemq.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.mwlab.common.nio.ReadyKeys;
import org.mwlab.simplemq.protocol.Codec;
import org.mwlab.simplemq.protocol.FrameReader;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Status;

/**
 * The seed's distributor: one thread accepts connections, reads their requests, and hands each
 * to an idle worker, taken from a blocking queue; when no worker is idle it waits for one (with
 * group commit it queues them instead, for workers that take them in groups: {@link Dispatch}).
 * It answers malformed frames itself, so nothing that is not a request reaches the database.
 *
 * <p>It also keeps each client within the {@link Limits}: it refuses connections over the cap,
 * stops reading a client whose requests or replies pile up (and reads it again once they
 * drained to half their limits), and closes a connection that stays inside a frame too long.
 */
final class Distributor implements Runnable {

  /** How long a refused connection is drained before it is closed regardless. */
  private static final long REFUSED_LINGER_NS = TimeUnit.SECONDS.toNanos(2);
  /** The longest time between two sweeps (a frame timeout's precision is a quarter of it). */
  private static final long SWEEP_NS = TimeUnit.MILLISECONDS.toNanos(100);
  /** Refused connections drained at once; further ones are closed at once. */
  private static final int MAX_LINGERING = 64;

  private final ServerSocketChannel server;
  private final Selector selector;
  private final Dispatch dispatch;
  private final int maxFrame;
  private final int maxBody;
  private final Limits limits;
  private final Stats stats;
  private final byte[] refusal;
  /** Connections whose request a worker finished, with whether output was left unwritten. */
  private final ConcurrentLinkedQueue<Finished> finished = new ConcurrentLinkedQueue<>();
  private final ReadyKeys<Peer, InterruptedException> readyKeys;
  private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(64 * 1024);
  private final Set<ClientConnection> connections = new LinkedHashSet<>();
  private final List<RefusedConnection> lingering = new ArrayList<>();
  private final long frameTimeoutNs;
  /** How often connections are checked for a partial frame that timed out. */
  private final long sweepNs;
  private long lastSweepNs = System.nanoTime();
  /**
   * When the last select returned: every byte that had arrived by then on a connection that is
   * read has been read once its keys were handled, however long the thread waited for a worker.
   */
  private long selectedNs = lastSweepNs;
  private volatile boolean draining;
  private int atWorkers;

  private record Finished(ClientConnection connection, boolean outputLeft) {}

  Distributor(
      final InetSocketAddress listen,
      final Dispatch dispatch,
      final int maxFrame,
      final int maxBody,
      final Limits limits,
      final Stats stats)
      throws IOException {
    this.selector = Selector.open();
    this.server = ServerSocketChannel.open();
    server.bind(listen, 1024);
    server.configureBlocking(false);
    server.register(selector, SelectionKey.OP_ACCEPT);
    this.readyKeys = new ReadyKeys<>(selector, Peer.class, () -> true, this::accept, this::onReady);
    this.dispatch = dispatch;
    this.maxFrame = maxFrame;
    this.maxBody = maxBody;
    this.limits = limits;
    this.stats = stats;
    this.refusal = Codec.frame(new Reply.Failure(0, Status.TOO_MANY_CONNECTIONS,
        "the middleware serves at most " + limits.maxConnections() + " connections; this one"
            + " is refused and closed"));
    this.frameTimeoutNs = TimeUnit.MILLISECONDS.toNanos(limits.frameTimeoutMs());
    this.sweepNs =
        frameTimeoutNs == 0 ? SWEEP_NS : Math.min(SWEEP_NS, Math.max(1, frameTimeoutNs / 4));
  }

  InetSocketAddress address() throws IOException {
    return (InetSocketAddress) server.getLocalAddress();
  }

  /** Requests a waiter woke, to be tried again (their connections stay busy meanwhile). */
  private final ConcurrentLinkedQueue<Worker.Job> requeued = new ConcurrentLinkedQueue<>();

  /** Called by the waiter: the request goes to a worker again. */
  void requeue(final Worker.Job job) {
    requeued.add(job);
    selector.wakeup();
  }

  /** Called by a worker once the reply of a connection's request is written (or queued). */
  void finished(final ClientConnection connection, final boolean outputLeft) {
    finished.add(new Finished(connection, outputLeft));
    selector.wakeup();
  }

  /**
   * Stops accepting connections and answers new requests with SHUTTING_DOWN; the loop ends once
   * every request read before is answered and written.
   */
  void drain() {
    draining = true;
    selector.wakeup();
  }

  @Override
  public void run() {
    try {
      while (true) {
        selector.select(200);
        selectedNs = System.nanoTime();
        if (draining && server.isOpen()) {
          server.close();
        }
        for (Worker.Job j; (j = requeued.poll()) != null; ) {
          dispatch.dispatch(j.connection(), j.task());
        }
        for (Finished f; (f = finished.poll()) != null; ) {
          atWorkers--;
          f.connection().busy = false;
          if (f.outputLeft()) {
            wantWrite(f.connection());
          }
          dispatch(f.connection());
          regulate(f.connection());
        }
        readyKeys.handle();
        sweep();
        if (draining && quiet()) {
          break;
        }
      }
    } catch (final IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (final InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      for (final ClientConnection c : connections) {
        c.closeQuietly();
      }
      for (final RefusedConnection r : lingering) {
        closeQuietly(r.channel());
      }
      try {
        server.close();
        selector.close();
      } catch (final IOException ignored) {
        // Shutting down.
      }
    }
  }

  private void onReady(final SelectionKey key, final Peer peer) throws InterruptedException {
    if (peer instanceof RefusedConnection r) {
      discard(key, r);
      return;
    }
    final ClientConnection c = (ClientConnection) peer;
    try {
      if (key.isWritable()) {
        // A failed write closes the connection, and cancels its key with it.
        if (c.flush() && key.isValid()) {
          key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
        }
        // Replies drained: requests held back for a full output may go on.
        dispatch(c);
        regulate(c);
      }
      if (key.isValid() && key.isReadable() && !c.readPaused) {
        read(key, c);
      }
    } catch (final RuntimeException e) {
      // One connection's failure must not end the thread that serves them all.
      System.err.println("simplemq: distributor: closing a connection after " + e);
      close(key, c);
    }
  }

  /** Nothing read and unanswered, nothing at a worker, nothing left to write. */
  private boolean quiet() {
    if (atWorkers > 0) {
      return false;
    }
    for (final ClientConnection c : connections) {
      if (!c.isClosed() && (!c.pending.isEmpty() || c.leftover != null || c.hasOutput())) {
        return false;
      }
    }
    return true;
  }

  private void accept() throws IOException {
    for (SocketChannel channel; (channel = server.accept()) != null; ) {
      channel.configureBlocking(false);
      if (connections.size() >= limits.maxConnections()) {
        refuse(channel);
        continue;
      }
      channel.socket().setTcpNoDelay(true);
      final ClientConnection c = new ClientConnection(channel, maxFrame, System.nanoTime());
      channel.register(selector, SelectionKey.OP_READ, c);
      connections.add(c);
      stats.connectionAccepted();
    }
  }

  /**
   * Tells a connection over the cap so, in one error frame it can read before anything else,
   * then half-closes it; it is closed once the client closes or the linger ends.
   */
  private void refuse(final SocketChannel channel) {
    stats.connectionRefused();
    try {
      // An empty socket's send buffer takes the few bytes at once.
      channel.write(ByteBuffer.wrap(refusal));
      channel.shutdownOutput();
      if (lingering.size() < MAX_LINGERING) {
        final RefusedConnection r =
            new RefusedConnection(channel, System.nanoTime() + REFUSED_LINGER_NS);
        channel.register(selector, SelectionKey.OP_READ, r);
        lingering.add(r);
        return;
      }
    } catch (final IOException e) {
      // The client went away already.
    }
    closeQuietly(channel);
  }

  /** Reads and drops what a refused client still sends; closes it at its end of stream. */
  private void discard(final SelectionKey key, final RefusedConnection r) {
    // One read a round, as for a served connection: a refused client cannot hold the thread.
    int n;
    try {
      readBuffer.clear();
      n = r.channel().read(readBuffer);
    } catch (final IOException e) {
      n = -1;
    }
    if (n < 0) {
      key.cancel();
      closeQuietly(r.channel());
      lingering.remove(r);
    }
  }

  private void read(final SelectionKey key, final ClientConnection c)
      throws InterruptedException {
    readBuffer.clear();
    final int n;
    try {
      n = c.channel.read(readBuffer);
    } catch (final IOException e) {
      close(key, c);
      return;
    }
    if (n < 0) {
      close(key, c);
      return;
    }
    readBuffer.flip();
    final long now = System.nanoTime();
    if (n > 0) {
      c.lastInputNs = now;
    }
    if (decode(c, readBuffer, now)) {
      // The connection's requests filled its queue: keep the rest for when it drained.
      c.leftover = ByteBuffer.allocate(readBuffer.remaining()).put(readBuffer).flip();
    }
    dispatch(c);
    if (c.hasOutput()) {
      wantWrite(c);
    }
    regulate(c);
  }

  /**
   * Cuts frames out of {@code in} into the connection's queue while it has room; returns
   * whether bytes are left because it is full.
   */
  private boolean decode(final ClientConnection c, final ByteBuffer in, final long now) {
    while (in.hasRemaining() && c.pending.size() < limits.maxPending()) {
      final FrameReader.Event e = c.reader.next(in);
      if (e == null) {
        break;
      }
      c.pending.add(item(e, now));
    }
    return in.hasRemaining();
  }

  /**
   * Stops reading a connection whose queue is full or whose replies pile up untaken, so that
   * TCP pushes back on the client; reads it again once both drained to half their limits.
   * Bytes left over from a full queue are cut into frames here, as far as the queue takes them,
   * before the socket is read again: the errors the distributor answers itself leave the queue
   * at once, and no event would follow them to decode the rest.
   */
  private void regulate(final ClientConnection c) throws InterruptedException {
    if (c.isClosed() || c.readPaused && (c.pending.size() > limits.maxPending() / 2
        || c.unsentBytes() > limits.maxOutputBytes() / 2)) {
      return;
    }
    final long now = System.nanoTime();
    while (c.leftover != null) {
      final ByteBuffer rest = c.leftover;
      c.leftover = decode(c, rest, now) ? rest : null;
      dispatch(c);
      if (c.hasOutput()) {
        wantWrite(c);
      }
      if (c.isClosed()) {
        return;
      }
      if (c.leftover != null && c.pending.size() >= limits.maxPending()) {
        // The queue stays full only behind a request at a worker or untaken replies: its
        // reply, or the socket taking them, calls this again.
        break;
      }
    }
    final boolean full = c.leftover != null || c.pending.size() >= limits.maxPending()
        || c.unsentBytes() >= limits.maxOutputBytes();
    if (full && !c.readPaused) {
      c.readPaused = true;
      setRead(c, false);
      stats.readPaused();
    } else if (!full && c.readPaused) {
      c.readPaused = false;
      // The client was held back: its partial frame's time starts again.
      c.lastInputNs = now;
      setRead(c, true);
    }
  }

  private ClientConnection.Item item(final FrameReader.Event event, final long now) {
    if (event instanceof FrameReader.Oversized o) {
      stats.rejected(Status.FRAME_TOO_LARGE);
      return new ClientConnection.Immediate(new Reply.Failure(o.requestId(),
          Status.FRAME_TOO_LARGE, "a frame of " + o.length() + " bytes is longer than the "
              + maxFrame + " accepted; skipped"));
    }
    final FrameReader.Frame frame = (FrameReader.Frame) event;
    final Codec.Decoded decoded = Codec.request(frame.body(), maxBody);
    if (decoded instanceof Codec.Invalid invalid) {
      stats.rejected(invalid.reply().status());
      return new ClientConnection.Immediate(invalid.reply());
    }
    final Codec.Valid valid = (Codec.Valid) decoded;
    if (draining) {
      stats.rejected(Status.SHUTTING_DOWN);
      return new ClientConnection.Immediate(new Reply.Failure(valid.request().requestId(),
          Status.SHUTTING_DOWN, "the middleware is shutting down"));
    }
    stats.arrival(now);
    return new ClientConnection.Task(valid.request(), now);
  }

  /**
   * Hands the connection's next requests out, in order, one at a worker at a time, while the
   * client takes its replies.
   */
  private void dispatch(final ClientConnection c) throws InterruptedException {
    while (!c.busy && !c.pending.isEmpty() && !c.isClosed()
        && c.unsentBytes() < limits.maxOutputBytes()) {
      final ClientConnection.Item item = c.pending.poll();
      if (item instanceof ClientConnection.Immediate i) {
        if (c.send(Codec.frame(i.reply())) == ClientConnection.Delivery.PENDING) {
          wantWrite(c);
        }
        continue;
      }
      final ClientConnection.Task task = (ClientConnection.Task) item;
      dispatch.dispatch(c, task);
      c.busy = true;
      atWorkers++;
      stats.dispatched();
    }
  }

  /**
   * Closes the connections that stayed inside a frame, sending nothing, for longer than the
   * frame timeout (one held back by {@link #regulate} is not waiting on its client), forgets
   * those a failed write closed, and closes the refused connections whose linger ended.
   */
  private void sweep() {
    final long now = System.nanoTime();
    if (now - lastSweepNs < sweepNs) {
      return;
    }
    lastSweepNs = now;
    final List<ClientConnection> expired = new ArrayList<>();
    final List<ClientConnection> gone = new ArrayList<>();
    for (final ClientConnection c : connections) {
      if (c.isClosed()) {
        // A worker's write failed and closed it; it no longer counts against the cap.
        gone.add(c);
      } else if (frameTimeoutNs > 0 && !c.readPaused && c.reader.inFrame()
          && selectedNs - c.lastInputNs > frameTimeoutNs) {
        expired.add(c);
      }
    }
    for (final ClientConnection c : expired) {
      stats.frameTimedOut();
      close(c.channel.keyFor(selector), c);
    }
    for (final ClientConnection c : gone) {
      close(c.channel.keyFor(selector), c);
    }
    lingering.removeIf(r -> {
      if (now - r.untilNs() < 0) {
        return false;
      }
      closeQuietly(r.channel());
      return true;
    });
  }

  private void wantWrite(final ClientConnection c) {
    final SelectionKey key = c.channel.keyFor(selector);
    if (key != null && key.isValid()) {
      key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
    }
  }

  private void setRead(final ClientConnection c, final boolean on) {
    final SelectionKey key = c.channel.keyFor(selector);
    if (key != null && key.isValid()) {
      key.interestOps(on ? key.interestOps() | SelectionKey.OP_READ
          : key.interestOps() & ~SelectionKey.OP_READ);
    }
  }

  private void close(final SelectionKey key, final ClientConnection c) {
    if (key != null) {
      key.cancel();
    }
    c.closeQuietly();
    // A request at a worker still runs: its reply has nowhere to go, and a pop's message is
    // lost in flight (the stats count it). The requests not yet handed out are dropped.
    for (final ClientConnection.Item item : c.pending) {
      if (item instanceof ClientConnection.Task) {
        stats.dropped();
      }
    }
    c.pending.clear();
    c.leftover = null;
    connections.remove(c);
  }

  private static void closeQuietly(final SocketChannel channel) {
    try {
      channel.close();
    } catch (final IOException ignored) {
      // Closing is all that is left to do.
    }
  }
}
