package org.mwlab.simplemq.client;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.mwlab.common.load.RunClock;
import org.mwlab.common.load.StartGate;
import org.mwlab.common.load.TypeStats;
import org.mwlab.simplemq.protocol.LeasedMessage;
import org.mwlab.simplemq.protocol.Message;
import org.mwlab.simplemq.protocol.Op;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;
import org.mwlab.simplemq.protocol.Status;

/**
 * Closed-loop SimpleMQ clients, one thread each. Every client registers its id first; then all
 * wait at the start barrier (and the start gate, across processes), so that no send names a
 * receiver not yet registered. Each reply is checked against its request: a wrong id, receiver,
 * queue or body is a mismatch, counted and left out of the statistics.
 */
public final class ClientRun {

  /** How the clients run. */
  public record Config(
      List<Endpoint> targets,
      int firstClient,
      int clients,
      Workload workload,
      int bodySize,
      long durationMs,
      long messagesPerClient,
      long thinkMs,
      int windowMs,
      boolean register,
      StartGate gate,
      Path messageLog,
      int primeRounds,
      boolean idempotentSend) {}

  /** A middleware's address, or the database (JDBC URL) for the baseline. */
  public sealed interface Endpoint {}

  public record Middleware(java.net.InetSocketAddress address) implements Endpoint {}

  public record Database(String url) implements Endpoint {}

  /** One client's counters, merged at the end. */
  static final class Counts {
    final Map<Op, TypeStats> stats = new EnumMap<>(Op.class);
    final Map<Op, long[]> byStatus = new EnumMap<>(Op.class);
    long mismatches;
    long connectionLosses;
    /** Idempotent sends sent again after their connection broke before the reply. */
    long resent;
    /** Requests whose connection broke before their reply: their outcome is unknown. */
    final Map<Op, Long> unanswered = new EnumMap<>(Op.class);
    final List<String> sent = new ArrayList<>();
    final List<String> popped = new ArrayList<>();
    /** The lease mode's: every message a read delivered, with its delivery count. */
    final List<String> delivered = new ArrayList<>();
    /** The lease mode's: every ack sent, with its outcome (ok, not_leased, unanswered). */
    final List<String> acked = new ArrayList<>();
    /**
     * Send to delivery, µs: from the message's sent_at (the sender's clock as it sent) to the
     * reply that delivered it to a client (a pop's, or a read's first delivery).
     */
    final org.HdrHistogram.Histogram delivery = TypeStats.newHistogram();

    void delivered(final Message m) {
      final long us = Workload.nowMicros() - m.sentAtMicros();
      delivery.recordValue(Math.max(0, Math.min(us, TypeStats.HIGHEST_US)));
    }

    TypeStats of(final Op op) {
      return stats.computeIfAbsent(op, o -> new TypeStats());
    }

    void status(final Op op, final Status s) {
      byStatus.computeIfAbsent(op, o -> new long[32])[s.code]++;
    }
  }

  private final Config config;
  private final RunClock clock = new RunClock();

  public ClientRun(final Config config) {
    this.config = config;
  }

  public RunClock clock() {
    return clock;
  }

