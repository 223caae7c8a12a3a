package org.mwlab.simplemq.protocol;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A reply of SimpleMQ's wire protocol (see the module's README for its bytes). Each kind writes
 * its own result after the request id and the status byte.
 */
public sealed interface Reply {

  /** Shapes of an OK reply's result: the byte after the status. */
  int SHAPE_NONE = 0;

  int SHAPE_ID = 1;
  int SHAPE_MESSAGE = 2;
  int SHAPE_QUEUES = 3;
  int SHAPE_LEASED = 4;
  int SHAPE_IDS = 5;
  int SHAPE_MESSAGES = 6;
  int SHAPE_METRICS = 7;
  /** A longer error text is cut: it is for people, and must fit any frame limit. */
  int MAX_TEXT = 1024;

  int requestId();

  /** A message as shapes 2 and 6 carry it: id, sender, receiver, queue, sent_at, body. */
  private static void putMessage(final ByteBuffer b, final Message m) {
    b.putLong(m.id()).putInt(m.sender()).putInt(m.receiver()).putInt(m.queue());
    b.putLong(m.sentAtMicros()).putInt(m.body().length).put(m.body());
  }

  /** OK, but for the kinds that say otherwise: Empty, NotLeased and Failure. */
  default Status status() {
    return Status.OK;
  }

  /** Bytes of the result after the status byte. */
  int resultBytes();

  void writeResult(ByteBuffer b);

  /** Done, with nothing to return (create or delete a client, delete a queue). */
  record Done(int requestId) implements Reply {
    @Override
    public int resultBytes() {
      return 1;
    }

    @Override
    public void writeResult(final ByteBuffer b) {
      b.put((byte) SHAPE_NONE);
    }
  }

  /** The id the database gave: a new queue's, or a sent message's. */
  record Created(int requestId, long id) implements Reply {
    @Override
    public int resultBytes() {
      return 1 + 8;
    }

    @Override
    public void writeResult(final ByteBuffer b) {
      b.put((byte) SHAPE_ID).putLong(id);
    }
  }

  /** The message a peek read or a pop removed. */
  record Delivered(int requestId, Message message) implements Reply {
    @Override
    public int resultBytes() {
      return 1 + 8 + 4 + 4 + 4 + 8 + 4 + message.body().length;
    }

    @Override
    public void writeResult(final ByteBuffer b) {
      putMessage(b.put((byte) SHAPE_MESSAGE), message);
    }
  }

  /** A peek, pop or read found no message. */
  record Empty(int requestId) implements Reply {
    @Override
    public Status status() {
      return Status.EMPTY;
    }

    @Override
    public int resultBytes() {
      return 0;
    }

    @Override
    public void writeResult(final ByteBuffer b) {}
  }

  /** The queues holding messages for the client, in id order. */
  record Queues(int requestId, int[] queues) implements Reply {
    @Override
    public int resultBytes() {
      return 1 + 4 + 4 * queues.length;
    }

    @Override
    public void writeResult(final ByteBuffer b) {
      b.put((byte) SHAPE_QUEUES).putInt(queues.length);
      for (final int q : queues) {
        b.putInt(q);
      }
    }
  }

  /** An error, with a text for people (UTF-8, cut to {@link #MAX_TEXT} bytes). */
  record Failure(int requestId, Status status, String text) implements Reply {
    public Failure {
      if (!status.isError()) {
        throw new IllegalArgumentException("not an error status: " + status);
      }
    }

    private byte[] bytes() {
      final byte[] all = text.getBytes(StandardCharsets.UTF_8);
      if (all.length <= MAX_TEXT) {
        return all;
      }
      final byte[] cut = new byte[MAX_TEXT];
      System.arraycopy(all, 0, cut, 0, MAX_TEXT);
      return cut;
    }

    @Override
    public int resultBytes() {
      return 2 + bytes().length;
    }

    @Override
    public void writeResult(final ByteBuffer b) {
      final byte[] t = bytes();
      b.putShort((short) t.length).put(t);
    }
  }

  /** The messages a read leased, in id order (at least one), each with its delivery count. */
  record Leased(int requestId, List<LeasedMessage> messages) implements Reply {
    public Leased {
      messages = List.copyOf(messages);
    }

    @Override
    public int resultBytes() {
      int n = 1 + 4;
      for (final LeasedMessage m : messages) {
        n += 8 + 4 + 4 + 4 + 8 + 4 + 4 + m.message().body().length;
      }
      return n;
    }

    @Override
    public void writeResult(final ByteBuffer b) {
      b.put((byte) SHAPE_LEASED).putInt(messages.size());
      for (final LeasedMessage l : messages) {
        final Message m = l.message();
        b.putLong(m.id()).putInt(m.sender()).putInt(m.receiver()).putInt(m.queue());
        b.putLong(m.sentAtMicros()).putInt(l.deliveries()).putInt(m.body().length);
        b.put(m.body());
      }
    }
  }

  /** Message ids: a batch's sends, in order, or the messages a batch ack ended the leases of. */
  record Ids(int requestId, long[] ids) implements Reply {
    @Override
    public int resultBytes() {
      return 1 + 4 + 8 * ids.length;
    }

    @Override
    public void writeResult(final ByteBuffer b) {
      b.put((byte) SHAPE_IDS).putInt(ids.length);
      for (final long id : ids) {
        b.putLong(id);
      }
    }

    @Override
    public boolean equals(final Object o) {
      return o instanceof Ids x && x.requestId == requestId && java.util.Arrays.equals(x.ids, ids);
    }

    @Override
    public int hashCode() {
      return 31 * requestId + java.util.Arrays.hashCode(ids);
    }

    @Override
    public String toString() {
      return "Ids[" + requestId + ", " + java.util.Arrays.toString(ids) + "]";
    }
  }

  /** The messages a batch pop removed, in id order (at least one). */
  record Popped(int requestId, List<Message> messages) implements Reply {
    public Popped {
      messages = List.copyOf(messages);
    }

    @Override
    public int resultBytes() {
      int n = 1 + 4;
      for (final Message m : messages) {
        n += 8 + 4 + 4 + 4 + 8 + 4 + m.body().length;
      }
      return n;
    }

    @Override
    public void writeResult(final ByteBuffer b) {
      b.put((byte) SHAPE_MESSAGES).putInt(messages.size());
      for (final Message m : messages) {
        putMessage(b, m);
      }
    }
  }

  /**
   * A queue's messages: visible (waiting), leased, dead-lettered, and the age of the oldest
   * visible one in ms by its sender's clock (-1: none waits).
   */
  record Metrics(int requestId, long visible, long leased, long dead, long oldestAgeMs)
      implements Reply {
    @Override
    public int resultBytes() {
      return 1 + 4 * 8;
    }

    @Override
    public void writeResult(final ByteBuffer b) {
      b.put((byte) SHAPE_METRICS).putLong(visible).putLong(leased).putLong(dead)
          .putLong(oldestAgeMs);
    }
  }

  /** An ack or nack found no leased message of that id (not an error). */
  record NotLeased(int requestId) implements Reply {
    @Override
    public Status status() {
      return Status.NOT_LEASED;
    }

    @Override
    public int resultBytes() {
      return 0;
    }

    @Override
    public void writeResult(final ByteBuffer b) {}
  }
}
