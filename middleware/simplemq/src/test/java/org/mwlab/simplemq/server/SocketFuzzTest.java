package org.mwlab.simplemq.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.SilentCloseable;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.mwlab.simplemq.protocol.Codec;
import org.mwlab.simplemq.protocol.FrameReader;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;
import org.mwlab.simplemq.protocol.Status;

/**
 * Fuzz test of the middleware's socket handling: the {@link Distributor} on a real loopback
 * socket, driven by a script of client actions on up to three connections (open, raw bytes,
 * pipelined frames, oversized lengths, reads, half-closes, resets) while its worker is held or
 * serving. The workers' database is the one part left out: a stand-in answers each request
 * with a reply whose size follows its request id, so that the output limit is met. Without
 * {@code JAZZER_FUZZ} it replays the inputs in
 * {@code src/test/resources/org/mwlab/simplemq/server/SocketFuzzTestInputs/socket/}.
 *
 * <p>Checked, against the frame decoder (which {@code FrameFuzzTest} checks) run over the same
 * bytes: a connection the client keeps open gets exactly one reply per frame it sent, in order,
 * with the frame's request id and status; one the client half-closed got a prefix of them;
 * the distributor thread never fails; and a new connection is served at the end.
 *
 * <p>Input layout: a sequence of actions, each one byte (bits 0-2 the action, bits 3-4 the
 * connection) and its arguments: 0 open; 1 raw bytes (a length byte, then that many bytes); 2 a
 * valid frame (a byte choosing its kind and size); 3 an oversized frame (a byte for its excess
 * length); 4 read what has arrived; 5 half-close and read to the end (releasing the worker); 6 reset; 7 hold or
 * release the worker.
 */
class SocketFuzzTest {

  private static final int MAX_FRAME = 256;
  private static final int MAX_BODY = 128;
  private static final int CONNECTIONS = 3;
  /** Opens per input: with the final probe, always under the cap, however late closes land. */
  private static final int MAX_OPENS = 6;
  private static final Limits LIMITS = new Limits(8, 4, 512, 0);
  private static final long PATIENCE_NS = TimeUnit.SECONDS.toNanos(60);
  /**
   * Bytes one connection sends at most: the socket buffers hold them all, so a script that
   * holds the worker and writes on does not wait for a middleware that rightly stopped reading.
   */
  private static final int MAX_SENT = 16 * 1024;

  /** What one request's reply is expected to say. */
  private record Answer(int requestId, Status status) {}

  @FuzzTest(maxDuration = "2m")
  void socket(final byte[] input) throws Exception {
    // Jazzer reports any connection as a forgery; these go to the middleware on loopback only.
    final SilentCloseable loopback =
        BugDetectors.allowNetworkConnections(
            (host, port) -> "127.0.0.1".equals(host) || "localhost".equals(host));
    try {
      run(input);
    } finally {
      loopback.close();
    }
  }