  /** Runs every client to its end; returns their merged counts. */
  Counts run() throws InterruptedException, IOException {
    final int n = config.clients();
    final CountDownLatch registered = new CountDownLatch(n);
    final CountDownLatch start = new CountDownLatch(1);
    final AtomicReference<String> failure = new AtomicReference<>();
    final List<Counts> counts = new ArrayList<>();
    final List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      final Counts c = new Counts();
      counts.add(c);
      final int client = config.firstClient() + i;
      final int index = i;
      final Thread t =
          new Thread(
              () -> {
                try {
                  runClient(client, index, c, registered, start);
                } catch (final IOException e) {
                  failure.compareAndSet(null, "client " + client + ": " + e.getMessage());
                  registered.countDown();
                } catch (final InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "client-" + client);
      threads.add(t);
      t.start();
    }
    registered.await();
    if (failure.get() != null) {
      start.countDown();
      for (final Thread t : threads) {
        t.interrupt();
      }
      throw new IOException(failure.get());
    }
    if (config.gate() != null) {
      final String why = config.gate().pass();
      if (why != null) {
        throw new IOException(why);
      }
    }
    clock.start();
    start.countDown();
    for (final Thread t : threads) {
      t.join();
    }
    if (failure.get() != null) {
      throw new IOException(failure.get());
    }
    final Counts all = new Counts();
    for (final Counts c : counts) {
      for (final Map.Entry<Op, TypeStats> e : c.stats.entrySet()) {
        all.of(e.getKey()).add(e.getValue(), 0);
      }
      for (final Map.Entry<Op, long[]> e : c.byStatus.entrySet()) {
        final long[] to = all.byStatus.computeIfAbsent(e.getKey(), o -> new long[32]);
        for (int s = 0; s < 32; s++) {
          to[s] += e.getValue()[s];
        }
      }
      all.mismatches += c.mismatches;
      all.connectionLosses += c.connectionLosses;
      all.resent += c.resent;
      c.unanswered.forEach((op, k) -> all.unanswered.merge(op, k, Long::sum));
      all.sent.addAll(c.sent);
      all.popped.addAll(c.popped);
      all.delivered.addAll(c.delivered);
      all.acked.addAll(c.acked);
      all.delivery.add(c.delivery);
    }
    if (config.messageLog() != null) {
      final String columns = "sender\tsequence\tmessage_id";
      writeLog(config.messageLog().resolve("sent.tsv"), columns, all.sent);
      writeLog(config.messageLog().resolve("popped.tsv"), columns, all.popped);
      if (config.workload() instanceof Workload.Lease) {
        writeLog(config.messageLog().resolve("delivered.tsv"), columns + "\tdeliveries",
            all.delivered);
        writeLog(config.messageLog().resolve("acked.tsv"), columns + "\tstatus", all.acked);
      }
    }
    return all;
  }

  private static void writeLog(final Path file, final String columns, final List<String> lines)
      throws IOException {
    Files.createDirectories(file.getParent());
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
      w.write(columns);
      w.write('\n');
      for (final String line : lines) {
        w.write(line);
        w.write('\n');
      }
    }
  }

  private Transport connect(final int index, final int attempt) throws IOException {
    final List<Endpoint> targets = config.targets();
    final Endpoint e = targets.get((index + attempt) % targets.size());
    if (e instanceof Middleware m) {
      return new SocketTransport(m.address(), 1 << 20);
    }
    try {
      return new DatabaseTransport(((Database) e).url());
    } catch (final java.sql.SQLException ex) {
      throw new IOException("cannot connect to the database: " + ex.getMessage(), ex);
    }
  }

  /**
   * Unmeasured rounds of send, peek and pop on a queue of the client's own, before the start:
   * a database connection's first calls compile and plan the procedures (and pgjdbc prepares
   * a statement on the server from its fifth execution), which under a CPU budget of a tenth
   * of a core took the first 16 s of a run at 80 clients. The queue is deleted afterwards, so
   * the run's queues hold no trace of it. Returns the next request id.
   */
  private int prime(final Transport t, final int client, final int firstRequestId)
      throws IOException {
    int requestId = firstRequestId;
    if (config.primeRounds() == 0) {
      return requestId;
    }
    final Reply created = t.call(new Request.CreateQueue(requestId++));
    if (!(created instanceof Reply.Created q)) {
      throw new IOException("client " + client + ": cannot create its priming queue: " + created);
    }
    final int queue = Math.toIntExact(q.id());
    // A body as the workload writes one: text, which the database stores as such.
    final byte[] body = Workload.body(client, 0, config.bodySize());
    for (int round = 0; round < config.primeRounds(); round++) {
      final Reply[] replies = {
        t.call(new Request.Send(requestId++, client, client, queue, 0L, body)),
        t.call(new Request.PeekQueue(requestId++, queue, client)),
        t.call(new Request.PopQueue(requestId++, queue, client)),
      };
      for (final Reply r : replies) {
        if (r instanceof Reply.Failure f) {
          throw new IOException("client " + client + ": priming failed: " + f.text());
        }
      }
    }
    final Reply deleted = t.call(new Request.DeleteQueue(requestId++, queue));
    if (deleted instanceof Reply.Failure f) {
      throw new IOException("client " + client + ": cannot delete its priming queue: " + f.text());
    }
    return requestId;
  }

