package org.mwlab.loadgen;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/** One virtual client: a connection that sends a request and waits for its reply (closed loop). */
final class Connection {

  private static final byte[] CRLF = {'\r', '\n'};
  private static final int READ_BUFFER = 64 * 1024;

  private final Config config;
  private final SocketChannel channel;
  private final KeySource setKeys;
  private final KeySource getKeys;
  private final SplittableRandom random;
  private final ByteBuffer value;
  private final ByteBuffer header;
  private final ByteBuffer[] setOut;
  private final ByteBuffer[] getOut;
  private ByteBuffer[] out;
  private ByteBuffer in = ByteBuffer.allocate(READ_BUFFER);
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
  private int hits;
  private boolean error;
  private int skip;

  Connection(
      final Config config,
      final SocketChannel channel,
      final ByteBuffer sharedValue,
      final KeySource setKeys,
      final KeySource getKeys,
      final SplittableRandom random)
      throws IOException {
    this.config = config;
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
    hits = 0;
    error = false;
    skip = 0;
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
    header.put(s.getBytes(StandardCharsets.US_ASCII));
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
    final int n = channel.read(in);
    if (n < 0) {
      throw new IOException("server closed the connection");
    }
    responseBytes += n;
    in.flip();
    final boolean done = parse();
    in.compact();
    if (!done && in.position() == in.capacity()) {
      // A reply line longer than the buffer: grow it rather than stall.
      final ByteBuffer bigger = ByteBuffer.allocate(in.capacity() * 2);
      in.flip();
      bigger.put(in);
      in = bigger;
    }
    return done;
  }

  private boolean parse() {
    final byte[] a = in.array();
    int pos = in.position();
    final int lim = in.limit();
    boolean done = false;
    while (pos < lim && !done) {
      if (skip > 0) {
        final int k = Math.min(skip, lim - pos);
        pos += k;
        skip -= k;
        continue;
      }
      int nl = -1;
      for (int i = pos; i < lim; i++) {
        if (a[i] == '\n') {
          nl = i;
          break;
        }
      }
      if (nl < 0) {
        break;
      }
      int end = nl;
      if (end > pos && a[end - 1] == '\r') {
        end--;
      }
      done = line(a, pos, end);
      pos = nl + 1;
    }
    in.position(pos);
    if (done) {
      awaiting = false;
      if (pos < lim) {
        // Bytes after a complete reply mean the stream is out of step with the requests.
        error = true;
        in.position(lim);
      }
    }
    return done;
  }

  private boolean line(final byte[] a, final int from, final int to) {
    if (type == OpType.SET) {
      error = !startsWith(a, from, to, "STORED") || to - from != 6;
      return true;
    }
    if (startsWith(a, from, to, "VALUE ")) {
      int i = to - 1;
      while (i > from && a[i] != ' ') {
        i--;
      }
      int length = 0;
      for (int j = i + 1; j < to; j++) {
        length = length * 10 + (a[j] - '0');
      }
      skip = length + 2;
      hits++;
      return false;
    }
    if (!startsWith(a, from, to, "END")) {
      error = true;
    }
    return true;
  }

  private static boolean startsWith(final byte[] a, final int from, final int to, final String p) {
    if (to - from < p.length()) {
      return false;
    }
    for (int i = 0; i < p.length(); i++) {
      if (a[from + i] != p.charAt(i)) {
        return false;
      }
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
    return hits;
  }

  boolean error() {
    return error;
  }

  void close() {
    try {
      channel.close();
    } catch (IOException ignored) {
      // Closing at the end of the run; nothing left to lose.
    }
  }
}
