package org.mwlab.simplemq.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.mwlab.simplemq.protocol.LeasedMessage;
import org.mwlab.simplemq.protocol.Op;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;

/**
 * A test-only fault hook that holds the window between a delivery's commit and its reply
 * open: after {@code after} committed deliveries (pops and reads that returned messages) have
 * been answered, a worker whose pop or read has committed appends the message ids to the
 * journal (one line per request), forces it to disk, and waits, never replying, until the
 * process is killed. A soak then kills the middleware inside that window: a held pop's
 * message is lost (at-most-once), and matched by id to the journal; a held read's messages
 * stay leased in the database and come back once their visibility timeout passed; a held
 * idempotent send ({@code send:<id>}) stored its message, and its client's resend answers
 * that id. One line per held worker.
 */
final class CommitHold {

  private final long after;
  private final Path journal;
  private final AtomicLong committed = new AtomicLong();

  CommitHold(final long after, final Path journal) {
    this.after = after;
    this.journal = journal;
  }

  /** Called between a request's commit and its reply; returns at once unless it holds. */
  void afterCommit(final Request request, final Reply reply) throws InterruptedException {
    final String tokens = tokens(request, reply);
    if (tokens == null || committed.incrementAndGet() <= after) {
      return;
    }
    hold(tokens + "\n");
  }

  /**
   * Called between a group's commit and its replies: holds the whole group (no reply of it is
   * written) once one of its deliveries passes the count, journalling every delivery of it on
   * one line (a soak counts held workers by lines), so that each message the group removed and
   * never answered is matched by id.
   */
  void afterGroupCommit(final List<Request> requests, final List<Reply> replies)
      throws InterruptedException {
    final StringBuilder line = new StringBuilder();
    boolean holds = false;
    for (int i = 0; i < requests.size(); i++) {
      final String tokens = tokens(requests.get(i), replies.get(i));
      if (tokens != null) {
        line.append(line.isEmpty() ? "" : " ").append(tokens);
        holds |= committed.incrementAndGet() > after;
      }
    }
    if (holds) {
      hold(line.append('\n').toString());
    }
  }

  /**
   * The journal's tokens of a committed delivery, apart by spaces: a popped or read message's
   * id, and {@code send:<id>} for an idempotent send; null for other requests.
   */
  private static String tokens(final Request request, final Reply reply) {
    final Op op = request.op();
    if ((op == Op.POP_QUEUE || op == Op.POP_FROM_SENDER)
        && reply instanceof Reply.Delivered delivered) {
      return Long.toString(delivered.message().id());
    } else if (op == Op.SEND_ONCE && reply instanceof Reply.Created created) {
      // An idempotent send stored and never acknowledged: its client sends it again.
      return "send:" + created.id();
    } else if (op == Op.READ && reply instanceof Reply.Leased leased) {
      final StringBuilder b = new StringBuilder();
      for (final LeasedMessage m : leased.messages()) {
        b.append(b.isEmpty() ? "" : " ").append(m.message().id());
      }
      return b.toString();
    }
    return null;
  }

  private void hold(final String line) throws InterruptedException {
    synchronized (this) {
      try {
        Files.writeString(journal, line, StandardCharsets.US_ASCII, StandardOpenOption.CREATE,
            StandardOpenOption.APPEND, StandardOpenOption.WRITE, StandardOpenOption.SYNC);
      } catch (final IOException e) {
        throw new IllegalStateException("commit hold: cannot write " + journal, e);
      }
    }
    // The reply is never written: the pop's row is removed, the read's leased, and committed;
    // its client waits.
    Thread.sleep(Long.MAX_VALUE);
  }
}
