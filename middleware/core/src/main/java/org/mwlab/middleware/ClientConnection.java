package org.mwlab.middleware;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

/**
 * One client connection: its input buffer and decoder (net-thread only) and its ordered output.
 *
 * <p>Every decoded request takes a place in {@code pending} in arrival order, and replies leave
 * strictly in that order. As in memcached, a connection's requests are executed one after the
 * other: a pipelined request waits in {@code waiting} until its predecessor is answered, so a
 * {@code get} after a {@code set} of the same key sees the new value. Output the socket does not take at
 * once waits in {@code unsent} and is written by the net-thread when the socket is writable.
 */
final class ClientConnection {
  final SocketChannel channel;
  final RequestDecoder decoder;
  private final NetThread net;
  private final int maxPipeline;
  SelectionKey key;

  // Net-thread only.
  ByteBuffer in;
  long leftoverArrivalNs;

  // Guarded by this.
  private final ArrayDeque<Request> pending = new ArrayDeque<>();
  private final ArrayDeque<ByteBuffer> unsent = new ArrayDeque<>();
  private final ArrayDeque<Request> waiting = new ArrayDeque<>();
  private boolean inFlight;
  private boolean readPaused;
  /** Shutting down: nothing more is read; what was read is still answered. */
  private boolean readStopped;
  private boolean inputEnded;
  private boolean closing;
  private boolean closed;

  ClientConnection(
      final SocketChannel channel,
      final RequestDecoder decoder,
      final NetThread net,
      final int initialBuffer,
      final int maxPipeline) {
    this.channel = channel;
    this.decoder = decoder;
    this.net = net;
    this.in = ByteBuffer.allocate(initialBuffer);
    this.maxPipeline = maxPipeline;
  }

  /** Takes a place in the reply order; returns false if the connection is closed. */
  synchronized boolean add(final Request r) {
    if (closed) {
      return false;
    }
    pending.addLast(r);
    if (pending.size() + unsent.size() >= maxPipeline && !readPaused) {
      readPaused = true;
      updateInterest();
    }
    return true;
  }

  /** True if {@code r} may be queued now; otherwise it waits for its predecessor. */
  synchronized boolean dispatchOrWait(final Request r) {
    if (closed) {
      return false;
    }
    if (inFlight) {
      waiting.addLast(r);
      return false;
    }
    inFlight = true;
    return true;
  }

  synchronized boolean readPaused() {
    return readPaused || readStopped || inputEnded || closing || closed;
  }

  /** Shutdown: stops reading for good; replies still owed are written. */
  synchronized void stopReading() {
    readStopped = true;
    updateInterest();
  }

  /** Requests read but not answered, plus replies not yet written (0 once closed). */
  synchronized int owed() {
    return pending.size() + unsent.size();
  }

  synchronized boolean isClosed() {
    return closed;
  }

  /** Sets a request's reply and writes every reply that is now in order. */
  void complete(final Request r, final byte[] reply) {
    complete(r, reply, reply.length, false);
  }

  /**
   * As {@link #complete(Request, byte[])} for the first {@code len} bytes of {@code reply}. With
   * {@code borrowed} the caller reuses the array afterwards: it is written from directly when the
   * reply is next in line and the socket takes it (the usual case), and copied only otherwise.
   */
  void complete(final Request r, final byte[] reply, final int len, final boolean borrowed) {
    complete(r, reply, len, borrowed, null);
  }

  /**
   * As {@link #complete(Request, byte[], int, boolean)} for a borrowed reply in a server
   * connection's read buffer, from its position to its limit: written from there (no copy on the
   * heap, none into a direct buffer) when it is next in line and the socket takes it.
   */
  void complete(final Request r, final ByteBuffer relayed) {
    complete(r, null, 0, true, relayed);
  }