  private void runClient(
      final int client,
      final int index,
      final Counts c,
      final CountDownLatch registered,
      final CountDownLatch start)
      throws IOException, InterruptedException {
    int attempt = 0;
    Transport t = connect(index, attempt);
    int requestId = 1;
    try {
      if (config.register()) {
        final Reply r = t.call(new Request.CreateClient(requestId++, client));
        if (r instanceof Reply.Failure f) {
          throw new IOException("cannot register client " + client + ": " + f.text());
        }
      }
      requestId = prime(t, client, requestId);
      registered.countDown();
      start.await();
      if (config.workload() instanceof Workload.Lease lease) {
        final Link link = new Link(index, t);
        try {
          runLease(lease, client, link, c, requestId);
        } finally {
          t = link.transport;
        }
        return;
      }
      final long end = clock.startNanos() + config.durationMs() * 1_000_000L;
      long sequence = 0;
      for (long turn = 0; ; turn++) {
        final long now = System.nanoTime();
        if (config.durationMs() > 0 && now >= end) {
          break;
        }
        if (config.messagesPerClient() > 0 && sequence >= config.messagesPerClient()
            && config.workload().sends(turn)) {
          break;
        }
        Request req = once(config.workload().next(client, turn, requestId++, sequence),
            sequence);
        if (config.workload().sends(turn)) {
          sequence++;
        }
        long sentNs = System.nanoTime();
        Reply reply = null;
        for (int retries = 0; reply == null; retries++) {
          try {
            reply = t.call(req);
          } catch (final SocketTransport.Mismatch e) {
            c.mismatches++;
            t.close();
            t = connect(index, ++attempt);
            break;
          } catch (final IOException e) {
            // The middleware went away: this request's outcome is unknown (a pop may have
            // removed a message no client received). Go on with the next middleware, where an
            // idempotent send is sent again: it is stored once whether the first one was.
            c.connectionLosses++;
            t.close();
            t = reconnect(index, ++attempt);
            if (req instanceof Request.SendOnce s && retries < config.targets().size()) {
              c.resent++;
              req = s.retry(requestId++);
              sentNs = System.nanoTime();
              continue;
            }
            c.unanswered.merge(req.op(), 1L, Long::sum);
            break;
          }
        }
        if (reply == null) {
          continue;
        }
        final long latencyUs = (System.nanoTime() - sentNs) / 1000;
        record(client, req, reply, latencyUs, c, now);
        if (config.thinkMs() > 0) {
          Thread.sleep(config.thinkMs());
        }
      }
    } finally {
      t.close();
    }
  }

  /**
   * A client's connection that moves to the next middleware when it breaks, for the lease
   * mode's loop, where one turn can take several requests (a read, then an ack per message).
   */
  private final class Link {
    private final int index;
    private int attempt;
    private Transport transport;

    Link(final int index, final Transport transport) {
      this.index = index;
      this.transport = transport;
    }

    /**
     * The reply, or null when there was none: the connection broke before it (the request's
     * outcome is unknown) or it answered another request; the link then moved on.
     */
    Reply call(final Request req, final Counts c) throws IOException, InterruptedException {
      try {
        return transport.call(req);
      } catch (final SocketTransport.Mismatch e) {
        c.mismatches++;
        transport.close();
        transport = connect(index, ++attempt);
      } catch (final IOException e) {
        c.connectionLosses++;
        c.unanswered.merge(req.op(), 1L, Long::sum);
        transport.close();
        transport = reconnect(index, ++attempt);
      }
      return null;
    }
  }

