package org.mwlab.middleware;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Arrays;
import org.mwlab.common.memcached.LineFramer;
import org.mwlab.common.memcached.ReplyParser;

/**
 * Design 2016: a write thread's non-blocking connection to one server. SETs are written back to
 * back without waiting for replies; memcached answers them in order, so each reply line belongs
 * to the oldest SET still in flight here. Every SET has a deadline; a late reply, a broken
 * connection or a reply out of step fails every SET in flight on it and closes it, and it is
 * reconnected after the same backoff as the blocking connections.
 */
final class AsyncServerConnection {
  /** A SET's exchange with this server: the SET, which of its replicas this is, the deadline. */
  record Exchange(WriteThread.PendingSet set, int replica, long deadlineNs) {}

  /** What the write thread learns about an exchange. */
  interface Outcome {
    /** The exchange ended: {@code failure} is null if the server stored the value. */
    void ended(Exchange e, String failure);
  }

  /** Longest reply line accepted; a SET's replies are a few bytes. */
  private static final int MAX_LINE = 64 * 1024;

  final int index;
  final HostPort address;
  private final Selector selector;
  private final Backoff backoff;
  private final Outcome outcome;
  private final int timeoutMs;
  private final ArrayDeque<Exchange> inFlight = new ArrayDeque<>();
  private SocketChannel channel;
  private SelectionKey key;
  private boolean connecting;
  private byte[] out = new byte[16 * 1024];
  private int outStart;
  private int outEnd;
  private final LineFramer in = new LineFramer(4 * 1024, MAX_LINE);
  private final ReplyParser replies = ServerReplies.newParser();
  private String lastFailure = "not connected";

  AsyncServerConnection(
      final ServerPool pool, final int index, final Selector selector, final Outcome outcome) {
    this.index = index;
    this.address = pool.address(index);
    this.selector = selector;
    this.backoff = new Backoff(pool, index);
    this.outcome = outcome;
    this.timeoutMs = pool.timeoutMs();
  }

  String lastFailure() {
    return lastFailure;
  }

  boolean idle() {
    return inFlight.isEmpty();
  }

  /** Connected or connecting, or a connect started now if the backoff has passed. */
  boolean available(final long now) {
    if (channel != null) {
      return true;
    }
    if (!backoff.mayAttempt(now)) {
      return false;
    }
    try {
      channel = SocketChannel.open();
      channel.configureBlocking(false);
      channel.socket().setTcpNoDelay(true);
      connecting = !channel.connect(address.socketAddress());
      key = channel.register(selector, connecting ? SelectionKey.OP_CONNECT : SelectionKey.OP_READ,
          this);
      in.clear();
      outStart = 0;
      outEnd = 0;
      backoff.connected();
      return true;
    } catch (IOException | RuntimeException e) {
      // RuntimeException: a name that does not resolve (UnresolvedAddressException) and the like.
      closeChannel();
      lastFailure = "connect failed: " + describe(e);
      backoff.failed();
      return false;
    }
  }

  /** Queues a SET's bytes and sends what the socket takes now; the reply comes later. */
  void send(final byte[] payload, final Exchange e) {
    inFlight.addLast(e);
    if (outEnd + payload.length > out.length) {
      System.arraycopy(out, outStart, out, 0, outEnd - outStart);
      outEnd -= outStart;
      outStart = 0;
      if (outEnd + payload.length > out.length) {
        out = Arrays.copyOf(out, Math.max(out.length * 2, outEnd + payload.length));
      }
    }
    System.arraycopy(payload, 0, out, outEnd, payload.length);
    outEnd += payload.length;
    if (!connecting) {
      flush();
    }
  }

  /** The selector says {@code selected} is ready; a key of an earlier connection is ignored. */
  void ready(final SelectionKey selected) {
    if (selected != key) {
      return;
    }
    try {
      if (key.isConnectable()) {
        try {
          channel.finishConnect();
        } catch (IOException e) {
          fail("connect failed: " + describe(e));
          return;
        }
        connecting = false;
        interest();
        flush();
      }
      if (channel != null && key.isReadable()) {
        read();
      }
      if (channel != null && key.isValid() && key.isWritable()) {
        flush();
      }
    } catch (CancelledKeyException e) {
      fail("connection closed");
    }
  }

  /** The deadline of the oldest SET in flight, or {@link Long#MAX_VALUE}. */
  long nextDeadline() {
    final Exchange e = inFlight.peekFirst();
    return e == null ? Long.MAX_VALUE : e.deadlineNs();
  }

  /** Fails the connection if its oldest SET is late. */
  void expireIfLate(final long now) {
    final Exchange e = inFlight.peekFirst();
    if (e != null && now - e.deadlineNs() >= 0) {
      fail("timeout after " + timeoutMs + " ms");
    }
  }

  private void flush() {
    if (channel == null) {
      return;
    }
    try {
      if (outEnd > outStart) {
        outStart += channel.write(ByteBuffer.wrap(out, outStart, outEnd - outStart));
      }
      if (outStart == outEnd) {
        outStart = 0;
        outEnd = 0;
      }
      interest();
    } catch (IOException e) {
      fail("send failed: " + describe(e));
    }
  }

  private void interest() {
    if (key != null && key.isValid() && !connecting) {
      key.interestOps(SelectionKey.OP_READ | (outEnd > outStart ? SelectionKey.OP_WRITE : 0));
    }
  }

  private void read() {
    final int n;
    try {
      n = channel.read(in.space());
    } catch (IOException e) {
      fail("read failed: " + describe(e));
      return;
    }
    if (n < 0) {
      fail("connection closed by server");
      return;
    }
    if (n > 0) {
      backoff.answered();
    }
    in.spaceFilled();
    int end;
    while ((end = in.nextLine()) >= 0) {
      final byte[] b = in.array();
      final int start = in.lineStart();
      final Exchange e = inFlight.pollFirst();
      if (e == null) {
        fail("unexpected reply '" + ServerReplies.text(b, start, end) + "'");
        return;
      }
      outcome.ended(e, SetReplicationRoute.notStored(replies, b, start, end));
    }
    // Keep the incomplete line for the next read.
    if (!in.makeRoom()) {
      fail("reply line too long");
    }
  }

  /** Closes the connection and fails every SET in flight on it. */
  void fail(final String reason) {
    lastFailure = reason;
    closeChannel();
    backoff.failed();
    outStart = 0;
    outEnd = 0;
    String why = reason;
    Exchange e;
    while ((e = inFlight.pollFirst()) != null) {
      outcome.ended(e, why);
      why = "dropped with the connection (" + reason + ")";
    }
  }

  void close() {
    closeChannel();
  }

  private void closeChannel() {
    if (key != null) {
      key.cancel();
      key = null;
    }
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        // closing anyway
      }
      channel = null;
    }
    connecting = false;
  }

  private static String describe(final Exception e) {
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
