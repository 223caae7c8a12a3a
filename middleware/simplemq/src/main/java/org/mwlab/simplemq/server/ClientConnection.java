package org.mwlab.simplemq.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import org.mwlab.simplemq.protocol.FrameReader;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;

/**
 * One client's connection. The distributor reads its frames and keeps their order: a connection
 * has at most one request at a worker, and the next is handed out once its reply is written.
 * Replies are written by whichever thread has them (a worker, or the distributor for the errors
 * it answers itself); what the socket does not take at once is left for the distributor.
 *
 * <p>Both of its queues are bounded (see {@link Limits}): the distributor stops reading a
 * connection whose unanswered requests or untaken replies reach their limit, and reads it again
 * once they drained.
 */
final class ClientConnection implements Peer {

  /** A request, or a reply the distributor gives itself, in arrival order. */
  sealed interface Item {}

  /** A request for a worker, with the times it was read and queued (System.nanoTime). */
  record Task(Request request, long arrivalNs) implements Item {}

  /** An error reply that needs no worker (a malformed frame, an unknown operation). */
  record Immediate(Reply reply) implements Item {}

  final SocketChannel channel;
  final FrameReader reader;
  /** Distributor thread only; at most {@link Limits#maxPending} items. */
  final ArrayDeque<Item> pending = new ArrayDeque<>();
  /** Distributor thread only: a request of this connection is at a worker. */
  boolean busy;
  /** Distributor thread only: OP_READ is off because a queue is full. */
  boolean readPaused;
  /**
   * Distributor thread only: bytes read but not yet cut into frames when reading paused; they
   * are decoded before the socket is read again. Null when there are none.
   */
  ByteBuffer leftover;
  /** Distributor thread only: when bytes last arrived, or reading last resumed. */
  long lastInputNs;

  private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
  /** Bytes in {@link #out} not yet written. */
  private long outBytes;
  private boolean closed;

  ClientConnection(final SocketChannel channel, final int maxFrame, final long nowNs) {
    this.channel = channel;
    this.reader = new FrameReader(maxFrame);
    this.lastInputNs = nowNs;
  }

  /** What became of a reply handed to {@link #send}. */
  enum Delivery {
    /** Written to the socket. */
    WRITTEN,
    /** Partly queued: the distributor writes the rest when the socket is writable. */
    PENDING,
    /** The connection had closed, or closed while it was written: the reply is lost. */
    LOST
  }

  /**
   * Queues a reply frame and writes what the socket takes now. Whether it is lost is decided
   * here, as it is written: a client that closes right after its last reply has not lost it.
   */
  synchronized Delivery send(final byte[] frame) {
    if (closed) {
      return Delivery.LOST;
    }
    out.add(ByteBuffer.wrap(frame));
    outBytes += frame.length;
    if (flush()) {
      return closed ? Delivery.LOST : Delivery.WRITTEN;
    }
    return Delivery.PENDING;
  }

  /** Writes queued bytes; returns whether everything was written. */
  synchronized boolean flush() {
    try {
      while (!out.isEmpty()) {
        final ByteBuffer head = out.peek();
        outBytes -= channel.write(head);
        if (head.hasRemaining()) {
          return false;
        }
        out.poll();
      }
      return true;
    } catch (final IOException e) {
      // The client went away: its replies have nowhere to go.
      closeQuietly();
      return true;
    }
  }

  synchronized boolean hasOutput() {
    return !out.isEmpty();
  }

  /** Reply bytes the client has not taken yet. */
  synchronized long unsentBytes() {
    return outBytes;
  }

  synchronized boolean isClosed() {
    return closed;
  }

  synchronized void closeQuietly() {
    closed = true;
    out.clear();
    outBytes = 0;
    try {
      channel.close();
    } catch (final IOException ignored) {
      // Closing is all that is left to do.
    }
  }
}