  /**
   * The lease mode: send and read in turn, ack every message read; once the messages are sent
   * (or the time is up), read until the reads found nothing for the workload's drain time. A
   * read that went unanswered may have leased messages: they come back after their timeout,
   * so the quiet time counts again from the next read.
   */
  private void runLease(final Workload.Lease w, final int client, final Link link,
      final Counts c, final int firstRequestId) throws IOException, InterruptedException {
    int requestId = firstRequestId;
    final long end = clock.startNanos() + config.durationMs() * 1_000_000L;
    long sequence = 0;
    boolean draining = false;
    long quietSince = -1;
    for (long turn = 0; ; turn++) {
      final long now = System.nanoTime();
      draining = draining || config.durationMs() > 0 && now >= end
          || config.messagesPerClient() > 0 && sequence >= config.messagesPerClient();
      Request req;
      if (!draining && w.sends(turn)) {
        req = once(w.next(client, turn, requestId++, sequence), sequence);
        sequence++;
      } else if (!draining || !w.sends(turn)) {
        req = w.read(requestId++);
      } else {
        continue; // a drain reads only
      }
      long sentNs = System.nanoTime();
      Reply reply = link.call(req, c);
      for (int retries = 0; reply == null && req instanceof Request.SendOnce s
          && retries < config.targets().size(); retries++) {
        // Unanswered, perhaps stored: sent again, it is stored once either way.
        c.resent++;
        req = s.retry(requestId++);
        sentNs = System.nanoTime();
        reply = link.call(req, c);
      }
      if (reply == null) {
        quietSince = -1;
        continue;
      }
      record(client, req, reply, (System.nanoTime() - sentNs) / 1000, c, now);
      if (reply instanceof Reply.Leased leased) {
        quietSince = -1;
        requestId = ackAll((Request.Read) req, leased, link, c, requestId);
      } else if (req instanceof Request.Read && draining) {
        if (quietSince < 0) {
          quietSince = now;
        } else if (now - quietSince >= w.drainMs() * 1_000_000L) {
          return;
        }
        Thread.sleep(10); // nothing visible yet: poll, do not spin
      }
      if (config.thinkMs() > 0) {
        Thread.sleep(config.thinkMs());
      }
    }
  }

  /**
   * Acks every message of a read until some middleware answered, several in one ack_batch
   * where the read leased several; logs the deliveries and the acks' outcomes. Returns the next
   * request id.
   */
  private int ackAll(final Request.Read read, final Reply.Leased leased, final Link link,
      final Counts c, final int firstRequestId) throws IOException, InterruptedException {
    int requestId = firstRequestId;
    final Map<Long, String> keys = new LinkedHashMap<>();
    for (final LeasedMessage l : leased.messages()) {
      final Message m = l.message();
      final long[] tag = Workload.tag(m.body(), config.bodySize());
      if (m.queue() != read.queue() || m.receiver() != read.receiver() || tag == null
          || tag[0] != m.sender()) {
        c.mismatches++;
        continue;
      }
      final String key = tag[0] + "\t" + tag[1] + "\t" + m.id();
      c.delivered.add(key + "\t" + l.deliveries());
      if (l.deliveries() == 1) {
        c.delivered(m);
      }
      keys.put(m.id(), key);
    }
    // A retry after an unanswered ack answers NOT_LEASED (a batch leaves the id out) for what
    // the first one acked.
    for (int attempt = 0; attempt <= config.targets().size() && !keys.isEmpty(); attempt++) {
      final long[] ids = keys.keySet().stream().mapToLong(Long::longValue).toArray();
      final Request ack = ids.length == 1 ? new Request.Ack(requestId++, ids[0])
          : new Request.AckBatch(requestId++, ids);
      final long sentNs = System.nanoTime();
      final Reply r = link.call(ack, c);
      if (r == null) {
        keys.values().forEach(key -> c.acked.add(key + "\tunanswered"));
        continue;
      }
      record(read.receiver(), ack, r, (System.nanoTime() - sentNs) / 1000, c, sentNs);
      if (r instanceof Reply.Ids acked) {
        final java.util.Set<Long> done = java.util.Arrays.stream(acked.ids()).boxed()
            .collect(java.util.stream.Collectors.toSet());
        keys.forEach((id, key) -> c.acked.add(key + "\t" + (done.contains(id) ? "ok"
            : "not_leased")));
      } else {
        final String outcome = r.status().name().toLowerCase(java.util.Locale.ROOT);
        keys.values().forEach(key -> c.acked.add(key + "\t" + outcome));
      }
      keys.clear();
    }
    return requestId;
  }