  private static void run(final byte[] input) throws Exception {
    final Stats stats = new Stats(1, null);
    final Dispatch dispatch = new Dispatch.Grouped(1);
    final Distributor distributor = new Distributor(new InetSocketAddress("127.0.0.1", 0),
        dispatch, MAX_FRAME, MAX_BODY, LIMITS, stats);
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    final Thread loop = new Thread(distributor, "distributor");
    loop.setUncaughtExceptionHandler((t, e) -> failure.set(e));
    final StandIn standIn = new StandIn(dispatch, distributor);
    final Thread worker = new Thread(standIn, "stand-in");
    loop.start();
    worker.start();
    final InetSocketAddress address = distributor.address();
    final Client[] clients = new Client[CONNECTIONS];
    try {
      int opens = 0;
      int nextId = 1;
      for (int at = 0; at < input.length; ) {
        final int action = input[at] & 7;
        final int slot = ((input[at] >> 3) & 3) % CONNECTIONS;
        at++;
        final Client c = clients[slot];
        switch (action) {
          case 0 -> {
            if (c == null && opens < MAX_OPENS) {
              clients[slot] = new Client(address);
              opens++;
            }
          }
          case 1 -> {
            final int n = at < input.length ? 1 + (input[at++] & 0xff) : 0;
            final int end = Math.min(input.length, at + n);
            if (c != null) {
              c.write(java.util.Arrays.copyOfRange(input, at, end));
            }
            at = end;
          }
          case 2 -> {
            final int k = at < input.length ? input[at++] & 0xff : 0;
            if (c != null) {
              c.write(Codec.frame(request(nextId++, k)));
            }
          }
          case 3 -> {
            final int k = at < input.length ? input[at++] & 0xff : 0;
            if (c != null) {
              c.write(oversized(nextId++, MAX_FRAME + 1 + k));
            }
          }
          case 4 -> {
            if (c != null) {
              c.read(false);
            }
          }
          case 5 -> {
            if (c != null) {
              // A held worker keeps a connection's queue full and its reading paused, rightly
              // forever: the end of stream is read once the worker goes on.
              standIn.hold(false);
              c.halfCloseAndDrain();
              c.assertPrefix();
              c.close();
              clients[slot] = null;
            }
          }
          case 6 -> {
            if (c != null) {
              c.reset();
              clients[slot] = null;
            }
          }
          default -> standIn.hold(!standIn.holding());
        }
      }
      standIn.hold(false);
      for (final Client c : clients) {
        if (c != null) {
          c.awaitAll();
          assertEquals(c.expected(), c.received, "a kept connection's replies");
        }
      }
      try (Client probe = new Client(address)) {
        probe.write(Codec.frame(new Request.PopQueue(0x5e17, 1, 1)));
        probe.awaitAll();
        assertEquals(List.of(new Answer(0x5e17, Status.OK)), probe.received,
            "a new connection after the script");
      }
    } finally {
      for (final Client c : clients) {
        if (c != null) {
          c.close();
        }
      }
      standIn.hold(false);
      distributor.drain();
      loop.join(TimeUnit.NANOSECONDS.toMillis(PATIENCE_NS));
      dispatch.stop(null, 0);
      worker.join(TimeUnit.NANOSECONDS.toMillis(PATIENCE_NS));
    }
    assertNull(failure.get(), "the distributor thread failed");
    assertTrue(!loop.isAlive(), "the distributor did not end after its drain");
  }

  /** A valid request of a kind and size chosen by {@code k}; some are over the body limit. */
  private static Request request(final int id, final int k) {
    return switch (k % 3) {
      case 0 -> new Request.PopQueue(id, 1 + k % 5, 1);
      case 1 -> new Request.Send(id, 1, 2, 3, 0, "x".repeat(k).getBytes());
      default -> new Request.Read(id, 1, 1, 1000, 1 + k % 16);
    };
  }

  /** A frame declaring {@code length} bytes, all of them sent (the reader skips them). */
  private static byte[] oversized(final int id, final int length) {
    return ByteBuffer.allocate(4 + length).putInt(length).putInt(id).array();
  }

  /** The database left out: answers each request, with a reply of 4 + 4 (id % 64) bytes. */
  private static final class StandIn implements Runnable {
    private final Dispatch dispatch;
    private final Distributor distributor;
    private boolean held;

    StandIn(final Dispatch dispatch, final Distributor distributor) {
      this.dispatch = dispatch;
      this.distributor = distributor;
    }

    synchronized void hold(final boolean on) {
      held = on;
      notifyAll();
    }

    synchronized boolean holding() {
      return held;
    }

    private synchronized void awaitRelease() throws InterruptedException {
      while (held) {
        wait();
      }
    }

