package org.mwlab.loadgen;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;
import org.mwlab.common.Ascii;

/** One virtual client: a connection that sends a request and waits for its reply (closed loop). */
final class Connection {

  private static final byte[] CRLF = {'\r', '\n'};
  private static final int READ_BUFFER = 64 * 1024;
  /** Far above any reply line memcached or the middleware sends. */
  private static final int MAX_READ_BUFFER = 1024 * 1024;

  private final Config config;
  /** Position among its thread's connections; a step activates the first ones. */
  private final int slot;
  private final SocketChannel channel;
  private final KeySource setKeys;
  private final KeySource getKeys;
  private final SplittableRandom random;
  private final ByteBuffer value;
  private final ByteBuffer header;
  private final ByteBuffer[] setOut;
  private final ByteBuffer[] getOut;
  private ByteBuffer[] out;
  private final ReplyReader replies = new ReplyReader(READ_BUFFER, MAX_READ_BUFFER);
  private SelectionKey key;

  private long remaining;
  private int setsInCycle;
  private int getsInCycle;

  private boolean awaiting;
  private OpType type = OpType.SET;
  private long sentNanos;
  private long requestBytes;
  private long responseBytes;
  private int keysRequested;

  Connection(
      final Config config,
      final int slot,
      final SocketChannel channel,
      final ByteBuffer sharedValue,
      final KeySource setKeys,
      final KeySource getKeys,
      final SplittableRandom random)
      throws IOException {
    this.config = config;
    this.slot = slot;
    this.channel = channel;
    this.setKeys = setKeys;
    this.getKeys = getKeys;
    this.random = random;
    this.value = sharedValue.duplicate();
    final int keyLength = config.keyPrefix().length() + 20;
    this.header = ByteBuffer.allocate(64 + Math.max(1, config.multiKeyGet()) * (keyLength + 1));
    this.setOut = new ByteBuffer[] {header, value};
    this.getOut = new ByteBuffer[] {header};
    this.remaining = config.byRequests() ? config.requests() : Long.MAX_VALUE;
    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
    channel.configureBlocking(false);
  }

  void register(final Selector selector) throws IOException {
    key = channel.register(selector, SelectionKey.OP_READ, this);
  }

  int slot() {
    return slot;
  }

  boolean awaiting() {
    return awaiting;
  }

  boolean hasRequestsLeft() {
    return remaining > 0;
  }

  /** Builds and sends the next request of the S:G cycle. */
  void sendNext() throws IOException {
    final Ratio ratio = config.ratio();
    if (setsInCycle >= ratio.sets() && getsInCycle >= ratio.gets()) {
      setsInCycle = 0;
      getsInCycle = 0;
    }
    header.clear();
    if (setsInCycle < ratio.sets()) {
      setsInCycle++;
      buildSet();
    } else {
      int n = 1;
      if (config.multiKeyGet() > 0) {
        n = Math.min(config.multiKeyGet(), ratio.gets() - getsInCycle);
      }
      getsInCycle += n;
      buildGet(n);
    }
    header.flip();
    remaining--;
    awaiting = true;
    replies.expect(type, keysRequested);
    responseBytes = 0;
    sentNanos = System.nanoTime();
    write();
  }

  private void buildSet() {
    type = OpType.SET;
    keysRequested = 1;
    final int expiry =
        config.expiryMax() == 0
            ? 0
            : config.expiryMin() + random.nextInt(config.expiryMax() - config.expiryMin() + 1);
    put("set ");
    putKey(setKeys.next());
    put(" 0 " + expiry + " " + config.dataSize());
    header.put(CRLF);
    value.clear();
    out = setOut;
    requestBytes = header.position() + value.remaining();
  }

  private void buildGet(final int n) {
    type = OpType.GET;
    keysRequested = n;
    put("get");
    for (int i = 0; i < n; i++) {
      header.put((byte) ' ');
      putKey(getKeys.next());
    }
    header.put(CRLF);
    out = getOut;
    requestBytes = header.position();
  }

  private void put(final String s) {
    header.put(Ascii.bytes(s));
  }

  private void putKey(final long k) {
    put(config.keyPrefix());
    put(Long.toString(k));
  }

  void write() throws IOException {
    channel.write(out);
    final boolean pending = out[out.length - 1].hasRemaining();
    key.interestOps(pending ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
  }

  /**
   * Reads what the server sent; returns true when the reply to the outstanding request is
   * complete.
   */
  boolean read() throws IOException {
    final int n = channel.read(replies.buffer());
    if (n < 0) {
      throw new IOException("server closed the connection");
    }
    responseBytes += n;
    final ReplyReader.Status status = replies.parse();
    if (status == ReplyReader.Status.LINE_TOO_LONG) {
      throw new IOException("reply line longer than " + MAX_READ_BUFFER + " bytes");
    }
    if (status != ReplyReader.Status.COMPLETE) {
      return false;
    }
    awaiting = false;
    if (replies.unread() > 0) {
      // Bytes after a complete reply mean the stream is out of step with the requests.
      replies.dropUnread();
    }
    return true;
  }

  OpType type() {
    return type;
  }

  long sentNanos() {
    return sentNanos;
  }

  long bytes() {
    return requestBytes + responseBytes;
  }

  int keysRequested() {
    return keysRequested;
  }

  int hits() {
    return replies.hits();
  }

  boolean error() {
    return replies.error();
  }

  void close() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // Closing at the end of the run; nothing left to lose.
    }
  }
}
