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
 * idempotent send ({@code send <id>}) stored its message, and its client's resend answers
 * that id.
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
    final String line = line(request, reply);
    if (line == null || committed.incrementAndGet() <= after) {
      return;
    }
    hold(line);
  }

  /**
   * Called between a group's commit and its replies: holds the whole group (no reply of it is
   * written) once one of its deliveries passes the count, journalling every delivery of it, so
   * that each message the group removed and never answered is matched by id.
   */
  void afterGroupCommit(final List<Request> requests, final List<Reply> replies)
      throws InterruptedException {
    final StringBuilder lines = new StringBuilder();
    boolean holds = false;
    for (int i = 0; i < requests.size(); i++) {
      final String line = line(requests.get(i), replies.get(i));
      if (line != null) {
        lines.append(line);
        holds |= committed.incrementAndGet() > after;
      }
    }
    if (holds) {
      hold(lines.toString());
    }
  }

  /** The journal line of a committed delivery (or idempotent send); null for other requests. */
  private static String line(final Request request, final Reply reply) {
    final Op op = request.op();
    final String line;
    if ((op == Op.POP_QUEUE || op == Op.POP_FROM_SENDER)
        && reply instanceof Reply.Delivered delivered) {
      line = delivered.message().id() + "\n";
    } else if (op == Op.SEND_ONCE && reply instanceof Reply.Created created) {
      // An idempotent send stored and never acknowledged: its client sends it again.
      line = "send " + created.id() + "\n";
    } else if (op == Op.READ && reply instanceof Reply.Leased leased) {
      // One line per held read, its messages' ids apart by spaces: a soak counts held workers
      // by lines.
      final StringBuilder b = new StringBuilder();
      for (final LeasedMessage m : leased.messages()) {
        b.append(b.isEmpty() ? "" : " ").append(m.message().id());
      }
      line = b.append('\n').toString();
    } else {
      return null;
    }
    return line;
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
