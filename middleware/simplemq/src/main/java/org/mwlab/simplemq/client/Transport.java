package org.mwlab.simplemq.client;

import java.io.IOException;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;

/** How a client reaches SimpleMQ: a middleware over TCP, or the database itself. */
public interface Transport extends AutoCloseable {

  /** Sends one request and waits for its reply. */
  Reply call(Request request) throws IOException;

  @Override
  void close() throws IOException;
}
