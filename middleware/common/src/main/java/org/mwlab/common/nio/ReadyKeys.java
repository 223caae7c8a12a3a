package org.mwlab.common.nio;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Iterator;
import java.util.function.BooleanSupplier;

/**
 * The keys a server's selector chose, handled alike by the project's server threads: the
 * listening socket's key accepts, a connection's key goes to a handler with its attachment, a
 * cancelled key is skipped. Each key leaves the selected set before it is handled. Built once per
 * thread, not per round.
 *
 * @param selector the thread's selector
 * @param attachment the class of the connections' attachments
 * @param more checked before each key: the thread may stop between two keys, leaving the others
 *     selected
 * @param acceptor accepts on the listening socket
 * @param handler serves a connection's ready key
 * @param <C> the attachment of the connections' keys
 * @param <X> what the handler throws besides {@link IOException}
 */
public record ReadyKeys<C, X extends Exception>(
    Selector selector,
    Class<C> attachment,
    BooleanSupplier more,
    ReadyKeys.Acceptor acceptor,
    ReadyKeys.Handler<C, X> handler) {

  /** Accepts the pending connections of the listening socket. */
  @FunctionalInterface
  public interface Acceptor {
    void accept() throws IOException;
  }

  /** Serves a connection whose key is ready; {@code connection} is the key's attachment. */
  @FunctionalInterface
  public interface Handler<C, X extends Exception> {
    void ready(SelectionKey key, C connection) throws IOException, X;
  }

  /** Handles the keys the last select chose. */
  public void handle() throws IOException, X {
    final Iterator<SelectionKey> it = selector.selectedKeys().iterator();
    while (it.hasNext() && more.getAsBoolean()) {
      final SelectionKey key = it.next();
      it.remove();
      if (!key.isValid()) {
        continue;
      }
      if (key.isAcceptable()) {
        acceptor.accept();
      } else {
        handler.ready(key, attachment.cast(key.attachment()));
      }
    }
  }
}
