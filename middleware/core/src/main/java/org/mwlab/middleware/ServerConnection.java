package org.mwlab.middleware;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One worker's blocking connection to one memcached server, with deadlines on every read and
 * write and reconnection with exponential backoff after a failure.
 *
 * <p>The channel reads into a buffer off the heap ({@link ReplyBuffer}), from which a reply that
 * passes through unchanged is written to the client ({@link ReplyBuffer#relayed}). Commands are
 * copied once into a send buffer off the heap: the copy the JDK makes of a heap buffer anyway,
 * without its per-call buffer lookup.
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
  private volatile SocketChannel socket;
  /** Deadline of the blocking call in progress, {@link #IDLE} or {@link #EXPIRED}. */
  private final AtomicLong armed = new AtomicLong(IDLE);
  /** Holds a reply with a few values of the study's 4 KB. */
  static final int DEFAULT_READ_BUFFER = 16 * 1024;
  /** Longest reply line, CRLF included; data blocks pass through the buffer in pieces. */
  private static final int MAX_LINE = 1 << 20;

  private final ReplyBuffer replies;
  /**
   * Grows to the longest command sent, up to {@link #MAX_SEND} (longer ones go in pieces), or to
   * the longest batch staged.
   */
  private ByteBuffer sendBuffer = ByteBuffer.allocateDirect(16 * 1024);
  /** Bytes at the start of {@link #sendBuffer} staged for {@link #sendStaged}. */
  private int staged;
  private static final int MAX_SEND = 2 << 20;

  /**
   * A server that accepts and then fails (it crashes at once, or closes every connection) must
   * not reset the backoff: it starts over only when the server answers.
   */
  private final Backoff backoff;
  private String lastFailure = "not connected";

  ServerConnection(final ServerPool pool, final int index, final int readBuffer) {
    this.replies = new ReplyBuffer(readBuffer, Math.max(readBuffer, MAX_LINE));
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
      final SocketChannel s = SocketChannel.open();
      try {
        s.setOption(StandardSocketOptions.TCP_NODELAY, true);
        s.socket().connect(address.socketAddress(), timeoutMs);
      } catch (IOException e) {
        s.close();
        throw e;
      }
      socket = s;
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
    final SocketChannel s = socket;
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
    socket = null;
    replies.clear();
    // Bytes staged for the closed socket never go out on the next one.
    staged = 0;
    armed.set(IDLE);
  }

  void send(final byte[] b, final int off, final int len, final long deadlineNs)
      throws ServerException {
    arm(deadlineNs);
    try {
      final SocketChannel ch = socket;
      if (len > sendBuffer.capacity() && sendBuffer.capacity() < MAX_SEND) {
        sendBuffer = ByteBuffer.allocateDirect(Math.min(MAX_SEND, Integer.highestOneBit(len) << 1));
      }
      int done = 0;
      while (done < len) {
        final int n = Math.min(len - done, sendBuffer.capacity());
        sendBuffer.clear();
        sendBuffer.put(b, off + done, n).flip();
        while (sendBuffer.hasRemaining()) {
          ch.write(sendBuffer);
        }
        done += n;
      }
    } catch (IOException e) {
      throw ioFailed(deadlineNs, "send", e);
    }
    disarmOrTimeout(deadlineNs);
  }

  /** Bytes {@link #stage}d for the next {@link #sendStaged}. */
  int staged() {
    return staged;
  }

  /**
   * Appends {@code b[off, off + len)} to what the next {@link #sendStaged} writes: copied once,
   * straight into the send buffer off the heap. A batch's commands go out in one write this way.
   */
  void stage(final byte[] b, final int off, final int len) {
    // Absolute puts stay within the limit, which the last write left at its end.
    sendBuffer.clear();
    if (staged + len > sendBuffer.capacity()) {
      final ByteBuffer bigger = ByteBuffer.allocateDirect(Integer.highestOneBit(staged + len) << 1);
      bigger.put(0, sendBuffer, 0, staged);
      sendBuffer = bigger;
    }
    sendBuffer.put(staged, b, off, len);
    staged += len;
  }

  /** Drops what was staged and not sent. */
  void clearStaged() {
    staged = 0;
  }

  /** Writes what was {@link #stage}d, then nothing is staged. */
  void sendStaged(final long deadlineNs) throws ServerException {
    final int n = staged;
    staged = 0;
    arm(deadlineNs);
    try {
      final SocketChannel ch = socket;
      sendBuffer.clear().limit(n);
      while (sendBuffer.hasRemaining()) {
        ch.write(sendBuffer);
      }
    } catch (IOException e) {
      throw ioFailed(deadlineNs, "send", e);
    }
    disarmOrTimeout(deadlineNs);
  }

  /** Publishes the deadline of the blocking call about to start; a timeout if it has passed. */
  private void arm(final long deadlineNs) throws ServerException {
    if (deadlineNs - System.nanoTime() <= 0) {
      throw timeout();
    }
    armed.set(deadlineNs);
  }

  /** The call finished: a timeout if the watchdog expired it meanwhile. */
  private void disarmOrTimeout(final long deadlineNs) throws ServerException {
    if (!disarm(deadlineNs)) {
      throw timeout();
    }
  }

  /** A {@code call} ("send", "read") failed: a timeout if the watchdog ended it, else why. */
  private ServerException ioFailed(final long deadlineNs, final String call, final IOException e) {
    return disarm(deadlineNs) ? fail(call + " failed: " + describe(e)) : timeout();
  }

  /** Watchdog: ends the blocking call in progress if its deadline has passed. */
  void expireIfLate(final long now) {
    final long d = armed.get();
    if (d == IDLE || d == EXPIRED || now - d < 0) {
      return;
    }
    // Read after the deadline: the socket the late call uses, or a newer one it no longer needs.
    final SocketChannel s = socket;
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

  /** Reads one line; returns its length without CRLF. The line starts {@link #line}. */
  int readLine(final long deadlineNs) throws ServerException {
    int len;
    while ((len = replies.nextLine()) < 0) {
      fill(deadlineNs);
    }
    return len;
  }

  /** The line returned by the last {@link #readLine}, from index 0. */
  byte[] line() {
    return replies.line();
  }

  /** The read buffer, for a reply relayed from it ({@link ReplyBuffer#relayFrom}). */
  ReplyBuffer replies() {
    return replies;
  }

  /**
   * Takes the next {@code n} bytes: left in place while a reply is relayed, else copied into
   * {@code sink}.
   */
  void readInto(final int n, final ByteSink sink, final long deadlineNs) throws ServerException {
    while (replies.relaying() && replies.available() < n) {
      // Relaying stops (the bytes go to the spill sink) if the reply fills the buffer.
      fill(deadlineNs);
    }
    if (replies.relaying()) {
      replies.consume(n);
      return;
    }
    int left = n;
    while (left > 0) {
      if (replies.available() == 0) {
        fill(deadlineNs);
      }
      final int k = Math.min(left, replies.available());
      replies.copyTo(k, sink);
      left -= k;
    }
  }

  /** Reads more bytes after the unread ones, compacting or growing the buffer. */
  private void fill(final long deadlineNs) throws ServerException {
    if (!replies.makeRoom()) {
      throw fail("reply line too long");
    }
    arm(deadlineNs);
    final int n;
    try {
      n = replies.readFrom(socket);
    } catch (IOException e) {
      throw ioFailed(deadlineNs, "read", e);
    }
    disarmOrTimeout(deadlineNs);
    if (n < 0) {
      throw fail("connection closed by server");
    }
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
