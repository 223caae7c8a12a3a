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
 */
final class ClientConnection {

  /** A request, or a reply the distributor gives itself, in arrival order. */
  sealed interface Item {}

  /** A request for a worker, with the times it was read and queued (System.nanoTime). */
  record Task(Request request, long arrivalNs) implements Item {}

  /** An error reply that needs no worker (a malformed frame, an unknown operation). */
  record Immediate(Reply reply) implements Item {}

  final SocketChannel channel;
  final FrameReader reader;
  /** Distributor thread only. */
  final ArrayDeque<Item> pending = new ArrayDeque<>();
  /** Distributor thread only: a request of this connection is at a worker. */
  boolean busy;

  private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
  private boolean closed;

  ClientConnection(final SocketChannel channel, final int maxFrame) {
    this.channel = channel;
    this.reader = new FrameReader(maxFrame);
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
        channel.write(head);
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

  synchronized boolean isClosed() {
    return closed;
  }

  synchronized void closeQuietly() {
    closed = true;
    out.clear();
    try {
      channel.close();
    } catch (final IOException ignored) {
      // Closing is all that is left to do.
    }
  }
}
