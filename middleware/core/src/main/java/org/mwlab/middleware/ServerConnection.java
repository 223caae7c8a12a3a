package org.mwlab.middleware;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One worker's blocking connection to one memcached server, with deadlines on every read and
 * reconnection with exponential backoff after a failure.
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
  private final long backoffMinNs;
  private final long backoffMaxNs;

  private Socket socket;
  private InputStream in;
  private OutputStream out;
  private byte[] buf = new byte[16 * 1024];
  private int pos;
  private int lim;
  /** Start of the line returned by the last {@link #readLine}. */
  int lineStart;

  private long backoffNs;
  private long nextAttemptNs;
  private long failedAtNs;
  /** Per server, when some worker last connected; shared by all workers. */
  private final AtomicLongArray connectedAt;
  private String lastFailure = "not connected";

  ServerConnection(
      final int index,
      final HostPort address,
      final int timeoutMs,
      final int backoffMinMs,
      final int backoffMaxMs,
      final AtomicLongArray connectedAt) {
    this.index = index;
    this.connectedAt = connectedAt;
    this.address = address;
    this.timeoutMs = timeoutMs;
    this.backoffMinNs = backoffMinMs * 1_000_000L;
    this.backoffMaxNs = backoffMaxMs * 1_000_000L;
  }

  /** Connected, or reconnected now if the backoff has passed. */
  boolean available(final long now) {
    if (socket != null) {
      return true;
    }
    // Another worker reaching the server since this one failed ends the backoff early.
    if (now < nextAttemptNs && connectedAt.get(index) - failedAtNs <= 0) {
      return false;
    }
    try {
      final Socket s = new Socket();
      s.setTcpNoDelay(true);
      s.connect(address.socketAddress(), timeoutMs);
      socket = s;
      in = s.getInputStream();
      out = s.getOutputStream();
      pos = 0;
      lim = 0;
      backoffNs = 0;
      connectedAt.set(index, System.nanoTime());
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
    backoffNs = backoffNs == 0 ? backoffMinNs : Math.min(backoffMaxNs, backoffNs * 2);
    failedAtNs = System.nanoTime();
    nextAttemptNs = failedAtNs + backoffNs;
  }

  void close() {
    if (socket != null) {
      try {
        socket.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
    socket = null;
    in = null;
    out = null;
  }

  void send(final byte[] b, final int off, final int len) throws ServerException {
    try {
      out.write(b, off, len);
    } catch (IOException e) {
      throw fail("send failed: " + describe(e));
    }
  }

  /**
   * Reads one line; returns the index of its end (before CRLF) in {@link #buffer()}, the start is
   * {@link #lineStart}.
   */
  int readLine(final long deadlineNs) throws ServerException {
    int scanFrom = pos;
    while (true) {
      for (int i = scanFrom; i < lim; i++) {
        if (buf[i] == '\n') {
          lineStart = pos;
          pos = i + 1;
          return i > lineStart && buf[i - 1] == '\r' ? i - 1 : i;
        }
      }
      scanFrom = lim - pos;
      fill(deadlineNs);
      scanFrom += pos;
    }
  }

  byte[] buffer() {
    return buf;
  }

  /** Copies the next {@code n} bytes into {@code sink}. */
  void readInto(final int n, final ByteSink sink, final long deadlineNs) throws ServerException {
    int left = n;
    while (left > 0) {
      if (pos == lim) {
        fill(deadlineNs);
      }
      final int k = Math.min(left, lim - pos);
      sink.append(buf, pos, k);
      pos += k;
      left -= k;
    }
  }

  /** Reads more bytes after the unread ones, compacting or growing the buffer. */
  private void fill(final long deadlineNs) throws ServerException {
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, lim - pos);
      lim -= pos;
      pos = 0;
    }
    if (lim == buf.length) {
      if (buf.length >= 1 << 20) {
        throw fail("reply line too long");
      }
      buf = Arrays.copyOf(buf, buf.length * 2);
    }
    final long left = deadlineNs - System.nanoTime();
    if (left <= 0) {
      throw fail("timeout after " + timeoutMs + " ms");
    }
    try {
      socket.setSoTimeout((int) Math.max(1, left / 1_000_000L));
      final int n = in.read(buf, lim, buf.length - lim);
      if (n < 0) {
        throw fail("connection closed by server");
      }
      lim += n;
    } catch (SocketTimeoutException e) {
      throw fail("timeout after " + timeoutMs + " ms");
    } catch (IOException e) {
      throw fail("read failed: " + describe(e));
    }
  }

  private ServerException fail(final String reason) {
    markFailed(reason);
    return new ServerException(reason);
  }

  private static String describe(final IOException e) {
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
