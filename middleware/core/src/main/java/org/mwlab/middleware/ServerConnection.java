package org.mwlab.middleware;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;
import org.mwlab.common.memcached.LineFramer;

/**
 * One worker's blocking connection to one memcached server, with deadlines on every read and
 * write and reconnection with exponential backoff after a failure.
 *
 * <p>Reads and writes block without a socket timeout, so each costs one system call. The deadline
 * of the call in progress is published in {@code armed}; the {@link Watchdog} closes the socket
 * once it has passed. Whoever moves {@code armed} away from the deadline first decides: the
 * worker (the call finished in time) or the watchdog (timeout).
 */
final class ServerConnection {
  /** A failed exchange; the message names the cause. */
  static final class ServerException extends Exception {
    private static final long serialVersionUID = 1L;

    ServerException(final String message) {
      super(message, null, false, false);
    }
  }

  final int index;
  final HostPort address;
  private final int timeoutMs;

  private static final long IDLE = Long.MIN_VALUE;
  private static final long EXPIRED = Long.MIN_VALUE + 1;

  /** Written by the worker before it publishes a deadline; read by the watchdog. */
  private volatile Socket socket;
  /** Deadline of the blocking call in progress, {@link #IDLE} or {@link #EXPIRED}. */
  private final AtomicLong armed = new AtomicLong(IDLE);
  private InputStream in;
  private OutputStream out;
  /** Holds a reply with a few values of the study's 4 KB. */
  static final int DEFAULT_READ_BUFFER = 16 * 1024;
  /** Longest reply line, CRLF included; data blocks pass through the buffer in pieces. */
  private static final int MAX_LINE = 1 << 20;

  private final LineFramer replies;

  /**
   * A server that accepts and then fails (it crashes at once, or closes every connection) must
   * not reset the backoff: it starts over only when the server answers.
   */
  private final Backoff backoff;
  private String lastFailure = "not connected";

  ServerConnection(final ServerPool pool, final int index, final int readBuffer) {
    this.replies = new LineFramer(readBuffer, Math.max(readBuffer, MAX_LINE));
    this.index = index;
    this.address = pool.address(index);
    this.timeoutMs = pool.timeoutMs();
    this.backoff = new Backoff(pool, index);
  }

  /** Connected, or reconnected now if the backoff has passed. */
  boolean available(final long now) {
    if (socket != null) {
      return true;
    }
    if (!backoff.mayAttempt(now)) {
      return false;
    }
    try {
      final Socket s = new Socket();
      s.setTcpNoDelay(true);
      s.connect(address.socketAddress(), timeoutMs);
      socket = s;
      in = s.getInputStream();
      out = s.getOutputStream();
      replies.clear();
      backoff.connected();
      return true;
    } catch (IOException e) {
      markFailed("connect failed: " + describe(e));
      return false;
    }
  }

  String lastFailure() {
    return lastFailure;
  }

  boolean connected() {
    return socket != null;
  }

  /** Closes the connection (its stream position is unknown) and schedules a reconnect. */
  void markFailed(final String reason) {
    lastFailure = reason;
    close();
    backoff.failed();
  }

  void close() {
    final Socket s = socket;
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
    socket = null;
    in = null;
    out = null;
    armed.set(IDLE);
  }

  void send(final byte[] b, final int off, final int len, final long deadlineNs)
      throws ServerException {
    if (deadlineNs - System.nanoTime() <= 0) {
      throw timeout();
    }
    armed.set(deadlineNs);
    try {
      out.write(b, off, len);
    } catch (IOException e) {
      if (!disarm(deadlineNs)) {
        throw timeout();
      }
      throw fail("send failed: " + describe(e));
    }
    if (!disarm(deadlineNs)) {
      throw timeout();
    }
  }

  /** Watchdog: ends the blocking call in progress if its deadline has passed. */
  void expireIfLate(final long now) {
    final long d = armed.get();
    if (d == IDLE || d == EXPIRED || now - d < 0) {
      return;
    }
    // Read after the deadline: the socket the late call uses, or a newer one it no longer needs.
    final Socket s = socket;
    if (s != null && armed.compareAndSet(d, EXPIRED)) {
      try {
        s.close();
      } catch (IOException e) {
        // the worker reports the timeout either way
      }
    }
  }

  /** True if the call finished before the watchdog expired it. */
  private boolean disarm(final long deadlineNs) {
    return armed.compareAndSet(deadlineNs, IDLE);
  }

  private ServerException timeout() {
    return fail("timeout after " + timeoutMs + " ms");
  }

  /**
   * Reads one line; returns the index of its end (before CRLF) in {@link #buffer()}, the start is
   * {@link #lineStart()}.
   */
  int readLine(final long deadlineNs) throws ServerException {
    int end;
    while ((end = replies.nextLine()) < 0) {
      fill(deadlineNs);
    }
    return end;
  }

  /** Start of the line returned by the last {@link #readLine}. */
  int lineStart() {
    return replies.lineStart();
  }

  byte[] buffer() {
    return replies.array();
  }

  /** Copies the next {@code n} bytes into {@code sink}. */
  void readInto(final int n, final ByteSink sink, final long deadlineNs) throws ServerException {
    int left = n;
    while (left > 0) {
      if (replies.available() == 0) {
        fill(deadlineNs);
      }
      final int k = Math.min(left, replies.available());
      sink.append(replies.array(), replies.position(), k);
      replies.consume(k);
      left -= k;
    }
  }

  /** Reads more bytes after the unread ones, compacting or growing the buffer. */
  private void fill(final long deadlineNs) throws ServerException {
    if (!replies.makeRoom()) {
      throw fail("reply line too long");
    }
    if (deadlineNs - System.nanoTime() <= 0) {
      throw timeout();
    }
    armed.set(deadlineNs);
    final int n;
    try {
      n = in.read(replies.array(), replies.limit(), replies.room());
    } catch (IOException e) {
      if (!disarm(deadlineNs)) {
        throw timeout();
      }
      throw fail("read failed: " + describe(e));
    }
    if (!disarm(deadlineNs)) {
      throw timeout();
    }
    if (n < 0) {
      throw fail("connection closed by server");
    }
    replies.filled(n);
    backoff.answered();
  }

  private ServerException fail(final String reason) {
    markFailed(reason);
    return new ServerException(reason);
  }

  private static String describe(final IOException e) {
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