  private void complete(final Request r, final byte[] reply, final int len,
      final boolean borrowed, final ByteBuffer relayed) {
    boolean resume = false;
    Request next = null;
    synchronized (this) {
      if (closed) {
        return;
      }
      final boolean inLine = pending.peekFirst() == r && unsent.isEmpty() && !closing;
      if (relayed != null && inLine) {
        r.relayed = relayed;
      } else if (relayed != null) {
        r.reply = new byte[relayed.remaining()];
        r.replyLength = r.reply.length;
        relayed.get(r.reply);
      } else {
        r.reply = reply;
        r.replyLength = len;
        r.borrowed = borrowed && inLine;
        if (borrowed && !r.borrowed) {
          r.reply = java.util.Arrays.copyOf(reply, len);
        }
      }
      if (r.type != null) {
        next = waiting.pollFirst();
        inFlight = next != null;
      }
      drain();
      if (readPaused && !closed && pending.size() + unsent.size() <= maxPipeline / 2) {
        readPaused = false;
        resume = true;
      }
    }
    if (next != null) {
      net.dispatch(next);
    }
    if (resume) {
      net.resume(this);
    }
  }

  /** The client closed its side: finish the replies still owed, then close. */
  synchronized void inputEnded() {
    inputEnded = true;
    if (pending.isEmpty() && unsent.isEmpty()) {
      close();
    } else {
      updateInterest();
    }
  }

  /** Net-thread: the socket can take more output. */
  synchronized void onWritable() {
    if (closed) {
      return;
    }
    try {
      while (!unsent.isEmpty()) {
        final ByteBuffer b = unsent.peekFirst();
        channel.write(b);
        if (b.hasRemaining()) {
          return;
        }
        unsent.pollFirst();
      }
    } catch (IOException e) {
      close();
      return;
    }
    drain();
    if (!closed) {
      updateInterest();
    }
  }

  private void drain() {
    while (!closing && !pending.isEmpty() && ready(pending.peekFirst())) {
      final Request head = pending.pollFirst();
      if (head.relayed != null) {
        if (!relay(head)) {
          return;
        }
      } else if (head.replyLength > 0) {
        ByteBuffer b = ByteBuffer.wrap(head.reply, 0, head.replyLength);
        if (unsent.isEmpty()) {
          try {
            channel.write(b);
          } catch (IOException e) {
            close();
            return;
          }
        }
        if (head.borrowed) {
          head.borrowed = false;
          if (b.hasRemaining()) {
            b = ByteBuffer.wrap(java.util.Arrays.copyOfRange(head.reply, b.position(), b.limit()));
          }
        }
        head.reply = null;
        if (b.hasRemaining()) {
          final boolean wasEmpty = unsent.isEmpty();
          unsent.addLast(b);
          if (wasEmpty) {
            updateInterest();
            net.wakeup();
          }
        }
      }
      if (head.closeAfter) {
        closing = true;
      }
    }
    if ((closing || inputEnded && pending.isEmpty()) && unsent.isEmpty()) {
      close();
    }
  }

  private static boolean ready(final Request r) {
    return r.reply != null || r.relayed != null;
  }

  /**
   * Writes a relayed reply (next in line, nothing unsent before it); what the socket does not
   * take is copied, since the server's buffer is reused. False if the connection closed.
   */
  private boolean relay(final Request head) {
    final ByteBuffer b = head.relayed;
    head.relayed = null;
    try {
      channel.write(b);
    } catch (IOException e) {
      close();
      return false;
    }
    if (b.hasRemaining()) {
      final ByteBuffer rest = ByteBuffer.allocate(b.remaining());
      rest.put(b).flip();
      unsent.addLast(rest);
      updateInterest();
      net.wakeup();
    }
    return true;
  }

  private void updateInterest() {
    if (closed || key == null || !key.isValid()) {
      return;
    }
    int ops = 0;
    if (!readPaused && !readStopped && !inputEnded && !closing) {
      ops |= SelectionKey.OP_READ;
    }
    if (!unsent.isEmpty()) {
      ops |= SelectionKey.OP_WRITE;
    }
    try {
      key.interestOps(ops);
    } catch (java.nio.channels.CancelledKeyException e) {
      // closed concurrently; nothing to update
    }
  }

  synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    pending.clear();
    unsent.clear();
    waiting.clear();
    try {
      channel.close();
    } catch (IOException e) {
      // already gone
    }
    net.connectionClosed();
  }

  synchronized void restoreReadInterest() {
    updateInterest();
  }
}
