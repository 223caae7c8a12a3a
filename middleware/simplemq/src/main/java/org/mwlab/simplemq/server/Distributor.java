package org.mwlab.simplemq.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.mwlab.common.nio.ReadyKeys;
import org.mwlab.simplemq.protocol.Codec;
import org.mwlab.simplemq.protocol.FrameReader;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Status;

/**
 * The seed's distributor: one thread accepts connections, reads their requests, and hands each
 * to an idle worker, taken from a blocking queue; when no worker is idle it waits for one. It
 * answers malformed frames itself, so nothing that is not a request reaches the database.
 */
final class Distributor implements Runnable {

  private final ServerSocketChannel server;
  private final Selector selector;
  private final BlockingQueue<Worker> idle;
  private final int maxFrame;
  private final int maxBody;
  private final Stats stats;
  /** Connections whose request a worker finished, with whether output was left unwritten. */
  private final ConcurrentLinkedQueue<Finished> finished = new ConcurrentLinkedQueue<>();
  private final ReadyKeys<ClientConnection, InterruptedException> readyKeys;
  private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(64 * 1024);
  private final List<ClientConnection> connections = new ArrayList<>();
  private volatile boolean draining;
  private int atWorkers;

  private record Finished(ClientConnection connection, boolean outputLeft) {}

  Distributor(
      final InetSocketAddress listen,
      final BlockingQueue<Worker> idle,
      final int maxFrame,
      final int maxBody,
      final Stats stats)
      throws IOException {
    this.selector = Selector.open();
    this.server = ServerSocketChannel.open();
    server.bind(listen, 1024);
    server.configureBlocking(false);
    server.register(selector, SelectionKey.OP_ACCEPT);
    this.readyKeys =
        new ReadyKeys<>(selector, ClientConnection.class, () -> true, this::accept, this::onReady);
    this.idle = idle;
    this.maxFrame = maxFrame;
    this.maxBody = maxBody;
    this.stats = stats;
  }

  InetSocketAddress address() throws IOException {
    return (InetSocketAddress) server.getLocalAddress();
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
        if (draining && server.isOpen()) {
          server.close();
        }
        for (Finished f; (f = finished.poll()) != null; ) {
          atWorkers--;
          f.connection().busy = false;
          if (f.outputLeft()) {
            wantWrite(f.connection());
          }
          dispatch(f.connection());
        }
        readyKeys.handle();
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
      try {
        server.close();
        selector.close();
      } catch (final IOException ignored) {
        // Shutting down.
      }
    }
  }

  private void onReady(final SelectionKey key, final ClientConnection c)
      throws InterruptedException {
    if (key.isWritable() && c.flush()) {
      key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
    }
    if (key.isValid() && key.isReadable()) {
      read(key, c);
    }
  }

  /** Nothing read and unanswered, nothing at a worker, nothing left to write. */
  private boolean quiet() {
    if (atWorkers > 0) {
      return false;
    }
    for (final ClientConnection c : connections) {
      if (!c.isClosed() && (!c.pending.isEmpty() || c.hasOutput())) {
        return false;
      }
    }
    return true;
  }

  private void accept() throws IOException {
    final SocketChannel channel = server.accept();
    if (channel == null) {
      return;
    }
    channel.configureBlocking(false);
    channel.socket().setTcpNoDelay(true);
    final ClientConnection c = new ClientConnection(channel, maxFrame);
    channel.register(selector, SelectionKey.OP_READ, c);
    connections.add(c);
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
    for (FrameReader.Event e; (e = c.reader.next(readBuffer)) != null; ) {
      c.pending.add(item(e, now));
    }
    dispatch(c);
    if (c.hasOutput()) {
      wantWrite(c);
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

  /** Hands the connection's next requests out, in order, one at a worker at a time. */
  private void dispatch(final ClientConnection c) throws InterruptedException {
    while (!c.busy && !c.pending.isEmpty() && !c.isClosed()) {
      final ClientConnection.Item item = c.pending.poll();
      if (item instanceof ClientConnection.Immediate i) {
        if (c.send(Codec.frame(i.reply())) == ClientConnection.Delivery.PENDING) {
          wantWrite(c);
        }
        continue;
      }
      final ClientConnection.Task task = (ClientConnection.Task) item;
      // The seed's distributor waits here while every worker is busy.
      final Worker w = idle.take();
      c.busy = true;
      atWorkers++;
      stats.dispatched();
      w.assign(new Worker.Job(c, task, System.nanoTime()));
    }
  }

  private void wantWrite(final ClientConnection c) {
    final SelectionKey key = c.channel.keyFor(selector);
    if (key != null && key.isValid()) {
      key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
    }
  }

  private void close(final SelectionKey key, final ClientConnection c) {
    key.cancel();
    c.closeQuietly();
    // A request at a worker still runs: its reply has nowhere to go, and a pop's message is
    // lost in flight (the stats count it). The requests not yet handed out are dropped.
    for (final ClientConnection.Item item : c.pending) {
      if (item instanceof ClientConnection.Task) {
        stats.dropped();
      }
    }
    c.pending.clear();
    connections.remove(c);
  }
}