  private Transport reconnect(final int index, final int attempt) throws IOException,
      InterruptedException {
    IOException last = null;
    for (int i = 0; i < 50; i++) {
      try {
        return connect(index, attempt + i);
      } catch (final IOException e) {
        last = e;
        Thread.sleep(100);
      }
    }
    throw last;
  }

  private void record(
      final int client,
      final Request req,
      final Reply reply,
      final long latencyUs,
      final Counts c,
      final long startedNs) {
    final Op op = req.op();
    c.status(op, reply.status());
    if (reply instanceof Reply.Delivered d && !matches(req, d.message())) {
      c.mismatches++;
      return;
    }
    if (reply.status() != Status.OK) {
      return; // empty pops and errors are counted by status, not timed
    }
    final int window = (int) Math.max(0, (startedNs - clock.startNanos()) / 1_000_000L
        / config.windowMs());
    final long bytes = req instanceof Request.Sending s ? s.body().length : 0;
    c.of(op).record(window, latencyUs, bytes, 0, 0, false);
    if (config.messageLog() != null) {
      if (req instanceof Request.Sending s && reply instanceof Reply.Created created) {
        final long[] tag = Workload.tag(s.body(), 0);
        c.sent.add(tag[0] + "\t" + tag[1] + "\t" + created.id());
      } else if (op != Op.PEEK_QUEUE && reply instanceof Reply.Delivered d) {
        c.delivered(d.message());
        final long[] tag = Workload.tag(d.message().body(), 0);
        c.popped.add(tag[0] + "\t" + tag[1] + "\t" + d.message().id());
      }
    }
  }

  /** Whether a delivered message is one this request could get, with a body a client wrote. */
  private boolean matches(final Request req, final Message m) {
    final boolean addressed;
    if (req instanceof Request.PopQueue p) {
      addressed = p.queue() == m.queue() && p.receiver() == m.receiver();
    } else if (req instanceof Request.PeekQueue p) {
      addressed = p.queue() == m.queue() && p.receiver() == m.receiver();
    } else if (req instanceof Request.PopFromSender p) {
      addressed = p.sender() == m.sender() && p.receiver() == m.receiver();
    } else {
      addressed = false;
    }
    final long[] tag = Workload.tag(m.body(), config.bodySize());
    return addressed && tag != null && tag[0] == m.sender();
  }

  /** A send as the run sends it: named by its sequence number where sends are idempotent. */
  private Request once(final Request req, final long sequence) {
    return config.idempotentSend() && req instanceof Request.Send s ? s.once(sequence) : req;
  }

  /** The run's configuration as the report records it. */
  Map<String, Object> describe() {
    final Map<String, Object> m = new LinkedHashMap<>();
    m.put("first_client", config.firstClient());
    m.put("clients", config.clients());
    m.put("workload", config.workload().getClass().getSimpleName());
    m.put("body_bytes", config.bodySize());
    m.put("duration_ms", config.durationMs());
    m.put("messages_per_client", config.messagesPerClient());
    m.put("think_ms", config.thinkMs());
    m.put("idempotent_send", config.idempotentSend());
    m.put("window_ms", config.windowMs());
    m.put("targets", config.targets().stream().map(Object::toString).toList());
    return m;
  }
}