    @Override
    public void run() {
      try {
        for (List<Worker.Job> jobs; !(jobs = dispatch.next(null)).isEmpty(); ) {
          awaitRelease();
          for (final Worker.Job job : jobs) {
            final int id = job.task().request().requestId();
            final ClientConnection.Delivery d =
                job.connection().send(Codec.frame(new Reply.Queues(id, new int[id & 63])));
            distributor.finished(job.connection(), d == ClientConnection.Delivery.PENDING);
          }
        }
      } catch (final InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** One client connection: what it sent, and the replies it read. */
  private static final class Client implements AutoCloseable {
    private final SocketChannel channel;
    private final java.io.ByteArrayOutputStream sent = new java.io.ByteArrayOutputStream();
    private final List<Answer> received = new ArrayList<>();
    private final FrameReader replies = new FrameReader(64 * 1024);
    private final ByteBuffer in = ByteBuffer.allocate(8 * 1024);
    private boolean ended;

    Client(final InetSocketAddress address) throws IOException {
      channel = SocketChannel.open();
      // A small window, so that replies left unread reach the middleware's output limit.
      channel.setOption(StandardSocketOptions.SO_RCVBUF, 1024);
      channel.connect(address);
      channel.configureBlocking(false);
    }

    /** Writes all of it, reading replies whenever the socket takes no more. */
    void write(final byte[] bytes) throws IOException {
      if (sent.size() + bytes.length > MAX_SENT) {
        return;
      }
      sent.write(bytes, 0, bytes.length);
      final ByteBuffer b = ByteBuffer.wrap(bytes);
      final long deadline = System.nanoTime() + PATIENCE_NS;
      while (b.hasRemaining()) {
        if (channel.write(b) == 0) {
          read(false);
          assertTrue(System.nanoTime() - deadline < 0, "the middleware stopped reading");
          Thread.onSpinWait();
        }
      }
    }

    /** Reads what has arrived; with {@code untilEnd}, until the middleware closes. */
    void read(final boolean untilEnd) throws IOException {
      final long deadline = System.nanoTime() + PATIENCE_NS;
      while (!ended) {
        in.clear();
        final int n = channel.read(in);
        if (n < 0) {
          ended = true;
          break;
        }
        in.flip();
        for (FrameReader.Event e; (e = replies.next(in)) != null; ) {
          final Reply r = Codec.reply(((FrameReader.Frame) e).body());
          received.add(new Answer(r.requestId(), r.status()));
        }
        if (n == 0) {
          if (!untilEnd) {
            return;
          }
          assertTrue(System.nanoTime() - deadline < 0, "the middleware never closed");
          Thread.onSpinWait();
        }
      }
    }

    /** Reads until every frame sent is answered. */
    void awaitAll() throws IOException {
      final int want = expected().size();
      final long deadline = System.nanoTime() + PATIENCE_NS;
      while (received.size() < want && !ended) {
        read(false);
        assertTrue(System.nanoTime() - deadline < 0,
            "only " + received.size() + " of " + want + " replies came: " + received + " of "
                + expected());
        Thread.onSpinWait();
      }
    }

    void halfCloseAndDrain() throws IOException {
      channel.shutdownOutput();
      read(true);
    }

    /** Once the client half-closed, the middleware drops what it had not answered. */
    void assertPrefix() {
      final List<Answer> all = expected();
      assertTrue(received.size() <= all.size() && all.subList(0, received.size())
          .equals(received), "replies " + received + " are not a prefix of " + all);
    }

    /** Every whole frame sent, with the answer it is owed, as the decoder sees them. */
    List<Answer> expected() {
      final FrameReader reader = new FrameReader(MAX_FRAME);
      final ByteBuffer stream = ByteBuffer.wrap(sent.toByteArray());
      final List<Answer> out = new ArrayList<>();
      for (FrameReader.Event e; (e = reader.next(stream)) != null; ) {
        if (e instanceof FrameReader.Oversized o) {
          out.add(new Answer(o.requestId(), Status.FRAME_TOO_LARGE));
          continue;
        }
        final Codec.Decoded d = Codec.request(((FrameReader.Frame) e).body(), MAX_BODY);
        out.add(d instanceof Codec.Valid v ? new Answer(v.request().requestId(), Status.OK)
            : new Answer(((Codec.Invalid) d).reply().requestId(),
                ((Codec.Invalid) d).reply().status()));
      }
      return out;
    }

    /** An abortive close: the middleware sees a reset, perhaps mid-frame. */
    void reset() throws IOException {
      channel.setOption(StandardSocketOptions.SO_LINGER, 0);
      channel.close();
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }
}
