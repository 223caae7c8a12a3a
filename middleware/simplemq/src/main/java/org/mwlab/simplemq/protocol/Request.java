package org.mwlab.simplemq.protocol;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * A request of SimpleMQ's wire protocol (see the module's README for its bytes). After the
 * request id and the operation code come its fields: most requests' are i32 ids, in the order
 * {@link #ints} gives them; a send adds its timestamp and body, and an ack or nack has one i64
 * message id instead.
 */
public sealed interface Request {

  /** The id the client chose; its reply carries it back. */
  int requestId();

  Op op();

  /** The request's i32 fields, in wire order. */
  int[] ints();

  /** Bytes of the fields after the header. */
  default int fieldBytes() {
    return 4 * ints().length;
  }

  default void writeFields(final ByteBuffer b) {
    for (final int v : ints()) {
      b.putInt(v);
    }
  }

  record CreateClient(int requestId, int client) implements Request {
    @Override
    public Op op() {
      return Op.CREATE_CLIENT;
    }

    @Override
    public int[] ints() {
      return new int[] {client};
    }
  }

  record DeleteClient(int requestId, int client) implements Request {
    @Override
    public Op op() {
      return Op.DELETE_CLIENT;
    }

    @Override
    public int[] ints() {
      return new int[] {client};
    }
  }

  record CreateQueue(int requestId) implements Request {
    @Override
    public Op op() {
      return Op.CREATE_QUEUE;
    }

    @Override
    public int[] ints() {
      return new int[0];
    }
  }

  record DeleteQueue(int requestId, int queue) implements Request {
    @Override
    public Op op() {
      return Op.DELETE_QUEUE;
    }

    @Override
    public int[] ints() {
      return new int[] {queue};
    }
  }

  /** A request that stores a message: a plain send, or one with a key (idempotent). */
  sealed interface Sending extends Request permits Send, SendOnce {
    int sender();

    int receiver();

    int queue();

    long sentAtMicros();

    byte[] body();
  }

  /** Send to a queue, for one receiver; {@code body} is ASCII. */
  record Send(int requestId, int sender, int receiver, int queue, long sentAtMicros, byte[] body)
      implements Sending {
    /** The same send, named by {@code key}: stored once however often it is sent. */
    public SendOnce once(final long key) {
      return new SendOnce(requestId, sender, receiver, queue, sentAtMicros, key, body);
    }

    @Override
    public Op op() {
      return Op.SEND;
    }

    @Override
    public int[] ints() {
      return new int[] {sender, receiver, queue};
    }

    @Override
    public int fieldBytes() {
      return 4 * 3 + 8 + 4 + body.length;
    }

    @Override
    public void writeFields(final ByteBuffer b) {
      Sending.super.writeFields(b);
      b.putLong(sentAtMicros).putInt(body.length).put(body);
    }
  }

  /**
   * A send whose {@code key} (unique per sender) makes it idempotent: sent again, it stores
   * nothing and answers the first send's message id.
   */
  record SendOnce(int requestId, int sender, int receiver, int queue, long sentAtMicros,
      long key, byte[] body) implements Sending {
    @Override
    public Op op() {
      return Op.SEND_ONCE;
    }

    @Override
    public int[] ints() {
      return new int[] {sender, receiver, queue};
    }

    @Override
    public int fieldBytes() {
      return 4 * 3 + 8 + 8 + 4 + body.length;
    }

    @Override
    public void writeFields(final ByteBuffer b) {
      Sending.super.writeFields(b);
      b.putLong(sentAtMicros).putLong(key).putInt(body.length).put(body);
    }

    /** The same send under a new request id, for a retry on another connection. */
    public SendOnce retry(final int newRequestId) {
      return new SendOnce(newRequestId, sender, receiver, queue, sentAtMicros, key, body);
    }
  }

  /** Several messages from one sender to one receiver, stored in one transaction, in order. */
  record SendBatch(int requestId, int sender, int receiver, int queue, long sentAtMicros,
      List<byte[]> bodies) implements Request {
    public SendBatch {
      bodies = List.copyOf(bodies);
    }

    @Override
    public Op op() {
      return Op.SEND_BATCH;
    }

    @Override
    public int[] ints() {
      return new int[] {sender, receiver, queue};
    }

    @Override
    public int fieldBytes() {
      return 4 * 3 + 8 + 2 + bodies.stream().mapToInt(b -> 4 + b.length).sum();
    }

    @Override
    public void writeFields(final ByteBuffer b) {
      Request.super.writeFields(b);
      b.putLong(sentAtMicros).putShort((short) bodies.size());
      for (final byte[] body : bodies) {
        b.putInt(body.length).put(body);
      }
    }
  }

  /** Remove and return up to {@code max} of the oldest messages of a queue for a receiver. */
  record PopBatch(int requestId, int queue, int receiver, int max) implements Request {
    @Override
    public Op op() {
      return Op.POP_BATCH;
    }

    @Override
    public int[] ints() {
      return new int[] {queue, receiver, max};
    }
  }

  /** End the leases of several messages (the lease mode's ack, for a batch). */
  record AckBatch(int requestId, long[] messages) implements Request {
    @Override
    public Op op() {
      return Op.ACK_BATCH;
    }

    @Override
    public int[] ints() {
      return new int[0];
    }

    @Override
    public int fieldBytes() {
      return 2 + 8 * messages.length;
    }

    @Override
    public void writeFields(final ByteBuffer b) {
      b.putShort((short) messages.length);
      for (final long m : messages) {
        b.putLong(m);
      }
    }

    @Override
    public boolean equals(final Object o) {
      return o instanceof AckBatch a && a.requestId == requestId
          && java.util.Arrays.equals(a.messages, messages);
    }

    @Override
    public int hashCode() {
      return 31 * requestId + java.util.Arrays.hashCode(messages);
    }

    @Override
    public String toString() {
      return "AckBatch[" + requestId + ", " + java.util.Arrays.toString(messages) + "]";
    }
  }

  /**
   * A pop or read that, finding nothing, waits up to {@code waitMs} for a message of its queue
   * and receiver (woken by the database's notification, never polling) and then tries again.
   */
  sealed interface Waiting extends Request permits PopWait, ReadWait {
    int queue();

    int receiver();

    int waitMs();

    /** The same request without the wait: what runs each time it is tried. */
    Request now();
  }

  record PopWait(int requestId, int queue, int receiver, int waitMs) implements Waiting {
    @Override
    public Op op() {
      return Op.POP_WAIT;
    }

    @Override
    public int[] ints() {
      return new int[] {queue, receiver, waitMs};
    }

    @Override
    public Request now() {
      return new PopQueue(requestId, queue, receiver);
    }
  }

  record ReadWait(int requestId, int queue, int receiver, int visibilityMs, int max, int waitMs)
      implements Waiting {
    @Override
    public Op op() {
      return Op.READ_WAIT;
    }

    @Override
    public int[] ints() {
      return new int[] {queue, receiver, visibilityMs, max, waitMs};
    }

    @Override
    public Request now() {
      return new Read(requestId, queue, receiver, visibilityMs, max);
    }
  }

  /** How many messages a queue holds, by state, and how old its oldest visible one is. */
  record QueueMetrics(int requestId, int queue) implements Request {
    @Override
    public Op op() {
      return Op.QUEUE_METRICS;
    }

    @Override
    public int[] ints() {
      return new int[] {queue};
    }
  }

  /** Read the oldest message of a queue for a receiver, and leave it. */
  record PeekQueue(int requestId, int queue, int receiver) implements Request {
    @Override
    public Op op() {
      return Op.PEEK_QUEUE;
    }

    @Override
    public int[] ints() {
      return new int[] {queue, receiver};
    }
  }

  /** Remove and return the oldest message of a queue for a receiver. */
  record PopQueue(int requestId, int queue, int receiver) implements Request {
    @Override
    public Op op() {
      return Op.POP_QUEUE;
    }

    @Override
    public int[] ints() {
      return new int[] {queue, receiver};
    }
  }

  /** Remove and return the oldest message from one sender for a receiver. */
  record PopFromSender(int requestId, int sender, int receiver) implements Request {
    @Override
    public Op op() {
      return Op.POP_FROM_SENDER;
    }

    @Override
    public int[] ints() {
      return new int[] {sender, receiver};
    }
  }

  /** The queues that hold messages for {@code client}. */
  record QueryQueues(int requestId, int client) implements Request {
    @Override
    public Op op() {
      return Op.QUERY_QUEUES;
    }

    @Override
    public int[] ints() {
      return new int[] {client};
    }
  }

  /**
   * Lease up to {@code max} visible messages of a queue for a receiver, each hidden for
   * {@code visibilityMs} milliseconds (the lease mode).
   */
  record Read(int requestId, int queue, int receiver, int visibilityMs, int max)
      implements Request {
    @Override
    public Op op() {
      return Op.READ;
    }

    @Override
    public int[] ints() {
      return new int[] {queue, receiver, visibilityMs, max};
    }
  }

  /** A request naming one leased message by its i64 id: an ack or a nack. */
  sealed interface ByMessage extends Request {
    long message();

    @Override
    default int[] ints() {
      return new int[0];
    }

    @Override
    default int fieldBytes() {
      return 8;
    }

    @Override
    default void writeFields(final ByteBuffer b) {
      b.putLong(message());
    }
  }

  /** Delete a leased message: its processing is done. */
  record Ack(int requestId, long message) implements ByMessage {
    @Override
    public Op op() {
      return Op.ACK;
    }
  }

  /** Give a leased message back: visible again at once. */
  record Nack(int requestId, long message) implements ByMessage {
    @Override
    public Op op() {
      return Op.NACK;
    }
  }
}
