package org.mwlab.simplemq.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;
import org.mwlab.simplemq.protocol.Op;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;

/**
 * A test-only fault hook that holds the at-most-once pop's window open: after {@code after}
 * committed pops have been answered, a worker whose pop has committed (the row is gone)
 * appends the message's id to the journal, forces it to disk, and waits, never replying, until
 * the process is killed. A soak then kills the middleware inside the window between commit
 * and reply, and matches every lost message by id to the journal.
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
    final Op op = request.op();
    if (op != Op.POP_QUEUE && op != Op.POP_FROM_SENDER
        || !(reply instanceof Reply.Delivered delivered)) {
      return;
    }
    if (committed.incrementAndGet() <= after) {
      return;
    }
    final String line = delivered.message().id() + "\n";
    synchronized (this) {
      try {
        Files.writeString(journal, line, StandardCharsets.US_ASCII, StandardOpenOption.CREATE,
            StandardOpenOption.APPEND, StandardOpenOption.WRITE, StandardOpenOption.SYNC);
      } catch (final IOException e) {
        throw new IllegalStateException("commit hold: cannot write " + journal, e);
      }
    }
    // The reply is never written: the row is removed and committed, its client waits.
    Thread.sleep(Long.MAX_VALUE);
  }
}
